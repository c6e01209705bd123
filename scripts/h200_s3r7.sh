#!/usr/bin/env bash
# Session 3, round 7 (device tool): zeros in the operand at every decode tile -- correctness, bench M = 1 / 16.
. scripts/h200_setup.sh
step 60 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "formats_small or graph" -x \
  >"$OUT/gpu_tests_a.log" 2>&1; grep -E "^FAILED|passed|failed|rror" "$OUT/gpu_tests_a.log" | tail -4
step 40 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --cold none --no-eager \
  --json "$OUT/bench_int4_m1_m16.json" >"$OUT/bench_int4_m1_m16.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_int4_m1_m16.log"
step 30 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode16 and uint4" -x \
  >"$OUT/gpu_tests_b.log" 2>&1; grep -E "^FAILED|passed|failed|rror" "$OUT/gpu_tests_b.log" | tail -4
