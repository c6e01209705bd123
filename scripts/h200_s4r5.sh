#!/usr/bin/env bash
# Session 4, device call 5: split-K reduction with batched float4 loads -- GEMM suites, then the sweeps again.
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py -k "not bulk" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/gpu_tests.log" | tail -6
export HUMMING_PREFILL_M=1000000
step 150 python3 -m vllm_humming.tuning.sweep --ms 1,16,64 --json "$OUT/sweep_small.json" --choices \
bt8_wn4_tm2_wk1_ak1_s4,bt16_wn8_tm1_wk2_ak2_s4,bt16_wn8_tm1_wk1_ak1_s8_wgmma,bt16_wn4_tm1_wk1_ak1_s8_wgmma,\
bt64_wn8_tm1_wk2_ak2_s4,bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn4_tm1_wk1_ak1_s8_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma \
  >"$OUT/sweep_small.log" 2>&1; grep -A4 "M=" "$OUT/sweep_small.log" | cut -c1-160
step 150 python3 -m vllm_humming.tuning.sweep --ms 256,1024 --json "$OUT/sweep_large.json" --choices \
bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma,bt64_wn4_tm1_wk1_ak1_s8_wgmma \
  >"$OUT/sweep_large.log" 2>&1; grep -A3 "M=" "$OUT/sweep_large.log" | cut -c1-160
