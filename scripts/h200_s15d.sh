#!/usr/bin/env bash
# Session 15, call D (carry .whl; ~4 minutes): two wgmma groups in flight (HUMMING_DEBUG_WG_DEPTH=2: three fragment
# buffers, the ring refilled a stage later) for the cp.async kernel's atom-wide wgmma tiles at 33-64 tokens -- call C
# showed the M=64 kernels math-bound (a deeper copy ring changed nothing with the math on).
. scripts/h200_setup.sh
call_results d
C64=bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s8_wgmma,bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s8_wgmma
for dep in 1 2; do
  for f in "i4 w:uint4b8,s:g128:bfloat16" "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4"; do
    set -- $f
    HUMMING_DEBUG_DEFINES="HUMMING_DEBUG_WG_DEPTH=$dep" SWEEP_TIMEOUT=120 sweep_case "${1}_m64_d$dep" "$2" 64 "$SH" "$C64"
  done
done
HUMMING_DEBUG_DEFINES="HUMMING_DEBUG_WG_DEPTH=2" SWEEP_TIMEOUT=120 sweep_case i4_m48_d2 w:uint4b8,s:g128:bfloat16 48 "$SH" "$C64"
SWEEP_TIMEOUT=120 sweep_case i4_m48_d1 w:uint4b8,s:g128:bfloat16 48 "$SH" "$C64"
