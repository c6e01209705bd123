#!/usr/bin/env bash
# Session 48, call A.  Any card: the GPU tests whose expectations session 47 changed (the wide 9-16-token bulk default)
# and the fp32-reference check of the one-token candidates below at M = 1..8 (the plan's x16 twin at M <= 2).  On an
# H200 only: the candidates timed at M = 1 / 2 / 4 / 8 -- (a) the 224-row mma.sync decode with K splits on layers of
# 8192-14336 rows, K=4096 (session 47, M=1 only: 14336x4096 12.3 vs the plan's wgmma decode 15.8, 12288x4096 11.7 vs
# 12.3), (b) its shared-memory weight ring `_pfr64` on the wide layers (28672x4096 M=1 16.6 vs 17.5) -- then the
# broad 16-token sweep session 47 did not run (scripts/h200_s47b.sh's first three cases).
. scripts/h200_setup.sh
call_results a
step 240 python3 -m pytest -q -n 4 --dist load -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py \
  -k "decode_bulk or wide_cluster" > $R/tests.log 2>&1
grep -E "FAILED|passed|failed" $R/tests.log | tail -8; pack
MID=8192x4096,10240x4096,12288x4096,14336x4096
WIDE=28672x4096,16384x4096,20480x5120
step 120 python3 scripts/check_choice.py $I4 bt8_wn14_tm1_wk2_ak256_s4_direct $MID 1,2,3,4,8 > $R/check_mid.log 2>&1
tail -3 $R/check_mid.log; grep -c "^OK" $R/check_mid.log; grep "^BAD" $R/check_mid.log | head
step 120 python3 scripts/check_choice.py $I4 bt8_wn14_tm1_wk2_ak256_s4_pfr64_direct $WIDE 1,2,3,4,8 > $R/check_wide.log 2>&1
tail -3 $R/check_wide.log; grep -c "^OK" $R/check_wide.log; grep "^BAD" $R/check_wide.log | head; pack
grep -q H200 "$OUT/device.txt" || { echo "not an H200: no timings"; exit 0; }
export SWEEP_TIMEOUT=120
sweep_case m12_mid $I4 1,2 $MID bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn4_tm2_wk2_ak256_s4_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
sweep_case m48_mid $I4 4,8 $MID bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
sweep_case m12_wide $I4 1,2 $WIDE bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr48_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_x16_direct
sweep_case m48_wide $I4 4,8 $WIDE bt8_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct
sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
sweep_case m16_wide $I4 12,16 28672x4096 bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt16_wn16_tm2_wk1_ak256_s2_c2_direct_wgmma
sweep_case m16_long $I4 12,16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s4_pfr64_direct,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
