#!/usr/bin/env bash
# Session 22, call B (carry .whl; ~6 minutes): the windowed wgmma route with the refill right after the dequant
# (call A: refill after the MMA wait, slower), its tests, and the int4 A/B at M=1 / 16: windows, windows with a
# 2-blocks-per-SM register cap, the operand route.
. scripts/h200_setup.sh
call_results b
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows or wgmma_int4 or ticket" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
ab() {  # NAME [env...]
  local name=$1; shift
  env "$@" timeout 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --no-upstream --no-eager \
    --cold none >$R/ab_$name.log 2>&1
  echo "-- $name"; grep "] ours" $R/ab_$name.log | sed 's/.*int4-g128 //' | cut -c1-60 | tr '\n' ';'; echo
}
ab windows
ab windows_mb2 HUMMING_DEBUG_MIN_BLOCKS=2
ab operand HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT
ab windows2
pack
