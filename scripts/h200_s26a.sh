#!/usr/bin/env bash
# Session 26, call A: 8-bit integer codes at 513-2047 tokens -- session 25's lead (256-token tiles beat expand +
# cuBLAS around M=1024 on all three shapes).  Every M here from 576 to 1280: the bulk default (513-1023 tokens), the
# 128-row x 256-token TMA tile (wn8), its 192-row sibling (wn12, four stages: five do not fit for 8-bit codes), the
# wn8 tile's stream-K twin, and expand + cuBLAS (HUMMING_PREFILL_M=512 makes the sweep time it as its own row).
# Side probes: fp8 weight-only at M=1024 on the same tiles; int4 M=64 on the wide layer with deeper two-atom rings.
. scripts/h200_setup.sh
call_results a
I8=w:uint8b128,s:channel:bfloat16
T8=bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn8_tm1_wk1_ak1_s4_sk_tma_wgmma
HUMMING_PREFILL_M=512 SWEEP_TIMEOUT=200 sweep_case i8_lo $I8 576,640,896 $SH $T8
HUMMING_PREFILL_M=512 SWEEP_TIMEOUT=200 sweep_case i8_hi $I8 1152,1280 $SH $T8
F8=w:float8_e4m3fn,s:channel:bfloat16
HUMMING_PREFILL_M=512 SWEEP_TIMEOUT=120 sweep_case f8_m1024 $F8 1024 $SH \
  bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s4_tma_wgmma
SWEEP_TIMEOUT=80 sweep_case i4_m64_wide $I4 64 28672x4096 \
  bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s5_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s6_tma_wgmma
pack
