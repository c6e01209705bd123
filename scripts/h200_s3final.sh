#!/usr/bin/env bash
# Session 3 final numbers (device tool): GEMM GPU tests, bench vs cuBLAS + upstream.  carry: .whl
. scripts/h200_setup.sh
step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A5 "^Summary" "$OUT/bench_int4.log"
step 120 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64,1024 \
  --cold none --json "$OUT/bench_more.json" >"$OUT/bench_more.log" 2>&1; grep -A8 "^Summary" "$OUT/bench_more.log"
step 120 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py -x \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
