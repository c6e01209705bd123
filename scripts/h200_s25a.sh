#!/usr/bin/env bash
# Session 25, call A: the cells below upstream in session 24's bench (call C/D) against forced split counts and
# neighbouring tiles -- int8 channel 28672x4096 M=1, int4 / MXFP4 28672x4096 M=16, int4 / MXFP4 6144x4096 M=64 (int3 was not run).
. scripts/h200_setup.sh
call_results a
I8=w:uint8b128,s:channel:bfloat16
I3=w:uint3b4,s:g128:bfloat16
FP4=w:float4_e2m1,s:g32:float8_e8m0fnu
SWEEP_TIMEOUT=110 sweep_case i8_m1_wide $I8 1 28672x4096 \
  bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s8_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s6_direct_wgmma \
  --splits 2,3,4,7
SWEEP_TIMEOUT=110 sweep_case fp4_m16_wide $FP4 16 28672x4096 \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak1_s4_wgmma \
  --splits 2,3,4
SWEEP_TIMEOUT=110 sweep_case i4_m16_wide $I4 16 28672x4096 \
  bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma \
  --splits 3,4
SWEEP_TIMEOUT=90 sweep_case i4_m64_6144 $I4 64 6144x4096 \
  bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma,bt64_wn4_tm1_wk1_ak2_s4_tma_wgmma --splits 2,3,4,6
SWEEP_TIMEOUT=90 sweep_case fp4_m64_6144 $FP4 64 6144x4096 \
  bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma,bt64_wn4_tm1_wk1_ak2_s4_tma_wgmma --splits 2,3,4,6
pack
