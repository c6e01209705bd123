#!/usr/bin/env bash
# Session 56's short call (when too little device time is left for h200_s56a.sh): the two K-warpgroup rules' bench
# A/Bs (ab_k_warpgroups) and the GPU tests of the tiles they pick, nothing else.  Results packed after every step.
. scripts/h200_setup.sh
call_results b
ab_k_warpgroups 45
gpu_test wk 90 tests/test_gemm_direct_gpu.py -k "k_warpgroups and (wk4_ak256_s4 or tma) and not graph"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
echo "elapsed ${SECONDS}s"
