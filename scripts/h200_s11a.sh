#!/usr/bin/env bash
# Session 11, call A (carry .whl): where the M=1 direct kernel loses to a raw weight stream -- ring depth (atoms in
# flight per warp) x forced K splits x block shape, with and without math (HUMMING_SKIP_MATH); then the GPU tests owed
# by session 10 (scripts/h200_next.sh's list).
. scripts/h200_setup.sh
call_results a
export HUMMING_PREFILL_M=1000000
W="bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s8_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s16_direct_wgmma"
W="$W,bt8_wn4_tm1_wk1_ak256_s8_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s16_direct_wgmma"
S="bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s8_direct,bt8_wn4_tm1_wk1_ak256_s8_direct"
S="$S,bt8_wn4_tm1_wk1_ak256_s16_direct,bt8_wn2_tm2_wk1_ak256_s8_direct"
step 200 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms 1 --choices "$W,$S" --splits 1,2,4,8,16 \
  --top 14 --json $R/sweep_m1.json >$R/sweep_m1.txt 2>&1
grep -E "cublas|^      " $R/sweep_m1.txt | sed 's/^      /  /' | cut -c1-110; pack
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH step 100 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms 1 \
  --choices "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s16_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm1_wk1_ak256_s16_direct" \
  --splits 1,2,4,8 --top 8 >$R/sweep_m1_nomath.txt 2>&1
grep -E "cublas|^      " $R/sweep_m1_nomath.txt | sed 's/^      /  /' | cut -c1-110; pack
step 240 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "narrow_default or bulk_wgmma or stream_k or decode16_wgmma" \
  >$R/tests.log 2>&1; grep -E "^FAILED|passed|failed" $R/tests.log | tail -6; pack
