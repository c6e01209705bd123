#!/usr/bin/env bash
# Session 39, call A (asked for an H200): (1) on an H200 the int4 bench of record on session 38's tree (the fused pass
# over x with the scale copies' commit + wait); (2) the prefetch grid at 2-3 tokens vs the wgmma default
# (SMEM_PF_MAX_M = 2?); (3) at 12 / 16 tokens the mma.sync decode kernel's 16-token tiles (plain and x16) against the
# wgmma decode default on the three layers -- the mma.sync kernel has gained the pass rewrite, x16 and the fused x
# read since its last 16-token sweep (session 24).  Carry .whl.
. scripts/h200_setup.sh
call_results a
grep -q H200 "$OUT/device.txt" && int4_record 190
PF=bt8_wn3_tm1_wk4_ak64_s4
SWEEP_TIMEOUT=80 sweep_case small_pf $I4 1,2,3 6144x4096 ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
SWEEP_TIMEOUT=80 sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_x16_direct,bt16_wn8_tm1_wk1_ak256_s4_x16_direct,bt16_wn8_tm1_wk1_ak256_s4_direct
SWEEP_TIMEOUT=80 sweep_case m16_wide $I4 12,16 28672x4096 bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_x16_direct,bt16_wn14_tm1_wk2_ak256_s4_direct
SWEEP_TIMEOUT=80 sweep_case m16_long $I4 12,16 4096x14336 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s4_x16_direct,bt16_wn4_tm2_wk2_ak256_s4_direct
