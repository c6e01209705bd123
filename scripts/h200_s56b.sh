#!/usr/bin/env bash
# Session 56's short call (when too little device time is left for h200_s56a.sh): the two K-warpgroup rules' bench
# A/Bs and their GPU tests, nothing else.
. scripts/h200_setup.sh
call_results b
ab_bench n64wk0 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=0
ab_bench n64wk1 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=1
ab_bench n64wk2 50 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=2
ab_bench n16wk0 45 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench n16wk1 45 9,16 6144x4096 HUMMING_NARROW16_WK=1
gpu_test wk 120 tests/test_gemm_direct_gpu.py -k "k_warpgroups and not graph"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
echo "elapsed ${SECONDS}s"
