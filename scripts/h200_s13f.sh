#!/usr/bin/env bash
# Session 13, call F (carry .whl): GPU tests of the final tree (the reducers, the defaults changed after call E:
# 65-128 narrow -> cp.async ticketed splits, 129-256 narrow K > 4096 -> 256-row tiles for int3 / int4 / float; the
# direct suite; test_gemm_gpu), then the int4 bench at every M.  scripts/h200_s13g.sh benches the other formats.
. scripts/h200_setup.sh
call_results f
step 200 python3 -m pytest -q -m gpu tests/test_splitk_reducers_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py \
  tests/test_gemm_direct_gpu.py -k "reducers or large_m_default or narrow_default or decode16_wgmma_default or test_gemm_gpu or direct" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests.log | tail -8; pack
step 230 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "cold compile" $R/bench_int4.log | cut -c1-110 | head -3
grep -A3 "^Summary" $R/bench_int4.log | tail -3; pack
