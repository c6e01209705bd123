#!/usr/bin/env bash
# Session 55's K-warpgroup call: the direct wgmma kernel's K-warpgroups (bt16_wn4_tm1_wk4: one 64-row tile's whole K
# in one block, the K-warpgroups summed in shared memory -- no cross-block split-K end on 6144x4096 at 9-16 tokens).
# Their GPU tests, the bench's own A/B of the rule (HUMMING_NARROW16_WK, with and without the early PDL release), a
# sweep of ring depths / K-warpgroup counts / forced splits, then (time left, an H200) the int4 bench of record.
. scripts/h200_setup.sh
call_results b
ab_bench wk0 60 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench wk1 60 9,16 6144x4096 HUMMING_NARROW16_WK=1
ab_bench wk1e 60 9,16 6144x4096 HUMMING_NARROW16_WK=1 HUMMING_PDL_EARLY_RELEASE=1
gpu_test wk 100 tests/test_gemm_direct_gpu.py -k "k_warpgroups"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
WK=bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s6_direct_wgmma
WK=$WK,bt16_wn4_tm1_wk4_ak256_s8_direct_wgmma,bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma,bt16_wn8_tm1_wk2_ak256_s4_direct_wgmma
SWEEP_TIMEOUT=90 sweep_case wk_narrow "$I4" 16 6144x4096 "$WK" --splits 1,2
echo "elapsed ${SECONDS}s"
if grep -q H200 "$OUT/device.txt" && [ $SECONDS -lt 250 ]; then int4_record 200; fi
