#!/usr/bin/env bash
# Session 28, call H: the int4 g128 bench on the session's final heuristics, with upstream and cuBLAS in the same run,
# at the bench's M <= 256 and at 512 (the M whose wide-layer pick changed this session); no eager / cold columns
# (device time left: ~4 minutes).
. scripts/h200_setup.sh
call_results h
step 170 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256,512 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A6 "^Summary" "$R/bench_int4.log"; pack
