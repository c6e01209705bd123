#!/usr/bin/env bash
# Next session, call A (carry .whl; ~9 minutes): (1) session 20's last experiment, built after its device budget was
# spent -- HUMMING_DEBUG_SPLITK_TICKET_FIRST (gemm_wna16.cuh, splitk_epilogue: 8-token wgmma tiles take the split-K
# ticket before storing their partial, so the last block's chain loses its own stores + fence; 6144x4096 M=1's split-K
# end costs 1.9 of 7.8 us): its bit-identity test, then the M=1 default with and without it on the narrow layers
# that run the 8-token wgmma tile; (2) the GPU suites session 20 did not finish on its final kernels -- the direct and
# split-K-reducer suites (call I ran ~65 % of them, all passed); (3) an in-place ring refill for the 224-row decode
# block (below).
. scripts/h200_setup.sh
call_results a
step 120 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k splitk_8_token >$R/gpu_ticket8.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_ticket_first.log | tail -5; pack
for def in "" HUMMING_DEBUG_SPLITK_TICKET_FIRST; do
  HUMMING_DEBUG_DEFINES=$def SWEEP_TIMEOUT=60 sweep_case m1_${def:-default} $I4 1,4 6144x4096,8192x4096,3072x4096 \
    bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
done
# (3) 28672x4096 M=1: the 224-row default with its ring consumed in place (HUMMING_REFILL_AFTER_MATH: 62 instead of 70
# registers, the same one block per SM -- so no occupancy lost, unlike session 12's 128-row test), ring depths 4 / 6
for def in "" HUMMING_REFILL_AFTER_MATH; do
  HUMMING_DEBUG_DEFINES=$def SWEEP_TIMEOUT=60 sweep_case m1w_${def:-default} $I4 1 28672x4096 \
    bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s6_direct
done
# (2) the suites, in the time left (the device kills the call at 600 s)
step $(( 560 - SECONDS > 30 ? 560 - SECONDS : 30 )) python3 -m pytest -v -m gpu tests/test_splitk_reducers_gpu.py tests/test_gemm_direct_gpu.py >$R/gpu_direct.log 2>&1
echo "direct+reducers: $(grep -c " PASSED" $R/gpu_direct.log) passed, $(grep -c " SKIPPED" $R/gpu_direct.log) skipped"; grep -E " FAILED|^FAILED|Error|passed|failed" $R/gpu_direct.log | tail -5; pack
