#!/usr/bin/env bash
# Session 38, call D: call C's suites showed ~30 failures (F) around 80-89 % of the run and then ran out of time
# without a summary: the same suites again, verbose (one line per test with its name), short tracebacks.
. scripts/h200_setup.sh
call_results d
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 470 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
    tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py \
    tests/test_moe_gpu.py tests/test_act_quant_gpu.py -k "not overhead" >$R/gpu_tests_v.log 2>&1
grep -E "FAILED|passed|failed" $R/gpu_tests_v.log | cut -c1-200 | tail -40; pack
