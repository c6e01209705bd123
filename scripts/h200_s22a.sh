#!/usr/bin/env bash
# (A record of a session-22 call: the windows route was then the default and HUMMING_WG_OPERAND_DEQUANT selected the
# operand route; since the end of that session the windows are opt-in -- HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS.)
# Session 22, call A (carry .whl; ~9 minutes): the windowed wgmma route of the direct kernel (accumulator-side
# dequant for token tiles <= 16 and groups >= 128) -- its GPU tests and the direct wgmma suites, then the int4 A/B
# against the operand route (HUMMING_WG_OPERAND_DEQUANT) at M=1 / 16, then the int4 bench.
. scripts/h200_setup.sh
call_results a
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma or ticket" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
for v in "" HUMMING_WG_OPERAND_DEQUANT; do
  HUMMING_DEBUG_DEFINES=$v step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --no-upstream --no-eager \
    --cold none >$R/ab_${v:-windows}.log 2>&1
  echo "-- ${v:-windows}"; grep "] ours" $R/ab_${v:-windows}.log | cut -c1-120
done; pack
step 260 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
