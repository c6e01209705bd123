#!/usr/bin/env bash
# Next session, call A (carry .whl; ~8 minutes): the GPU suites and the int4 bench on the current tree -- the session-21
# ticket change (one acq_rel atomic for the 8-token split-K end) ran its own test and the reducer / gemm suites in
# call D only; the direct and pipeline suites beyond that were last complete before it.
. scripts/h200_setup.sh
call_results a
step 380 python3 -m pytest -v -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py >$R/gpu_suites.log 2>&1
echo "suites: $(grep -c " PASSED" $R/gpu_suites.log) passed, $(grep -c " SKIPPED" $R/gpu_suites.log) skipped"
grep -E " FAILED|^FAILED|Error" $R/gpu_suites.log | tail -5; pack
e2e_fixtures; pack
