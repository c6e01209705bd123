#!/usr/bin/env bash
# Session 16, call D (carry .whl; ~8 minutes): the bench on the final tree -- int4 at every M (eager, cold compile),
# int3 / MXFP4 at M = 1 / 16 / 64 / 128 / 256 (the two-atom defaults moved 33-1023 tokens for codes of <= 4 bits;
# no 8-bit default moved).
. scripts/h200_setup.sh
call_results d
step 215 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "cold compile" $R/bench_int4.log | cut -c1-110 | head -3
grep -A3 "^Summary" $R/bench_int4.log | tail -3; pack
for f in w4a16-mxfp4 w3a16-int3-g128; do
  step 70 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,128,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
# then what call C's limit cut: test_gemm_gpu.py and the end of the pipelines suite (stream-K / decode16 tests)
step 40 python3 scripts/prewarm_gemm.py --prefill-m 1024 >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 95 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py -k "not overhead and (gemm_gpu or stream_k or decode16_wgmma or cuda_graph)" \
  >$R/gpu_tests_rest.log 2>&1; grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -6; pack
