#!/usr/bin/env bash
# Session 56's short call (when too little device time is left for h200_s56a.sh): the two K-warpgroup rules' bench
# A/Bs (HUMMING_NARROW64_WK 0 / 1 / 2 / 3 on the narrow layers at 48 / 64 tokens, HUMMING_NARROW16_WK 0 / 1 on 6144x4096
# at 9 / 16) and the GPU tests of the tiles they pick, nothing else.
. scripts/h200_setup.sh
call_results b
ab_bench n64wk0 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=0
ab_bench n64wk1 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=1
ab_bench n64wk2 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=2
ab_bench n64wk3 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=3
gpu_test wk 110 tests/test_gemm_direct_gpu.py -k "k_warpgroups and (wk4_ak256_s4 or tma) and not graph"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
ab_bench n16wk0 45 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench n16wk1 45 9,16 6144x4096 HUMMING_NARROW16_WK=1
echo "elapsed ${SECONDS}s"
