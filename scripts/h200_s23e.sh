#!/usr/bin/env bash
# Session 23, call E (carry .whl): the direct suite's format tests on the final tree (fp16 row16 decode the default;
# the full suites do not fit one call: call D ran ~20 % of them, no failure), then the int4 g128 bench with upstream at
# M = 1 / 16 / 64 / 256 (bf16 kernels unchanged apart from the direct kernel's shared-memory layout).
. scripts/h200_setup.sh
call_results e
step 170 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "formats or row16 or large_activations" >$R/gpu_formats.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_formats.log | tail -6; pack
step 230 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 --no-eager --cold none \
  --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/== w4a16/,$p' $R/bench_int4.log | head -30; pack
