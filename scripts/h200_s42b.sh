#!/usr/bin/env bash
# Session 42, call B.  On an H200: the int4 bench of record on the final tree (M = 1 / 2 / 16 / 64 / 256, with the
# eager per-call time and the cold compile, neither measured since session 24), then the other formats against
# upstream at M <= 64.  On any other card: every GPU suite instead (no bench of record there).  Carry .whl.
. scripts/h200_setup.sh
call_results b
if grep -q H200 "$OUT/device.txt"; then
  step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,2,16,64,256 \
    --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
  grep -A3 "^Summary" "$R/bench_int4.log"; grep -iE "eager|cold" "$R/bench_int4.log" | head -20; pack
  step 240 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
    --cold none --no-eager --json "$R/bench_w3_w8_mxfp4.json" >"$R/bench_w3_w8_mxfp4.log" 2>&1
  grep -A5 "^Summary" "$R/bench_w3_w8_mxfp4.log"; pack
else
  gpu_suites 560; cp "$OUT/gpu_tests.log" "$R/"; pack
fi
