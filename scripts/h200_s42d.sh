#!/usr/bin/env bash
# Session 42, call D: the H200 branch of h200_s42b.sh only (the bench of record with eager / cold compile, then the
# other formats); on any other card it stops after the device line (call B already ran the suites).  Carry .whl.
. scripts/h200_setup.sh
grep -q H200 "$OUT/device.txt" || { echo "not an H200: nothing to do"; exit 0; }
call_results d
step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,2,16,64,256 \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
pack; sed -n '/^vllm-humming bench/,$p' "$R/bench_int4.log" | head -60
step 240 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
  --cold none --no-eager --json "$R/bench_w3_w8_mxfp4.json" >"$R/bench_w3_w8_mxfp4.log" 2>&1
grep -A5 "^Summary" "$R/bench_w3_w8_mxfp4.log"; pack
