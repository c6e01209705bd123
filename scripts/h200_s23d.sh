#!/usr/bin/env bash
# Session 23, call D (carry .whl, .shared_fixtures): 6144x4096 M=1 / 8 with mma.sync decode blocks of 16-48 rows and
# 4-8 K-warps (the K sum inside the block: no split-K end) against the wgmma default, bf16 and bf16 staged as fp16,
# also with one split forced; then the direct + pipeline GPU suites and the e2e fixture models on this tree (fp16
# row16 decode now the default).
. scripts/h200_setup.sh
call_results d
C=bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn1_tm1_wk8_ak256_s4_direct,bt8_wn2_tm1_wk8_ak256_s4_direct,bt8_wn3_tm1_wk8_ak256_s4_direct,bt8_wn1_tm3_wk8_ak256_s4_direct,bt8_wn3_tm1_wk4_ak256_s4_direct,bt8_wn2_tm2_wk4_ak256_s4_direct
for v in "" HUMMING_BF16_AS_FP16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=150 sweep_case "m1_6144_${v:-base}" $I4 1,8 6144x4096 $C
done
HUMMING_DEBUG_DEFINES=HUMMING_BF16_AS_FP16 HUMMING_DEBUG_SPLITS=1 SWEEP_TIMEOUT=150 sweep_case m1_6144_x16_s1 $I4 1 6144x4096 $C
step 420 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py >$R/gpu_suites.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_suites.log | tail -6; pack
e2e_fixtures; pack
