#!/usr/bin/env bash
# Session 56's last-minutes call: HUMMING_NARROW64_WK 0 / 1 / 2 / 3 (narrow layers, 48 / 64 tokens), the GPU tests of
# its two tiles, then HUMMING_NARROW16_WK 0 / 1 (6144x4096, 9 / 16 tokens).  Results packed after every step.
. scripts/h200_setup.sh
call_results c
ab_bench n64wk0 45 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=0
ab_bench n64wk1 45 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=1
ab_bench n64wk2 45 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=2
ab_bench n64wk3 45 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=3
gpu_test wk 75 tests/test_gemm_direct_gpu.py -k "staged_wgmma_k_warpgroups and (wn4_tm1_wk2_ak2_s4_tma or wn8_tm1_wk2_ak2_s4_tma or wk2_ak4_s3_tma) and not graph"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -6 | cut -c1-250
ab_bench n16wk0 40 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench n16wk1 40 9,16 6144x4096 HUMMING_NARROW16_WK=1
echo "elapsed ${SECONDS}s"
