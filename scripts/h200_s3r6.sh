#!/usr/bin/env bash
# Session 3, round 6 (device tool): integer zeros subtracted in the operand for 16-token tiles (no sum(x) MMAs) --
# correctness first, then the bench at M = 1 / 16, then the same trick forced at M = 1.
. scripts/h200_setup.sh
step 110 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "formats_small or fp16 or graph" -x \
  >"$OUT/gpu_tests_a.log" 2>&1; grep -E "^FAILED|passed|failed|rror" "$OUT/gpu_tests_a.log" | tail -4
step 60 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode16 or direct_formats or cp_async_forced" -x \
  >"$OUT/gpu_tests_b.log" 2>&1; grep -E "^FAILED|passed|failed|rror" "$OUT/gpu_tests_b.log" | tail -4
step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --cold none --no-eager \
  --json "$OUT/bench_int4_m16.json" >"$OUT/bench_int4_m16.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_int4_m16.log"

