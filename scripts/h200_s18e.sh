#!/usr/bin/env bash
# Session 18, call E (carry .whl): call D's GPU tests again (its test module did not collect: fixed).
. scripts/h200_setup.sh
call_results e
step 70 python3 scripts/prewarm_gemm.py >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bt256 or wave_cliff or too_big or (test_large_m_default_choices and (1024 or 1500 or 129 or 256))" >$R/gpu_s18.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_s18.log | tail -12; pack
