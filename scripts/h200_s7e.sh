#!/usr/bin/env bash
# Session 7, call E (carry .whl): int3 / int8 / MXFP4 against upstream at M <= 256 (call D's 62-second steps stopped
# each bench before its upstream half).
. scripts/h200_setup.sh
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 108 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -E "^\[bench\] upstream" "$OUT/bench_$f.log" | sed 's/, [0-9]* copies.*//' | cut -c9-90
  grep -A3 "^Summary" "$OUT/bench_$f.log" | tail -1
done
