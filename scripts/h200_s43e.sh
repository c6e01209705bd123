#!/usr/bin/env bash
# Session 43, call E (any sm_90a card; carry .whl): the prefetching wgmma decode (int4 / int3 / MXFP4 default on small
# layers) forced on the codes its rule leaves out -- int8 channel, NVFP4, fp8 e4m3 channel -- at 8 / 16 tokens on the
# small layers where a whole range fits, against what their plans launch now.
. scripts/h200_setup.sh
call_results e
C16=bt16_wn4_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma
C8=bt8_wn8_tm1_wk1_ak256_s4_pf64_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s4_pf64_direct_wgmma
I8=w:uint8b128,s:channel:bfloat16
NV=w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32
F8=fp8-channel
SWEEP_TIMEOUT=100 sweep_case i8_m16 $I8 16 1024x4096,2048x4096,4096x2048 $C16
SWEEP_TIMEOUT=100 sweep_case i8_m8 $I8 8 1024x4096,2048x4096,4096x2048 $C8
SWEEP_TIMEOUT=100 sweep_case nv_m16 $NV 16 1024x4096,2048x4096,4096x4096,4096x2048 $C16
SWEEP_TIMEOUT=100 sweep_case nv_m8 $NV 8 1024x4096,2048x4096,4096x4096,4096x2048 $C8
SWEEP_TIMEOUT=100 sweep_case f8_m16 $F8 16 1024x4096,2048x4096,4096x2048 $C16
SWEEP_TIMEOUT=100 sweep_case f8_m8 $F8 8 1024x4096,2048x4096,4096x2048 $C8
