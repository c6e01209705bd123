#!/usr/bin/env bash
# Session 41, call C (an H200): (1) the other formats against upstream at M <= 64 on this tree (W3A16, W8A16,
# MXFP4; last measured in sessions 22-29 on older kernels); (2) the one-token prefetch grid at 2 tokens on the small
# layers it serves (SMEM_PF_MAX_M = 2?  call B: 6144x4096 pf48 6.9 vs the wgmma default 7.6); (3) the 16-token tiles
# of the mma.sync decode kernel against the wgmma default on the H200 (session 39 measured them on an H100 only);
# (4) ncu of the wide layer's 16-token default on the H200.  Carry .whl.
. scripts/h200_setup.sh
call_results c
step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
  --cold none --no-eager --json "$R/bench_w3_w8_mxfp4.json" >"$R/bench_w3_w8_mxfp4.log" 2>&1
grep -A5 "^Summary" "$R/bench_w3_w8_mxfp4.log"; pack
W=bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
SWEEP_TIMEOUT=60 sweep_case pf2_6144 $I4 1,2 6144x4096 bt8_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt8_wn3_tm1_wk4_ak64_s4_pf48_x16_direct,bt8_wn3_tm1_wk4_ak64_s4_pf32_x16_direct,$W
SWEEP_TIMEOUT=60 sweep_case pf2_4096 $I4 1,2 4096x4096 bt8_wn2_tm1_wk4_ak64_s4_pf72_x16_direct,bt8_wn2_tm1_wk4_ak64_s4_pf48_x16_direct,bt8_wn2_tm1_wk4_ak64_s4_pf32_x16_direct,$W
SWEEP_TIMEOUT=60 sweep_case pf2_2048 $I4 1,2 2048x4096 bt8_wn1_tm1_wk8_ak64_s4_pf72_x16_direct,bt8_wn1_tm1_wk8_ak64_s4_pf48_x16_direct,bt8_wn1_tm1_wk8_ak64_s4_pf32_x16_direct,$W
SWEEP_TIMEOUT=60 sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_x16_direct,bt16_wn8_tm1_wk1_ak256_s4_x16_direct,bt16_wn8_tm1_wk1_ak256_s4_direct
SWEEP_TIMEOUT=60 sweep_case m16_wide $I4 12,16 28672x4096 bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_x16_direct,bt16_wn14_tm1_wk2_ak256_s4_direct
SWEEP_TIMEOUT=60 sweep_case m16_long $I4 12,16 4096x14336 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s4_x16_direct,bt16_wn4_tm2_wk2_ak256_s4_direct
ncu_case ncu_m16_wide $I4 28672 4096 16 bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
ncu_case ncu_m16_small $I4 6144 4096 16 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
