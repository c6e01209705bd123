#!/usr/bin/env bash
# Next session, call A (carry .whl; ~8 minutes): session 19's experiment -- the TMA-x split-K wgmma tiles without a
# block barrier in the main loop (HUMMING_DEBUG_DEFINES=HUMMING_WG_DECOUPLED, gemm_wna16.cuh): its bit-identity test,
# then the same int4 sweep with and without it at M = 64 / 256 / 1024 (ncu, session 19: the 256-token tile's two
# warpgroups drain the tensor pipe at every stage barrier, 71.6 % busy against upstream's ~85 %); and the 385-512-token
# rule of session 19 through the layer's own plan (test_large_m_default_choices at M=448: not yet GPU-tested).
. scripts/h200_setup.sh
call_results a
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "wg_decoupled or (test_large_m_default_choices and 448)" \
  >$R/gpu_tests.log 2>&1; grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -6; pack
C64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma
C256=bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma
C1024=bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma
for def in "" HUMMING_WG_DECOUPLED; do
  tag=${def:-coupled}
  HUMMING_DEBUG_DEFINES=$def SWEEP_TIMEOUT=100 sweep_case m64_$tag $I4 64 $SH $C64
  HUMMING_DEBUG_DEFINES=$def SWEEP_TIMEOUT=100 sweep_case m256_$tag $I4 256 $SH $C256
  HUMMING_DEBUG_DEFINES=$def SWEEP_TIMEOUT=120 sweep_case m1024_$tag $I4 1024 $SH $C1024
done
