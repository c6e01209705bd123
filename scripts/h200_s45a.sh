#!/usr/bin/env bash
# Session 45, call A (carry .whl).  Does an H100 with 40 SMs held idle (tuning.sm_reserve: 92 SMs left, each under an
# H200's per-SM HBM load) reproduce the H200's M=16 / M=1 ratios?  If so, M=16 work can be measured on H100s.
#   1. the reservation itself: an 8192^3 matmul and a 256 MB copy at 0 / 40 / 66 SMs held
#   2. calibration: the plans at M = 1 / 16 on the three bench shapes, 0 and 40 SMs held (H200, session 41:
#      M=1 5.15 / 17.51 / 10.77, M=16 9.08 / 26.55 / 15.17 us)
#   3. the 16-token candidates (register rings 2-4, mma.sync, bulk smem rings, step groups) at 40 held, then at 0
# On an H200 the same steps run without the reservation first, after the int4 bench of record.
. scripts/h200_setup.sh
call_results a
V16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s3_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak1_s8_bulk_wgmma
SG=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s6_direct_wgmma
if grep -q H200 "$OUT/device.txt"; then
  int4_record 200
  export SWEEP_TIMEOUT=200
  sweep_case h200_v16 $I4 16 $SH $V16
  HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_STEP_GROUPS sweep_case h200_sg $I4 16 $SH $SG
  step 60 python3 scripts/exp_sm_reserve.py 0,40 2>&1 | tee $R/exp_sm_reserve.log
  sweep_case cal40 $I4 1,16 $SH "" --max-cands 0 --reserve-sms 40
  exit 0
fi
step 90 python3 scripts/exp_sm_reserve.py 0,40,66 2>&1 | tee $R/exp_sm_reserve.log; pack
sweep_case cal0 $I4 1,16 $SH "" --max-cands 0
sweep_case cal40 $I4 1,16 $SH "" --max-cands 0 --reserve-sms 40
export SWEEP_TIMEOUT=200
sweep_case v16_r40 $I4 16 $SH $V16 --reserve-sms 40
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_STEP_GROUPS sweep_case sg_r40 $I4 16 $SH $SG --reserve-sms 40
sweep_case v16_r0 $I4 16 $SH $V16
