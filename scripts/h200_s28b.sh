#!/usr/bin/env bash
# Session 28, call B: float zero points with < 128-column groups at 129-512 tokens -- the one-atom stream-K tile that
# session 27's FLOAT_ZERO_ONE_ATOM rule picks vs the two-atom 256-row tiles it replaced (ptxas serializes their
# wgmmas; NVRTC 20-27 s each), uint4 g32 / g64 + float zero points, bf16, the three default shapes.
. scripts/h200_setup.sh
call_results b
C=bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma
SWEEP_TIMEOUT=230 sweep_case fzp_g32 "w:uint4,s:g32:bfloat16,zp:float" 300,512 $SH $C
SWEEP_TIMEOUT=230 sweep_case fzp_g64 "w:uint4,s:g64:bfloat16,zp:float" 300,512 $SH $C
