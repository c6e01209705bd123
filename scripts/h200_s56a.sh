#!/usr/bin/env bash
# Session 56's call: session 55's K-warpgroup decode (HUMMING_NARROW16_WK A/B on 6144x4096 at 9 / 16 tokens), the
# staged wgmma K-warpgroups (session 56: the TMA-x wgmma kernel with two warpgroup rows, one atom of each stage
# each -- for 64 tokens on the narrow layers without a cross-block split-K sum) -- their GPU tests and sweeps --, then
# (time left, an H200) the int4 bench of record.
. scripts/h200_setup.sh
call_results a
ab_bench wk0 60 9,16 6144x4096 HUMMING_NARROW16_WK=0
ab_bench wk1 60 9,16 6144x4096 HUMMING_NARROW16_WK=1
gpu_test wk 150 tests/test_gemm_direct_gpu.py -k "k_warpgroups"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
M64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk2_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk2_ak2_s4_tma_wgmma
M64=$M64,bt64_wn4_tm1_wk2_ak2_s6_tma_wgmma,bt64_wn4_tm2_wk2_ak2_s4_tma_wgmma,bt128_wn4_tm1_wk2_ak2_s3_tma_wgmma
SWEEP_TIMEOUT=100 sweep_case m64_wk "$I4" 64 6144x4096,4096x14336 "$M64" --splits 1,2
WK=bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s6_direct_wgmma
WK=$WK,bt16_wn4_tm1_wk4_ak256_s8_direct_wgmma,bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma
SWEEP_TIMEOUT=80 sweep_case wk_narrow16 "$I4" 16 6144x4096 "$WK" --splits 1,2
echo "elapsed ${SECONDS}s"
if grep -q H200 "$OUT/device.txt" && [ $SECONDS -lt 330 ]; then int4_record 200; fi
