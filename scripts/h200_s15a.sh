#!/usr/bin/env bash
# Session 15, call A (carry .whl; ~9 minutes): the direct decode kernels' L2 prefetch ahead of their register ring
# (HUMMING_DIRECT_PREFETCH = distance in atoms of a warp's sequence; _BULK: one cp.async.bulk.prefetch.L2 per warp
# instead of one prefetch.global.L2 per lane and tile), int4 g128 at M = 1 / 16 on the three bench shapes, with the
# defaults and their neighbours; then int3 / MXFP4 / int8 at M = 1 with and without it (their wide / long layers run
# the cp.async kernel today).
. scripts/h200_setup.sh
call_results a
M1=bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s3_direct,bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma
M16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma
I4=w:uint4b8,s:g128:bfloat16
run_pf() {  # NAME DEFINES DESC MS CHOICES
  echo "## $1: HUMMING_DEBUG_DEFINES=$2"
  HUMMING_DEBUG_DEFINES="$2" SWEEP_TIMEOUT=100 sweep_case "$1" "$3" "$4" "$SH" "$5"
}
run_pf i4_pf0 "" $I4 1,16 $M1,$M16
run_pf i4_pf8b "HUMMING_DIRECT_PREFETCH=8,HUMMING_DIRECT_PREFETCH_BULK" $I4 1,16 $M1,$M16
run_pf i4_pf8 "HUMMING_DIRECT_PREFETCH=8" $I4 1,16 $M1,$M16
run_pf i4_pf16b "HUMMING_DIRECT_PREFETCH=16,HUMMING_DIRECT_PREFETCH_BULK" $I4 1,16 $M1,$M16
run_pf i4_pf4b "HUMMING_DIRECT_PREFETCH=4,HUMMING_DIRECT_PREFETCH_BULK" $I4 1,16 $M1,$M16
run_pf i4_pf32b "HUMMING_DIRECT_PREFETCH=32,HUMMING_DIRECT_PREFETCH_BULK" $I4 1,16 $M1,$M16
run_pf i4_pf16 "HUMMING_DIRECT_PREFETCH=16" $I4 1,16 $M1,$M16
run_pf i3_pf0 "" w:uint3b4,s:g128:bfloat16 1 $M1
run_pf i3_pf16b "HUMMING_DIRECT_PREFETCH=16,HUMMING_DIRECT_PREFETCH_BULK" w:uint3b4,s:g128:bfloat16 1 $M1
run_pf mx_pf0 "" mxfp4 1 $M1
run_pf mx_pf16b "HUMMING_DIRECT_PREFETCH=16,HUMMING_DIRECT_PREFETCH_BULK" mxfp4 1 $M1
