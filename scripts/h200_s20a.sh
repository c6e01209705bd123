#!/usr/bin/env bash
# Session 20, call A (written in session 19 as h200_next.sh; carry .whl; ~8 minutes): session 19's experiment -- the TMA-x split-K wgmma tiles without a
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
# M=1, per-SM balance (session 19's lead): 28672x4096's default grid is 224 blocks of 128 rows on 264 slots -- 92 SMs
# stream two blocks, 40 one.  Seven-warp-row blocks give 256 tiles of 112 rows (bt8_wn7_tm1_wk2: 68 registers, two
# blocks per SM) or 128 of 224 rows (wn7 tm2 / wn14 tm1): one even wave (ptxas on the CPU machine: 68-123 registers,
# no spills).  Same run, against the defaults.
SWEEP_TIMEOUT=100 sweep_case m1_balance $I4 1 $SH \
  bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn7_tm1_wk2_ak256_s4_direct,bt8_wn7_tm2_wk2_ak256_s4_direct,bt8_wn7_tm2_wk1_ak256_s4_direct,bt8_wn14_tm1_wk1_ak256_s4_direct \
  --splits 1,2
