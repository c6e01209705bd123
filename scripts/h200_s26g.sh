#!/usr/bin/env bash
# Session 26, call G: fp8 weight-only at 257-384 tokens now takes the bulk kernel (heuristics._bulk_defaults, on
# int8's measurements); measure it against the 256-row stream-K tile it ran before, fp8 e4m3 channel (float32 scales)
# and e5m2 channel (bf16 scales), 300 / 384 tokens.
. scripts/h200_setup.sh
call_results g
SWEEP_TIMEOUT=150 sweep_case f8_m300_384 w:float8_e4m3fn,s:channel:float32 300,384 $SH \
  bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
SWEEP_TIMEOUT=150 sweep_case e5_m300_384 w:float8_e5m2,s:channel:bfloat16 300,384 $SH \
  bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
pack
