#!/usr/bin/env bash
# Session 20, call C (carry .whl; ~5 minutes): the int4 bench at every default M (the table) on the final
# tree, then int3 / MXFP4 at M = 1 / 256 / 1024.
. scripts/h200_setup.sh
call_results c
step 260 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
step 180 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,1024 --cold none --no-eager \
  --json $R/bench_int3_mxfp4.json >$R/bench_int3_mxfp4.log 2>&1; grep -E "^(==|M  |1024|256 )" $R/bench_int3_mxfp4.log | cut -c1-150; pack
