#!/usr/bin/env bash
# Session 24, call B (carry .whl): (1) the x16 twin by default at 1-2 tokens (KernelChoice.x16, plan alternative
# "x16"): its GPU tests (forced x16 choices over formats / K tails / extreme activations; the layers' own plans on
# 28672x4096 and 4096x14336 at M = 1 / 2 / 3 / 8) and the int4 bench at M = 1 / 2 without peers; (2) load balance
# on the wide layer (28672x4096: 448 m64 row tiles on 132 SMs -- every whole-K grid puts 256 rows on its busiest SM
# against 217 on average): finer grids whose busiest SM gets ~224 row-equivalents (128-row blocks in clusters of 4
# K-splits, 64-row blocks in clusters of 2 / 4, 128-row ticketed splits forced to 4, stream-K over the 256-row tiles)
# against the defaults at M = 16 and 64.
. scripts/h200_setup.sh
call_results b
step 200 python3 -m pytest -q -n 8 -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py \
  -k "x16 or row16 or int4_shapes or fp16_decode" >$R/gpu_x16.log 2>&1
grep -E "^FAILED|^ERROR|passed|failed" $R/gpu_x16.log | tail -8; pack
AB_ARGS="--ms 1,2" ab_int4 x16_default
M16=bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s2_c4_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s4_c2_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s4_c4_direct_wgmma
SWEEP_TIMEOUT=100 sweep_case m16_wide $I4 16 28672x4096 $M16
M64=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_c4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_sk_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_sk_wgmma
SWEEP_TIMEOUT=100 sweep_case m64_wide $I4 64 28672x4096 $M64
SWEEP_TIMEOUT=100 sweep_case m64_wide_x4 $I4 64 28672x4096 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma --splits 2,4
pack
