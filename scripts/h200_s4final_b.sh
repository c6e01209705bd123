#!/usr/bin/env bash
# Session 4, final device call B (carry .whl, .shared_fixtures): int4 M=1/16 again (the 8-token split-K reduction
# restored), int3 / int8 / MXFP4 at M <= 64, e2e fixtures, compile report.
. scripts/h200_setup.sh
step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --cold none --no-eager --json "$OUT/bench_int4_m1_m16.json" \
  >"$OUT/bench_int4_m1_m16.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_int4_m1_m16.log"; grep "ours" "$OUT/bench_int4_m1_m16.log" | grep "M=1:"
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 110 python3 -m vllm_humming.bench --formats $f --ms 1,16,64 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_$f.log"
done
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 90 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | tail -8
fi
step 60 python3 -m vllm_humming.cli compile-report >"$OUT/compile.log" 2>&1; tail -12 "$OUT/compile.log"
