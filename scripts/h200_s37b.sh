#!/usr/bin/env bash
# Session 37, call B: why the one-split smem-prefetch choice loses at 2+ tokens (session 36: 6144x4096 int4 g128,
# 6.3 us at M=1 but 8.8-9.0 at M=2).  Hypothesis: the next PDL launch's block no longer sits beside this one.
# (1) the driver's resident blocks per SM for the launch's shared memory at M = 1..4; (2) the sweep at M = 1..4 of
# prefetch budgets 72 / 48 / 24 KB (smaller shared memory per block), the same grid without prefetch and the wgmma
# default; (3) the same with the preferred carveout at 100 % (HUMMING_DEBUG_SMEM_CARVEOUT); (4) ncu of the 72 KB
# choice at M = 1 and 2 (the kernel alone: no neighbour).  On an H200 the int4 bench of record runs first.
# Carry .whl.
. scripts/h200_setup.sh
call_results b
grep -q H200 "$OUT/device.txt" && int4_record 190
PF=bt8_wn3_tm1_wk4_ak64_s4
step 60 python3 scripts/probe_occupancy.py $I4 6144 4096 1,2,3,4 ${PF}_pf72_x16_direct >$R/occ.txt 2>&1
cut -c1-220 $R/occ.txt | grep -E "M=|Error" ; pack
SWEEP_TIMEOUT=120 sweep_case pf_small $I4 1,2,3,4 6144x4096 \
  ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct,${PF}_pf24_x16_direct,${PF}_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
export HUMMING_DEBUG_SMEM_CARVEOUT=100
SWEEP_TIMEOUT=70 sweep_case pf_small_c100 $I4 1,2,4 6144x4096 ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct
unset HUMMING_DEBUG_SMEM_CARVEOUT
ncu_case ncu_pf_m1 $I4 6144 4096 1 ${PF}_pf72_x16_direct
ncu_case ncu_pf_m2 $I4 6144 4096 2 ${PF}_pf72_x16_direct
