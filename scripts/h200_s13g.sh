#!/usr/bin/env bash
# Session 13, call G (carry .whl): int3 / int8 / MXFP4 at M = 1 / 16 / 64 / 256, ours vs upstream vs cuBLAS bf16.
. scripts/h200_setup.sh
call_results g
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 75 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
