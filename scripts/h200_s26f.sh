#!/usr/bin/env bash
# Session 26, call F: the prefill threshold 513 now applies to every code wider than 4 bits; 5-7-bit codes had not
# been measured there.  Their default kernel at 513+ tokens (the 256-row stream-K tile) vs expand + cuBLAS
# (HUMMING_PREFILL_M=257 times it as its own row): int5 g128 and fp6 e3m2 g32 at 640 / 896 tokens.
. scripts/h200_setup.sh
call_results f
HUMMING_PREFILL_M=257 SWEEP_TIMEOUT=150 sweep_case i5 w:uint5b16,s:g128:bfloat16 640,896 $SH bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
HUMMING_PREFILL_M=257 SWEEP_TIMEOUT=150 sweep_case f6 w:float6_e3m2,s:g32:bfloat16 640,896 $SH bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
pack
