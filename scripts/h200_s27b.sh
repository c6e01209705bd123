#!/usr/bin/env bash
# Session 27, call B: the decode choices of fp8 e4m3 weight-only (channel / 128x128 block scales) and NVFP4 at 1 / 16
# (/ 64) tokens -- call A found them behind upstream at M <= 16 on their fallback choices (float 8-bit codes get no
# direct-kernel rule; NVFP4's 16-column groups are excluded from the narrow M=1 rule).  Candidates: the int8 /
# MXFP4 / int4 defaults of those buckets and the current picks.
. scripts/h200_setup.sh
call_results b
export SWEEP_TIMEOUT=170
F8C=w:float8_e4m3fn,s:channel:float32
F8B=w:float8_e4m3fn,s:b128x128:float32
NV=w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32
C8=bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak2_s3,bt8_wn4_tm2_wk1_ak1_s2,bt8_wn4_tm2_wk1_ak1_s4
C16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak1_s4_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk2_ak2_s3
C64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma,bt64_wn8_tm2_wk1_ak1_s4_tma_wgmma
MB="--min-bytes 268435456"
sweep_case f8c_m1 $F8C 1 $SH $C8 $MB
sweep_case f8c_m16 $F8C 16 $SH $C16 $MB
sweep_case nv_m1 $NV 1 $SH $C8 $MB
sweep_case nv_m16 $NV 16 $SH $C16 $MB
sweep_case f8b_m1 $F8B 1 $SH $C8 $MB
sweep_case f8b_m16 $F8B 16 $SH $C16 $MB
sweep_case nv_m64 $NV 64 $SH $C64 $MB
