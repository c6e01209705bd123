#!/usr/bin/env bash
# Session 44, call C (any sm_90a card; carry .whl): where the warp-specialized bulk kernel's time goes at 16 tokens
# (call A: it ties the direct decode on the wide layer at best).  The same candidates with the math removed
# (HUMMING_SKIP_MATH: the producer's pipeline alone), without the dequant, without the MMAs (timing only).
. scripts/h200_setup.sh
call_results c
CB=bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak1_s8_bulk_wgmma
for d in none HUMMING_SKIP_MATH HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA; do
  HUMMING_DEBUG_DEFINES=$([ $d = none ] || echo $d) SWEEP_TIMEOUT=120 sweep_case "bulk_$d" $I4 16 6144x4096,28672x4096 $CB
done
