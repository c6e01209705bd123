#!/usr/bin/env bash
# Session 3, round 5 (device tool): the rolled main loop for wide token tiles -- correctness, compile times, M=16/64.
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py -x \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 90 python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" >"$OUT/compile.log" 2>&1; tail -3 "$OUT/compile.log"
step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16,64,256 --cold none --json "$OUT/bench_int4_m64.json" \
  >"$OUT/bench_int4_m64.log" 2>&1; grep -A5 "^Summary" "$OUT/bench_int4_m64.log"
