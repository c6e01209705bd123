#!/usr/bin/env bash
# Next session, call A (carry .whl and .shared_fixtures; ~9 minutes):
# 1. the HUMMING_FP16_ROW16 experiment (session 22, unmeasured: 4-bit codes in fp16 decoded with one shift per word
#    instead of three in the mma.sync decode kernel) -- its GPU test, then fp16 int4 g128 at M=1 on the two wide
#    layers' default choices with and without it (tuning.sweep --dtype float16; cuBLAS fp16 in the same run);
# 2. the GPU suites and the e2e fixture models on the current tree (default kernels byte-identical to session 21's;
#    the session-22 experiments are opt-in).
. scripts/h200_setup.sh
call_results a
step 120 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "fp16_row16" >$R/gpu_row16.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_row16.log | tail -4; pack
for v in "" HUMMING_FP16_ROW16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=120 sweep_case "row16_${v:-base}" w:int4,s:g128:float16 1,8 28672x4096,4096x14336 \
    bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct --dtype float16
done
step 380 python3 -m pytest -v -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py >$R/gpu_suites.log 2>&1
echo "suites: $(grep -c " PASSED" $R/gpu_suites.log) passed, $(grep -c " SKIPPED" $R/gpu_suites.log) skipped"
grep -E " FAILED|^FAILED|Error" $R/gpu_suites.log | tail -5; pack
e2e_fixtures; pack
