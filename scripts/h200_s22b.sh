#!/usr/bin/env bash
# (A record of a session-22 call: the windows route was then the default and HUMMING_WG_OPERAND_DEQUANT selected the
# operand route; since the end of that session the windows are opt-in -- HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS.)
# Session 22, call B (carry .whl; ~6 minutes): the windowed wgmma route with the refill right after the dequant
# (call A: refill after the MMA wait, slower), its tests, and the int4 A/B at M=1 / 16: windows, windows with a
# 2-blocks-per-SM register cap, the operand route.
. scripts/h200_setup.sh
call_results b
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows or wgmma_int4 or ticket" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
ab() { ab_int4 "$@"; }
ab windows
ab windows_mb2 HUMMING_DEBUG_MIN_BLOCKS=2
ab operand HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT
ab windows2
pack
