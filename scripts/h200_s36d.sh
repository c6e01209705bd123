#!/usr/bin/env bash
# Session 36, call D: can the long layer (4096x14336, K > 4096) take the shared-memory prefetch at M=1?  Session 35
# tried full-SM blocks only (two per SM: the next launch cannot sit beside them).  Here blocks of at most a quarter of
# an SM (4 warps, 2 per SM, 8 splits) or half of one (16 warps, 1 per SM, 2 splits), with 40-96 KB prefetched, against
# the default (8 warps x 2 per SM, 8 splits) -- sweeps with the bench's warm-up.  Carry nothing.
. scripts/h200_setup.sh
call_results d
L=4096x14336
SWEEP_TIMEOUT=60 sweep_case long_q8 $I4 1 $L \
  bt8_wn4_tm2_wk1_ak64_s4_pf40_x16_direct,bt8_wn4_tm2_wk1_ak64_s6_pf40_x16_direct,bt8_wn4_tm2_wk1_ak64_s4_pf56_x16_direct,bt8_wn4_tm2_wk1_ak64_s4_x16_direct --splits 8
SWEEP_TIMEOUT=50 sweep_case long_q4 $I4 1 $L \
  bt8_wn2_tm2_wk2_ak64_s4_pf56_x16_direct,bt8_wn4_tm1_wk2_ak64_s4_pf56_x16_direct --splits 4
SWEEP_TIMEOUT=50 sweep_case long_h2 $I4 1 $L \
  bt8_wn4_tm1_wk4_ak128_s4_pf72_x16_direct,bt8_wn4_tm1_wk4_ak128_s4_pf96_x16_direct,bt8_wn4_tm1_wk4_ak128_s4_x16_direct --splits 2
