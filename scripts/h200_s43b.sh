#!/usr/bin/env bash
# Session 43, call B (any sm_90a card; carry .whl): the prefetching wgmma decode (session 42; its default rule takes
# 4-bit integer codes only) forced on int3 g128 and MXFP4 at 8 / 16 tokens on the small layers, against what their
# plans launch now -- whether the rule should take them too.
. scripts/h200_setup.sh
call_results b
SHP=1024x4096,2048x4096,4096x4096,4096x2048
C16=bt16_wn4_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma
C8=bt8_wn8_tm1_wk1_ak256_s4_pf64_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s4_pf64_direct_wgmma
I3=w:uint3b4,s:g128:bfloat16
FP4=w:float4_e2m1,s:g32:float8_e8m0fnu
SWEEP_TIMEOUT=130 sweep_case i3_m16 $I3 12,16 $SHP $C16
SWEEP_TIMEOUT=130 sweep_case fp4_m16 $FP4 12,16 $SHP $C16
SWEEP_TIMEOUT=110 sweep_case i3_m8 $I3 4,8 $SHP $C8
SWEEP_TIMEOUT=110 sweep_case fp4_m8 $FP4 4,8 $SHP $C8
