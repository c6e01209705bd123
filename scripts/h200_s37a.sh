#!/usr/bin/env bash
# Session 37, call A (a8a2f16's kernels).  On an H200 (the issue's card): the int4 bench of record with the 25 ms
# warm-up, then W3 / W8 / MXFP4 at M <= 64 against upstream in one run, then int4 eager per-call and cold compile.
# On any other card: every GPU suite in one step (never completed on this tree: sessions 35-36 ran them in parts).
# Carry .whl.
. scripts/h200_setup.sh
call_results a
if grep -q H200 "$OUT/device.txt"; then
  int4_record 190
  step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
    --cold none --no-eager --json "$R/bench_more.json" >"$R/bench_more.log" 2>&1
  grep -A5 "^Summary" "$R/bench_more.log"; pack
  step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --no-upstream \
    --json "$R/bench_eager_cold.json" >"$R/bench_eager_cold.log" 2>&1
  grep -iE "eager|cold" "$R/bench_eager_cold.log" | head -12; pack
else
  gpu_suites 540; cp "$OUT/gpu_tests.log" "$R/"; pack
fi
