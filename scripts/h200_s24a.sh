#!/usr/bin/env bash
# Session 24, call A (carry .whl, .shared_fixtures): bf16 staged as fp16 (HUMMING_BF16_AS_FP16) vs the bf16 decode at
# M = 1 / 2 / 4 / 8 on the wide layers' decode choices (where the staging stops paying); then every GPU suite on one
# tree in one call, run by pytest-xdist (8 workers share the GPU: on a cold JIT cache the suites are NVRTC-bound),
# with the slowest tests listed; then the e2e fixture models.
. scripts/h200_setup.sh
call_results a
C=bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct
for v in "" HUMMING_BF16_AS_FP16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=80 sweep_case "x16_${v:-base}" $I4 1,2,4,8 28672x4096,4096x14336 $C
done
pack
step 390 python3 -m pytest -q -n 8 --dist load --durations=25 -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py \
  tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py -k "not overhead" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|^ERROR|passed|failed" $R/gpu_tests.log | tail -12; pack
OUT=$R e2e_fixtures; pack
