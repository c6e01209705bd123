#!/usr/bin/env bash
# Session 27, call C: the new decode rules for fp8 weight-only and NVFP4 (heuristics._direct_defaults) on the GPU --
# the new test_float_decode_defaults and every GPU gemm test of a float format -- then the bench of the three
# formats at 1 / 16 / 64 tokens with upstream in the same run.
. scripts/h200_setup.sh
call_results c
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -q $par -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_gemm_direct_gpu.py \
  -k "float_decode or e4m3 or e5m2 or e2m1 or float8 or float4" >$R/gpu_float.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_float.log | tail -8; pack
step 220 python3 -m vllm_humming.bench --formats w8a16-fp8-channel,w8a16-fp8-block,w4a16-nvfp4 --ms 1,16,64 --cold none \
  --no-eager --json $R/bench_float.json >$R/bench_float.log 2>&1; grep -A8 "^Summary" $R/bench_float.log; pack
