#!/usr/bin/env bash
# (A record of a session-22 call: the windows route was then the default and HUMMING_WG_OPERAND_DEQUANT selected the
# operand route; since the end of that session the windows are opt-in -- HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS.)
# Session 22, call D (carry .whl; ~4 minutes): the windowed wgmma route with the integer zero subtracted in the
# operand (no window sums of x: call C measured their pass at 0.4-1.7 us), its tests, and the int4 A/B at M=1 / 16:
# windows, windows with a 2-blocks-per-SM register cap, the operand route.
. scripts/h200_setup.sh
call_results d
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows or wgmma_formats" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
ab() { ab_int4 "$@"; }
ab windows
ab windows_mb2 HUMMING_DEBUG_MIN_BLOCKS=2
ab operand HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT
pack
