#!/usr/bin/env bash
# Session 16, call C (carry .whl and .shared_fixtures): the kernel cache filled in one parallel batch, then the GPU
# suites owed since session 14 (the pipelines suite's stream-K / bulk / wgmma / default-choice / graph tests,
# test_gemm_gpu.py, the direct suite, ops / prefill / dequant / JIT), the two-atom 257+ default, the 7 fixture models,
# and the wgmma main loop with two stage bodies instead of three (HUMMING_DEBUG_WG_TWO_BODIES: less NVRTC time).
. scripts/h200_setup.sh
call_results c
AK2=bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma,bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma
step 90 python3 scripts/prewarm_gemm.py ${AK2//,/ } >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 300 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py -k "not overhead" \
  >$R/gpu_tests_pipelines_gemm.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_pipelines_gemm.log | tail -8; pack
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack
C=$AK2,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma
SWEEP_TIMEOUT=70 sweep_case three_bodies $I4 64,128,256,512 "$SH" "$C"
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_TWO_BODIES SWEEP_TIMEOUT=70 sweep_case two_bodies $I4 64,128,256,512 "$SH" "$C"
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_ops_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py -k "not overhead" >$R/gpu_tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -8; pack
