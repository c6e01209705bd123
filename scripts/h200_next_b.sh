#!/usr/bin/env bash
# Next session, call B (an H200 for the bench of record): (1) the int4 bench of record; (2) the prefetch grid at 2
# tokens on 6144x4096 against the wgmma default (H100: session 38 7.4 vs 7.6, session 39 twice 7.6 vs 7.5-7.6 -- a tie there;
# SMEM_PF_MAX_M = 2 only if the H200 says so); (3) the long
# layer's x16 twin vs plain at 4 / 8 tokens (H100 s38: plain 15.2 vs x16 15.6 at 8; H200 s37: x16 15.2 vs 15.6).
# Carry .whl.
. scripts/h200_setup.sh
call_results b
grep -q H200 "$OUT/device.txt" && int4_record 190
PF=bt8_wn3_tm1_wk4_ak64_s4
sweep_case small_pf $I4 1,2,3 6144x4096 ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
sweep_case long_x16 $I4 4,8 4096x14336 bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_x16_direct
