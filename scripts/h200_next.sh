#!/usr/bin/env bash
# Next session, call A (carry .whl; ~8 minutes): the GPU suites session 20 did not finish on its final tree -- the
# direct and split-K-reducer suites (call I ran ~65 % of them before its step limit, all passed) and the pipelines
# suite's default-choice tests at every M (session 20 ran 129 / 1024 / 448 and the new tests); the kernel cache is
# filled in one parallel batch first.
. scripts/h200_setup.sh
call_results a
step 100 python3 scripts/prewarm_gemm.py --prefill-m 2048 >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 240 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_splitk_reducers_gpu.py >$R/gpu_direct.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_direct.log | tail -5; pack
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "default_choices" >$R/gpu_defaults.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_defaults.log | tail -5; pack
