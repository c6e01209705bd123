#!/usr/bin/env bash
# Session 4, final device call C (carry .whl): the wgmma epilogue staged through shared memory (smaller kernels) --
# wgmma GPU tests and the int4 bench at M = 64 / 256.
. scripts/h200_setup.sh
step 100 python3 -m pytest -q -x -m gpu tests/test_gemm_pipelines_gpu.py -k "wgmma" >"$OUT/wgmma_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/wgmma_tests.log" | tail -4
step 80 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 64,256 --cold ours --no-eager --json "$OUT/bench_int4_m64_m256.json" \
  >"$OUT/bench_int4_m64_m256.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_int4_m64_m256.log"; grep -E "ours|cold" "$OUT/bench_int4_m64_m256.log" | head -10
