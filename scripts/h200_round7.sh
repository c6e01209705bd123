#!/usr/bin/env bash
# Round 7: the warp-private cp.async mainloop (gemm_wna16_warp.cuh) -- correctness and a sweep vs the default.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 HUMMING_CACHE_DIR=/tmp/humming-cache
python3 -m pip install -q --no-deps --no-build-isolation -e . >$OUT/install.log 2>&1 || { tail $OUT/install.log; exit 1; }
timeout 60 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "warp" >$OUT/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|rror" $OUT/gpu_tests.log | head -8
timeout 40 python3 -m vllm_humming.tuning.sweep --ms 1 --choices bt8_wn4_tm2_wk1_ak1_s6_warp,bt8_wn4_tm2_wk1_ak1_s4_warp,bt8_wn4_tm2_wk1_ak1_s10_warp \
  --json $OUT/sweep_warp_m1.json 2>&1 | tee $OUT/sweep.log | grep -v "^      "
timeout 35 python3 -m vllm_humming.tuning.sweep --ms 16 --choices bt16_wn4_tm2_wk1_ak1_s6_warp,bt16_wn4_tm2_wk1_ak1_s4_warp \
  --json $OUT/sweep_warp_m16.json 2>&1 | tee -a $OUT/sweep.log | grep -v "^      "
timeout 35 python3 -m vllm_humming.tuning.sweep --ms 64 --choices bt64_wn4_tm2_wk1_ak1_s3_warp,bt64_wn4_tm2_wk1_ak1_s2_warp \
  --json $OUT/sweep_warp_m64.json 2>&1 | tee -a $OUT/sweep.log | grep -v "^      "
