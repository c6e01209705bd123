#!/usr/bin/env bash
# Session 44, call J (any sm_90a card; carry .whl): clean bounds of the wide layer's 16-token decode
# (bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma, 28672x4096).  Session 40's bounds removed the dequant / the MMAs, which
# freed registers (128 -> ~60), so more blocks fit per SM and the bounds ran another occupancy.  Here every variant
# asks for 4 KB more shared memory per block (HUMMING_DEBUG_SMEM_PAD, unused), which holds all of them at the
# default's 2 blocks per SM on the same (1, 112, 2) cluster grid.  M=1 rows: the one-token plan for reference.
. scripts/h200_setup.sh
call_results j
C=bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
P=HUMMING_DEBUG_SMEM_PAD=4096
for d in $P $P,HUMMING_DEBUG_WG_NO_XCOPY $P,HUMMING_DEBUG_WG_SKIP_DEQUANT $P,HUMMING_DEBUG_WG_SKIP_MMA \
         $P,HUMMING_DEBUG_WG_SKIP_DEQUANT,HUMMING_DEBUG_WG_SKIP_MMA \
         $P,HUMMING_DEBUG_WG_SKIP_DEQUANT,HUMMING_DEBUG_WG_SKIP_MMA,HUMMING_DEBUG_WG_NO_XCOPY; do
  n=$(echo ${d#$P} | sed 's/HUMMING_DEBUG_WG_//g;s/^,//;s/,/_/g'); n=${n:-pad}
  HUMMING_DEBUG_DEFINES=$d SWEEP_TIMEOUT=60 sweep_case "bound_$n" $I4 1,16 28672x4096 $C
done
