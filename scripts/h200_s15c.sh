#!/usr/bin/env bash
# Session 15, call C (carry .whl; ~5 minutes): ring depth of the cp.async wgmma kernels at 33-128 tokens.  Their
# wgmma ring keeps kStages - 2 stages in flight: the wide-layer M=64 default (256-row tiles, s4: two stages, 32 KB per
# SM at one block per SM) streamed at 1 MB per block in 37 us with no math at all (call B) -- latency-bound?
. scripts/h200_setup.sh
call_results c
C64=bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s8_wgmma,bt64_wn8_tm2_wk1_ak1_s10_wgmma,bt64_wn8_tm2_wk1_ak1_s12_wgmma,bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s8_wgmma,bt64_wn8_tm1_wk1_ak1_s10_wgmma
C128=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s7_wgmma,bt128_wn8_tm1_wk1_ak1_s9_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s6_wgmma,bt128_wn8_tm2_wk1_ak1_s8_wgmma
SWEEP_TIMEOUT=150 sweep_case i4_m64 w:uint4b8,s:g128:bfloat16 64 "$SH" "$C64"
SWEEP_TIMEOUT=150 HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep_case i4_m64_nomath w:uint4b8,s:g128:bfloat16 64 "$SH" "$C64"
SWEEP_TIMEOUT=150 sweep_case i4_m128 w:uint4b8,s:g128:bfloat16 128 "$SH" "$C128"
SWEEP_TIMEOUT=150 sweep_case i3_m64 w:uint3b4,s:g128:bfloat16 64 "$SH" "$C64"
SWEEP_TIMEOUT=150 sweep_case mx_m64 mxfp4 64 "$SH" "$C64"
SWEEP_TIMEOUT=150 sweep_case i8_m64 w:uint8b128,s:channel:bfloat16 64 "$SH" "$C64"
