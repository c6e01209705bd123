#!/usr/bin/env bash
# Session 24, call F: the two cells below upstream on the wide layer -- int8 channel at M=1 (the 128-row wgmma decode
# blocks vs the 224-row mma.sync blocks that balance int4) and MXFP4 at M=16 (its direct default vs 2-block clusters).
. scripts/h200_setup.sh
call_results f
I8=w:uint8b128,s:channel:bfloat16
SWEEP_TIMEOUT=100 sweep_case i8_m1_wide $I8 1,8 28672x4096 bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
FP4=w:float4_e2m1,s:g32:float8_e8m0fnu
SWEEP_TIMEOUT=100 sweep_case fp4_m16_wide $FP4 16 28672x4096 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s3_direct_wgmma
pack
