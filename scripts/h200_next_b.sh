#!/usr/bin/env bash
# Next session, call B (carry .whl): the GPU suites session 12 did not re-run on its final defaults (their kernels and
# choices did not change there, but the last full pass was session 10 / 11).
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
step 330 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py >$R/gpu_tests_pipelines.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_pipelines.log | tail -6; pack
step 220 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py -k "not overhead" >$R/gpu_tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -6; pack
