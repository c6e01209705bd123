#!/usr/bin/env bash
# Session 9, call D: the remaining GPU suites on the final tree (ops / JIT / weight expansion / prefill bands and the
# direct kernel's own tests), then sweeps of the new direct choices for the formats whose defaults did not move
# (int3 / MXFP4 at M <= 8, int3 / int8 at M = 9-16) -- leads for the next session, no heuristic change.
. scripts/h200_setup.sh
call_results d
step 90 python3 -m pytest -q -m gpu tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py -k "not overhead" >$R/gpu_tests_other.log 2>&1; grep -E "^FAILED|passed|failed" $R/gpu_tests_other.log | tail -3; pack
step 240 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py >$R/gpu_tests_direct.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_direct.log | tail -3; pack
export HUMMING_PREFILL_M=1000000
sw() {  # NAME MS CHOICES DESC
  step 45 python3 -m vllm_humming.tuning.sweep --desc "$4" --ms "$2" --choices "$3" --top 6 >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-110; pack
}
sw int3_m1 1 bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma w:uint3b4,s:g128:bfloat16
sw mxfp4_m1 1 bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma w:float4_e2m1,s:g32:float8_e8m0fnu
sw int3_m16 16 bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma w:uint3b4,s:g128:bfloat16
sw int8_m16 16 bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma w:uint8b128,s:channel:bfloat16
