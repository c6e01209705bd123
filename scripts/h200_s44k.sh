#!/usr/bin/env bash
# Session 44, call K (any sm_90a card; carry .whl): call J's clean bounds put ~2 us of the wide layer's 27.2 us in
# staging x (every 256-row block re-reads its K range of x: a quarter of the weight bytes again, from L2).  512-row
# blocks (four warpgroups, wn16 tm2: one block per SM, the same warps per SM) halve that traffic.
. scripts/h200_setup.sh
call_results k
C=bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn16_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn16_tm2_wk1_ak256_s2_direct_wgmma
C=$C,bt16_wn16_tm1_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
SWEEP_TIMEOUT=150 sweep_case wn16 $I4 12,16 $SH $C
