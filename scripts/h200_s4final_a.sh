#!/usr/bin/env bash
# Session 4, final device call A (carry .whl): GEMM GPU suites at HEAD, then the full int4 bench (all M, cold compile,
# eager) -- the wgmma kernels for M >= 33 on sm_90a and the new split-K reduction.
. scripts/h200_setup.sh
step 230 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py -k "not bulk and not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/gpu_tests.log" | tail -8
step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A5 "^Summary" "$OUT/bench_int4.log"; grep -iE "cold|eager" "$OUT/bench_int4.log" | head -8
