#!/usr/bin/env bash
# Session 20, call C (carry .whl; ~6 minutes): the 224-row decode default switched to fourteen warp rows
# (bt8_wn14_tm1_wk2, call B's sweep) -- its GPU test -- then the int4 bench at every default M (the table) on
# the final tree, and int3 / MXFP4 at M = 256 / 1024.
. scripts/h200_setup.sh
call_results c
step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "wide_decode_224" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
step 260 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
step 150 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,1024 --cold none --no-eager \
  --json $R/bench_int3_mxfp4.json >$R/bench_int3_mxfp4.log 2>&1; grep -E "^(==|M  |1024|256 )" $R/bench_int3_mxfp4.log | cut -c1-150; pack
