#!/usr/bin/env bash
# Session 4, device call 4: wgmma with register budgets for 2+ blocks per SM, deeper rings, and split-K at any M when
# the tiles do not fill the GPU.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
step 120 python3 -m pytest -q -x -m gpu tests/test_gemm_pipelines_gpu.py -k "wgmma_int4" >"$OUT/wgmma_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/wgmma_tests.log" | tail -4
step 200 python3 -m vllm_humming.tuning.sweep --ms 16,64 --json "$OUT/sweep_wg_small.json" --choices \
bt16_wn8_tm1_wk2_ak2_s4,bt16_wn4_tm1_wk1_ak1_s8_wgmma,bt16_wn8_tm1_wk1_ak1_s8_wgmma,bt16_wn4_tm2_wk1_ak1_s8_wgmma,bt16_wn4_tm1_wk1_ak1_s12_wgmma,\
bt64_wn8_tm1_wk2_ak2_s4,bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s8_wgmma,bt64_wn4_tm1_wk1_ak1_s8_wgmma,bt64_wn4_tm2_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma \
  >"$OUT/sweep_wg_small.log" 2>&1; grep -A4 "M=" "$OUT/sweep_wg_small.log" | cut -c1-200
step 220 python3 -m vllm_humming.tuning.sweep --ms 256,1024 --json "$OUT/sweep_wg_large.json" --choices \
bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt128_wn4_tm2_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma \
  >"$OUT/sweep_wg_large.log" 2>&1; grep -A3 "M=" "$OUT/sweep_wg_large.log" | cut -c1-200
