#!/usr/bin/env bash
# Session 24, call C (carry .whl): the final tree's benches with cuBLAS and upstream humming in the same run -- int4
# g128 at every default M with eager per-call and cold compile times (the table), then int3 / int8 / MXFP4 at
# M = 1 / 16 / 64.
. scripts/h200_setup.sh
call_results c
step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 --no-eager \
  --cold none --json $R/bench_w3_w8_mxfp4.json >$R/bench_w3_w8_mxfp4.log 2>&1
grep -E "geomean|^== " $R/bench_w3_w8_mxfp4.log | cut -c1-150; pack
