#!/usr/bin/env bash
# Session 20, call D (carry .whl; ~5 minutes): more warps per SM at decode.  Call B: on 28672x4096 at M=1 the
# 224-row block of 28 warps (70 registers) beat the same rows in 14 warps (123 registers), 20.5 vs 21.2 us -- so
# thread-level parallelism, not only balance.  Same question for the narrow layers at M=1 (6144x4096: 24 warps per SM
# in the wgmma default; 4096x14336: 16) and for M=16 (8-warp 256-row wgmma blocks at 128 registers; four warpgroups
# of one atom row, 84-91 registers, would double the warps).
. scripts/h200_setup.sh
call_results d
SWEEP_TIMEOUT=120 sweep_case m1_warps $I4 1 6144x4096,4096x14336 \
  bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct,bt8_wn4_tm1_wk4_ak256_s4_direct,bt8_wn16_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm1_wk2_ak256_s4_direct
SWEEP_TIMEOUT=120 sweep_case m16_warps $I4 16 $SH \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn16_tm1_wk1_ak256_s2_direct_wgmma,bt16_wn16_tm1_wk1_ak256_s2_c2_direct_wgmma,bt16_wn12_tm1_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma
