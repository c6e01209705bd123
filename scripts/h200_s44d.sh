#!/usr/bin/env bash
# Session 44, call D (any sm_90a card; carry .whl): the 16-token wgmma decode's registers go mostly to its
# dequantized fragment double buffer (2 x 4 k16 steps x 2 tiles x 4 = 64 of 128), not to weights in flight (a 2-atom
# ring = 16).  One MMA group per k16 step (HUMMING_DEBUG_WG_STEP_GROUPS: two single-step buffers) frees ~50 registers:
# tm2 s4 fits 104, s2 74.  Sweep deeper rings with and without it.
. scripts/h200_setup.sh
call_results d
C=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s3_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_direct_wgmma
C=$C,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s8_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_c2_direct_wgmma
C=$C,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma
for d in none HUMMING_DEBUG_WG_STEP_GROUPS; do
  HUMMING_DEBUG_DEFINES=$([ $d = none ] || echo $d) SWEEP_TIMEOUT=150 sweep_case "ring_$d" $I4 16 $SH $C
done
