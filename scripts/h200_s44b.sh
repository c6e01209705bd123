#!/usr/bin/env bash
# Session 44, call B (any sm_90a card; carry .whl): what staging the range's x costs the 16-token wgmma decode.
# Every block copies its whole K range of x (16 rows) before its first MMA -- on the wide layer 224 blocks x 64 KB =
# 14 MB from L2 at the kernel's start, while only the 2-atom register ring streams weights.  The sweep times the
# plan's choices with and without that copy (HUMMING_DEBUG_WG_NO_XCOPY: timing only, wrong results), and with
# neither the copy nor the dequant.
. scripts/h200_setup.sh
call_results b
C16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
for d in none HUMMING_DEBUG_WG_NO_XCOPY HUMMING_DEBUG_WG_NO_XCOPY,HUMMING_DEBUG_WG_SKIP_DEQUANT; do
  HUMMING_DEBUG_DEFINES=$([ $d = none ] || echo $d) SWEEP_TIMEOUT=120 sweep_case "x_${d//,/_}" $I4 8,16 $SH $C16
done
