#!/usr/bin/env bash
# Session 22, call D (carry .whl; ~4 minutes): the windowed wgmma route with the integer zero subtracted in the
# operand (no window sums of x: call C measured their pass at 0.4-1.7 us), its tests, and the int4 A/B at M=1 / 16:
# windows, windows with a 2-blocks-per-SM register cap, the operand route.
. scripts/h200_setup.sh
call_results d
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows or wgmma_formats" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
ab() {  # NAME [env...]
  local name=$1; shift
  env "$@" timeout 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --no-upstream --no-eager \
    --cold none >$R/ab_$name.log 2>&1
  echo "-- $name"; grep "] ours" $R/ab_$name.log | sed 's/.*int4-g128 //' | cut -c1-24 | tr '\n' ';'; echo
}
ab windows
ab windows_mb2 HUMMING_DEBUG_MIN_BLOCKS=2
ab operand HUMMING_DEBUG_DEFINES=HUMMING_WG_OPERAND_DEQUANT
pack
