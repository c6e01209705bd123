#!/usr/bin/env bash
# Session 53's second call.  On an H200: the bench of record first (sessions 48-52's defaults have not been through
# it).  Then, on any card, where the narrow layers' time goes at 16 and 64 tokens on today's kernels (session 14's
# decomposition is 40 sessions old): the plan's own choice with parts removed by experiment macros (timing only,
# wrong results) -- no cross-block split-K sum, no dequant, no MMAs, no weight / x copies in the main loop, no math.
. scripts/h200_setup.sh
call_results b
grep -q H200 "$OUT/device.txt" && int4_record 240
export SWEEP_TIMEOUT=45
M64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
# (256-row tiles: every x stage feeds twice the weight rows -- at 64 tokens a stage's x (16 KB) is twice its weights)
M64T2=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma
M16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
for d in none HUMMING_DEBUG_SPLITK_SKIP HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA HUMMING_SKIP_MATH \
         HUMMING_DEBUG_SKIP_W_COPY HUMMING_DEBUG_SKIP_X_COPY HUMMING_DEBUG_SPLITK_SKIP,HUMMING_SKIP_MATH; do
  defs=$d; [ "$d" = none ] && defs=""
  echo "## $d"
  c=$M64; [ "$d" = none ] && c=$M64,$M64T2,bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma
  HUMMING_DEBUG_DEFINES=$defs sweep_case "m64_$d" $I4 64 6144x4096,4096x14336 $c
done
for d in none HUMMING_DEBUG_SPLITK_SKIP HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA; do
  defs=$d; [ "$d" = none ] && defs=""
  echo "## $d"
  HUMMING_DEBUG_DEFINES=$defs sweep_case "m16_$d" $I4 16 6144x4096,4096x14336 $M16
done
