#!/usr/bin/env bash
# Session 26, call E: the bench of the 8-bit formats at 256-4096 tokens with the new rules (int8 channel, fp8 e4m3
# channel; upstream in the same run), and int3 / MXFP4 at 256 / 4096 tokens (the 10 % rule at M >= 256).
. scripts/h200_setup.sh
call_results e
step 300 python3 -m vllm_humming.bench --formats w8a16-int8-channel,w8a16-fp8-channel --ms 256,512,1024,4096 --cold none \
  --no-eager --json $R/bench_8bit.json >$R/bench_8bit.log 2>&1; grep -A6 "^Summary" $R/bench_8bit.log; pack
step 230 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,4096 --cold none \
  --no-eager --json $R/bench_i3_fp4.json >$R/bench_i3_fp4.log 2>&1; grep -A6 "^Summary" $R/bench_i3_fp4.log; pack
