#!/usr/bin/env bash
# Session 55's short K-warpgroup call (the device budget left ~450 s): the bench's own A/B of HUMMING_NARROW16_WK on
# 6144x4096 at 9 / 16 tokens (0 = the plan's 128-row polled split-K tile, 1 = one 64-row K-warpgroup block per tile,
# no split-K end), then the K-warpgroup GPU tests of the rule's tile (fp32 reference, graphs).
. scripts/h200_setup.sh
call_results c
ab_bench wk0 45 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench wk1 45 9,16 6144x4096 HUMMING_NARROW16_WK=1
gpu_test wk 70 tests/test_gemm_direct_gpu.py -k "k_warpgroups and (wk4 or graph)"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -6 | cut -c1-250
echo "elapsed ${SECONDS}s"
