#!/usr/bin/env bash
# Session 55's second script: the direct wgmma kernel's K-warpgroups (bt16_wn4_tm1_wk4: one 64-row tile's whole K in
# one block, the K-warpgroups summed in shared memory -- no cross-block split-K end on 6144x4096 at 9-16 tokens).
# Their GPU tests, a sweep against the plan's choice (one / two / three splits), then the int4 bench of record with
# upstream in the same run (sessions 48-54's defaults; an H200 makes it the issue's table).
. scripts/h200_setup.sh
call_results b
gpu_test wk 150 tests/test_gemm_direct_gpu.py -k "k_warpgroups"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
WK=bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s6_direct_wgmma
WK=$WK,bt16_wn4_tm1_wk4_ak256_s8_direct_wgmma,bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma,bt16_wn8_tm1_wk2_ak256_s4_direct_wgmma
SWEEP_TIMEOUT=150 sweep_case wk_narrow "$I4" 9,16 6144x4096,4096x4096 "$WK" --splits 1,2,3
int4_record 200
