#!/usr/bin/env bash
# Session 45, call B (carry .whl): call A's SM reservation ran everything ~5.5x slow (pinned host flag + __nanosleep).
# 1. the reservation again -- device flag, busy spin (sleep 0) vs __nanosleep (2000) -- with the SM clock logged by
#    nvidia-smi every 50 ms; if the busy spin behaves (matmul ~1.4x at 40 held), 2. call A's calibration and the
#    16-token candidates at 40 SMs held (h200_s45a.sh's steps).
. scripts/h200_setup.sh
call_results b
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu,power.draw --format=csv -lms 50 > $R/clocks.csv 2>&1 &
SMI=$!
step 120 python3 scripts/exp_sm_reserve.py 0,40,66 2>&1 | tee $R/exp_sm_reserve.log; ok=${PIPESTATUS[0]}
kill $SMI; awk -F, 'NR>1{print $2}' $R/clocks.csv | sort | uniq -c | sort -k1 -n -r | head -8 | tr '\n' ';'; echo; pack
[ "$ok" = 0 ] || { echo "reservation broken (rc $ok)"; exit 0; }
V16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s3_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak1_s8_bulk_wgmma
SG=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_c2_direct_wgmma
sweep_case cal40 $I4 1,16 $SH "" --max-cands 0 --reserve-sms 40
export SWEEP_TIMEOUT=200
sweep_case v16_r40 $I4 16 $SH $V16 --reserve-sms 40
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_STEP_GROUPS sweep_case sg_r40 $I4 16 $SH $SG --reserve-sms 40
