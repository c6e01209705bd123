#!/usr/bin/env bash
# Session 29, call E (the tree of calls B-D): the int4 g128 bench (its kernels' SASS is unchanged except the 256-token
# tile's, reordered by run_segment's forced inlining) and fp8 128x128 blocks (a float format with group scales: the
# exponent fold), with upstream and cuBLAS in the same run.
. scripts/h200_setup.sh
call_results e
step 170 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256,512 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; pack
step 100 python3 -m vllm_humming.bench --formats w8a16-fp8-block --ms 1,16,64 --cold none --no-eager \
  --json "$R/bench_fp8_block.json" >"$R/bench_fp8_block.log" 2>&1
grep -A3 "^Summary" "$R/bench_fp8_block.log"; pack
