#!/usr/bin/env bash
# Session 44, call F (any sm_90a card; carry .whl): the bulk (warp-specialized) kernel at 16 tokens with more math
# warpgroups per SM.  Call C: its pipeline alone (HUMMING_SKIP_MATH) streams the wide layer in 24.6 us, with the
# MMAs but no dequant 24.7, in full 27.5 -- the dequant of two math warpgroups is not hidden.  Three / four math
# warpgroups (wn12 / wn16), full math and pipeline alone.
. scripts/h200_setup.sh
call_results f
C=bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn16_tm1_wk1_ak2_s6_tma_bulk_wgmma
C=$C,bt16_wn12_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn16_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
for d in none HUMMING_SKIP_MATH; do
  HUMMING_DEBUG_DEFINES=$([ $d = none ] || echo $d) SWEEP_TIMEOUT=150 sweep_case "wg_$d" $I4 16 $SH $C
done
