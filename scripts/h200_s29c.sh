#!/usr/bin/env bash
# Session 29, call C (same tree as call B, on the still-warm machine, its JIT cache kept): every GPU suite again --
# call B's 480 s step stopped them at ~97 % on a cold cache, no failure -- then MXFP4 / NVFP4 with upstream and
# cuBLAS at M = 1 / 16 / 64 / 256.
. scripts/h200_setup.sh
call_results c
gpu_suites 300; cp "$OUT/gpu_tests.log" "$R/"; pack
step 200 python3 -m vllm_humming.bench --formats w4a16-mxfp4,w4a16-nvfp4 --ms 1,16,64,256 --cold none --no-eager \
  --json "$R/bench_fp4.json" >"$R/bench_fp4.log" 2>&1
grep -A4 "^Summary" "$R/bench_fp4.log"; pack
