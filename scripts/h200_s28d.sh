#!/usr/bin/env bash
# Session 28, call D: call C found the TMA-x two-atom stream-K tile 12 % ahead of the wide layer's default (the
# non-TMA one) for int4 at 512 tokens -- the wide layer at 385-512 tokens, int4 / int3 / MXFP4, both tiles and the
# 256-token tile that narrow layers take there.
. scripts/h200_setup.sh
call_results d
C=bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma,bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma
sweep_case wide_i4 "$I4" 400,448,512 28672x4096 $C
sweep_case wide_i3 "w:uint3b4,s:g128:bfloat16" 400,512 28672x4096 $C
sweep_case wide_mxfp4 mxfp4 400,512 28672x4096 $C
sweep_case wide_i4_57k "$I4" 400,512 57344x4096 $C
