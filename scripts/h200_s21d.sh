#!/usr/bin/env bash
# Session 21, call D (carry .whl; ~7 minutes): the committed tree -- the 8-token ticket test, the split-K reducer and
# gemm suites -- then the int4 bench (the table) with cuBLAS and upstream humming in the same run.
. scripts/h200_setup.sh
call_results d
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_splitk_reducers_gpu.py tests/test_gemm_gpu.py \
  -k "splitk_8_token or reducers or gemm_gpu or not direct" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -6; pack
step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
