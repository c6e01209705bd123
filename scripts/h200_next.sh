#!/usr/bin/env bash
# Next session, call A (carry .whl; ~9 minutes): what session 16 could not finish -- the GPU suites its call C lost to
# the call limit (direct / ops / prefill / dequant / JIT / reducers, and the last pipelines tests), each in its own
# step after one parallel prewarm; the int3 / MXFP4 bench with room for upstream; the cold compile after a warm-up.
. scripts/h200_setup.sh
call_results a
step 60 python3 scripts/prewarm_gemm.py --prefill-m 1024 >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "not overhead" >$R/gpu_tests_direct.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_direct.log | tail -4; pack
step 120 python3 -m pytest -q -m gpu tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py -k "not overhead" >$R/gpu_tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -4; pack
step 60 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "stream_k or decode16_wgmma" >$R/gpu_tests_tail.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_tail.log | tail -4; pack
for f in w4a16-mxfp4 w3a16-int3-g128; do
  step 120 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
