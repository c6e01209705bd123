#!/usr/bin/env bash
# Session 25, call E: int8 channel and MXFP4 at M=1024, the cells > 10 % behind upstream in calls C / D
# (28672x4096: int8 394 vs 340 us on the 192-row bulk default, MXFP4 366 vs 318 on the 256-token TMA tile).
# (Its int8 rows timed expand + cuBLAS for every candidate: forced choices did not apply from the prefill threshold
# until call G's tree -- GemmLayer.uses_prefill_path.)
. scripts/h200_setup.sh
call_results e
I8=w:uint8b128,s:channel:bfloat16
FP4=w:float4_e2m1,s:g32:float8_e8m0fnu
SWEEP_TIMEOUT=230 sweep_case i8_m1024 $I8 1024 $SH \
  bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s3_tma_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_tma_wgmma
SWEEP_TIMEOUT=120 sweep_case fp4_m1024_wide $FP4 1024 28672x4096 \
  bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma
pack
