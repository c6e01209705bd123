#!/usr/bin/env bash
# Session 36, call C: the int4 bench of record with the 25 ms warm-up (M = 1 / 16 / 64 / 256, upstream in the same
# run) -- meant for an H200 (the card); about 200 s of device time.  Carry .whl.
. scripts/h200_setup.sh
call_results c
grep -q H200 "$OUT/device.txt" || { echo "not an H200: the H100 table of call B stands; nothing run"; exit 0; }
step 190 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; grep -E "\] (ours|upstream|cuBLAS) .* M=1:" "$R/bench_int4.log" | cut -c1-90; pack
