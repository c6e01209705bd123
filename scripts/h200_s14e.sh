#!/usr/bin/env bash
# Session 14, call E (carry .whl; ~9 minutes): the final tree -- GPU tests of the defaults that moved (129-1023
# tokens) and of the stream-K join, then the bench: int4 at every M (eager, cold compile), the other three formats at
# M = 64 / 256 (the decode kernels at M <= 64 are unchanged from session 13: same SASS).
. scripts/h200_setup.sh
call_results e
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py \
  -k "(large_m_default and (129 or 256 or 257 or 700)) or (narrow_default and 257) or any_finisher or stream_k_wgmma or formats_small" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests.log | tail -8; pack
step 215 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "cold compile" $R/bench_int4.log | cut -c1-110 | head -3
grep -A3 "^Summary" $R/bench_int4.log | tail -3; pack
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 60 python3 -m vllm_humming.bench --formats $f --ms 64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
