#!/usr/bin/env bash
# Session 48, call B (an H200 only: on any other card it exits at once).  Call A (H100) passed the GPU tests of the
# wide bulk default and checked the candidates' bf16 kernels at M = 1..8; here their x16 twins (what the plan
# launches at 1-2 tokens) against the fp32 reference, then h200_s48a.sh's H200 timings.
. scripts/h200_setup.sh
# (S48_ANY_CARD=1, scripts/h200_s48c.sh: the one-token part on any card, results in c/, no 16-token sweep)
if [ -n "${S48_ANY_CARD:-}" ]; then call_results c; else call_results b; fi
grep -q H200 "$OUT/device.txt" || [ -n "${S48_ANY_CARD:-}" ] || { echo "not an H200: nothing to do"; exit 0; }
MID=8192x4096,10240x4096,12288x4096,14336x4096
WIDE=28672x4096,16384x4096,20480x5120
export SWEEP_TIMEOUT=120
sweep_case m12_mid $I4 1,2 $MID bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn4_tm2_wk2_ak256_s4_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
sweep_case m48_mid $I4 4,8 $MID bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
step 60 python3 scripts/check_choice.py $I4 bt8_wn14_tm1_wk2_ak256_s4_x16_direct $MID 1,2 > $R/check_mid16.log 2>&1
grep -c "^OK" $R/check_mid16.log; grep "^BAD" $R/check_mid16.log | head
step 60 python3 scripts/check_choice.py $I4 bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct $WIDE 1,2 > $R/check_wide16.log 2>&1
grep -c "^OK" $R/check_wide16.log; grep "^BAD" $R/check_wide16.log | head; pack
sweep_case m12_wide $I4 1,2 $WIDE bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr48_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_x16_direct
sweep_case m48_wide $I4 4,8 $WIDE bt8_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct
grep -q H200 "$OUT/device.txt" || exit 0   # (the 16-token ranking differs on an H100)
sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
sweep_case m16_wide $I4 12,16 28672x4096 bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt16_wn16_tm2_wk1_ak256_s2_c2_direct_wgmma
sweep_case m16_long $I4 12,16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s4_pfr64_direct,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
