#!/usr/bin/env bash
# Session 41, call D (an H200): the 9-16-token wgmma decode's tile shapes re-swept on the H200 (the last sweep of them
# was sessions 11-13, before the PDL prefetch / early release / window-pass changes): warpgroups per block (1-4),
# atom rows per warp (1, 2, 4) and ring depths (2-8), at M = 12 / 16 on the three int4 layers.  Carry .whl.
. scripts/h200_setup.sh
call_results d
V=""
for s in bt16_wn4_tm1_wk1_ak256_s4 bt16_wn4_tm1_wk1_ak256_s8 bt16_wn4_tm2_wk1_ak256_s2 bt16_wn4_tm2_wk1_ak256_s4 \
         bt16_wn8_tm1_wk1_ak256_s4 bt16_wn8_tm1_wk1_ak256_s8 bt16_wn8_tm2_wk1_ak256_s2 bt16_wn8_tm2_wk1_ak256_s3 \
         bt16_wn8_tm2_wk1_ak256_s4 bt16_wn12_tm1_wk1_ak256_s4 bt16_wn16_tm1_wk1_ak256_s4 bt16_wn4_tm4_wk1_ak256_s2; do
  V="$V,${s}_direct_wgmma"
done
V=${V#,}
SWEEP_TIMEOUT=150 sweep_case m16_tiles_small $I4 12,16 6144x4096 $V
SWEEP_TIMEOUT=150 sweep_case m16_tiles_long $I4 12,16 4096x14336 $V
SWEEP_TIMEOUT=150 sweep_case m16_tiles_wide $I4 12,16 28672x4096 $V,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_c2_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct
