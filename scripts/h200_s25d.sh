#!/usr/bin/env bash
# Session 25, call D: the int3 / int8 / MXFP4 bench of the final tree (call C's second bench ran past its 150 s step).
. scripts/h200_setup.sh
step 300 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64,1024 \
  --cold none --json "$OUT/bench_more.json" >"$OUT/bench_more.log" 2>&1; grep -A8 "^Summary" "$OUT/bench_more.log"
