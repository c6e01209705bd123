#!/usr/bin/env bash
# Next session, call B (carry .whl and .shared_fixtures; ~7 minutes): the direct and pipeline GPU suites and the e2e
# fixture models on the current tree (default kernels byte-identical to session 21's; the session-22 experiments are
# opt-in).
. scripts/h200_setup.sh
call_results b
step 400 python3 -m pytest -v -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py >$R/gpu_suites.log 2>&1
echo "suites: $(grep -c " PASSED" $R/gpu_suites.log) passed, $(grep -c " SKIPPED" $R/gpu_suites.log) skipped"
grep -E " FAILED|^FAILED|Error" $R/gpu_suites.log | tail -5; pack
e2e_fixtures; pack
