#!/usr/bin/env bash
# Session 17, call D (carry .whl and .shared_fixtures; ~7 minutes): the final defaults' GPU tests (every default-choice
# test of the pipelines suite, the TMA suite, test_gemm_gpu.py, the 7 fixture models), then the int4 bench.
. scripts/h200_setup.sh
call_results d
step 100 python3 scripts/prewarm_gemm.py >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_wgmma_tma_x or default" >$R/gpu_tests_defaults.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_defaults.log | tail -6; pack
step 100 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_gemm.log | tail -6; pack
OUT=$R e2e_fixtures; pack
step 240 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -A12 "^== w4a16" $R/bench_int4.log | tail -12; pack
