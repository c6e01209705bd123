#!/usr/bin/env bash
# (A record of a session-22 call: the windows route was then the default and HUMMING_WG_OPERAND_DEQUANT selected the
# operand route; since the end of that session the windows are opt-in -- HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS.)
# Session 22, call C (carry .whl; ~5 minutes): where the windowed wgmma route loses (calls A-B: M=16 13.5 / 42.6 /
# 20.5 us vs the operand route's 9.2 / 26.3 / 15.4): timing-only macros (no x window sums, no folds) and ncu of both
# routes on 28672x4096 M=16.
. scripts/h200_setup.sh
call_results c
ab() { AB_ARGS="--no-check" ab_int4 "$@"; }
ab windows
ab no_xsum HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_NO_XSUM
ab no_fold HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_NO_FOLD
ab no_both HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_NO_XSUM,HUMMING_DEBUG_WG_NO_FOLD
ab operand HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT
pack
C=bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
ncu_case ncu_win $I4 28672 4096 16 $C
HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT ncu_case ncu_op $I4 28672 4096 16 $C
