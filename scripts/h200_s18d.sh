#!/usr/bin/env bash
# Session 18, call D (carry .whl): the session-18 defaults (256-token tiles from 513 tokens and on wide layers at
# 129-256, stream-K twins on wave cliffs, prefill threshold 2048 for codes of <= 4 bits) -- GPU tests, then the bench.
. scripts/h200_setup.sh
call_results d
step 90 python3 scripts/prewarm_gemm.py >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 210 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bt256 or wave_cliff or too_big or (test_large_m_default_choices and (1024 or 1500 or 129 or 256))" >$R/gpu_s18.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_s18.log | tail -8; pack
step 160 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -A8 "^Summary" $R/bench_int4.log; grep -E "cold compile|eager" $R/bench_int4.log | head -4; pack
step 100 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,1024 --cold none --no-eager \
  --json $R/bench_int3_mxfp4.json >$R/bench_int3_mxfp4.log 2>&1; grep -A6 "^Summary" $R/bench_int3_mxfp4.log; pack
