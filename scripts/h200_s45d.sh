#!/usr/bin/env bash
# Session 45, call D (carry .whl).  1. GPU checks of this session's code and session 44's unrun refactor: the
# background-compile GPU test (GemmLayer.all_specs()), the SM reservation's GPU test, and the HUMMING_WIDE_DECODE_BULK
# plan end to end (the int4 wide layer at 9 / 12 / 16 tokens against the fp32 reference, NaN-poisoned outputs).
# 2. With 40 SMs held: 64-token candidates (the plan's cp.async TMA tiles vs the bulk TMA kernel) on layers scaled to
# 92 SMs.  On an H200: the bench of record with the switch off and on instead of 2.
. scripts/h200_setup.sh
call_results d
step 150 python3 -m pytest -q -x -m gpu tests/test_ops_gpu.py tests/test_sm_reserve.py -k "background or reserved" > $R/tests.log 2>&1
tail -3 $R/tests.log
HUMMING_WIDE_DECODE_BULK=1 step 60 python3 scripts/check_choice.py w:uint4b8,s:g128:bfloat16 \
  bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma 28672x4096,20480x5120 9,12,16 2>&1 | tee $R/check_wide_bulk.log | tail -4
pack
if grep -q H200 "$OUT/device.txt"; then
  for v in 0 1; do
    HUMMING_WIDE_DECODE_BULK=$v step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64 \
      --cold none --no-eager --json $R/bench_int4_wdb$v.json > $R/bench_int4_wdb$v.log 2>&1
    echo "-- HUMMING_WIDE_DECODE_BULK=$v"; grep -A3 "^Summary" $R/bench_int4_wdb$v.log; pack
  done
  exit 0
fi
B64=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s6_bulk_wgmma
SWEEP_TIMEOUT=200 sweep_case m64_r40 $I4 64 19968x4096,4352x4096,4096x14336 $B64 --reserve-sms 40
