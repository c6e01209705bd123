#!/usr/bin/env bash
# Session 15, call B (carry .whl; ~5 minutes): do the one-wave split-K wgmma grids at M = 64..256 lose time to every
# block reading the same activation stage from L2 at once?  HUMMING_DEBUG_K_ROTATE=R starts neighbouring weight-row
# tiles' K loops at R different points (the defaults, int4 g128), with and without the math (HUMMING_SKIP_MATH).
. scripts/h200_setup.sh
call_results b
I4=w:uint4b8,s:g128:bfloat16
C=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma
for rot in 0 2 4 8; do
  for nm in "" ",HUMMING_SKIP_MATH"; do
    d="HUMMING_DEBUG_K_ROTATE=$rot$nm"
    echo "## rot $rot $nm"
    HUMMING_DEBUG_DEFINES="$d" SWEEP_TIMEOUT=100 sweep_case "rot${rot}${nm:+_nomath}" $I4 64,128,256 "$SH" "$C"
  done
done
