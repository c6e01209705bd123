#!/usr/bin/env bash
# Session 50, call A (any card; the timings that decide defaults only on an H200).  What session 49 could not run:
# (1) the GPU test of HUMMING_WHOLE_TILE_DECODE (the mma.sync whole-tile bulk decode, off by default) and the probe's
# own test; (2) the whole-tile A/B through the bench at 9 / 16 tokens on the layers it serves (1 vs 0); (3) the
# 16-token tm2 / pf56 sweep (any card); (4) on an H200 the same on the small and long layers, skip-math, the probe.
. scripts/h200_setup.sh
call_results a
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_stream_probe.py -k "whole_tile or stream" \
  >"$R/gpu_tests.log" 2>&1; tail -3 "$R/gpu_tests.log" | cut -c1-200; pack
for v in 1 0; do
  HUMMING_WHOLE_TILE_DECODE=$v timeout 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,16 \
    --shapes 28672x4096,16384x4096,20480x5120 --no-upstream --no-eager --cold none >"$R/ab_whole$v.log" 2>&1
  echo "-- HUMMING_WHOLE_TILE_DECODE=$v"; grep "] ours" "$R/ab_whole$v.log" | sed 's/.*int4-g128 //' | cut -c1-70
done; pack
# x through ldmatrix costs 16 smem cycles per 16-row atom at 16 tokens: two atom rows per warp (tm2) halve it; the
# 128 KB pass over x before the main loop leaves HBM idle past the register ring: a 56 KB weight prefetch (pf56) covers it
SWEEP_TIMEOUT=100 HUMMING_WHOLE_TILE_DECODE=1 sweep_case m16_tm $I4 16 28672x4096 \
  bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s3_direct,bt16_wn14_tm1_wk2_ak256_s4_pf56_direct,bt16_wn7_tm2_wk2_ak256_s3_pf56_direct,bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn7_tm2_wk1_ak2_s8_bulk,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
grep -q H200 "$OUT/device.txt" || exit 0
# H200 only: the same question on the small and long layers, the tm2 tile without math, the fixed probe
export SWEEP_TIMEOUT=100
sweep_case m16_small_tm $I4 16 6144x4096 \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s3_direct,bt16_wn2_tm2_wk4_ak256_s3_direct,bt16_wn4_tm2_wk4_ak256_s3_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct
sweep_case m16_long_tm $I4 16 4096x14336 \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s3_direct,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk4_ak256_s3_direct
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep_case m16_tm_skip $I4 16 28672x4096 \
  bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s3_direct,bt16_wn7_tm2_wk2_ak256_s3_pf56_direct
step 150 python3 -m vllm_humming.tuning.stream_probe --json "$R/stream_probe.json" --sizes wide >"$R/stream_probe.txt" 2>&1
grep -E "torch|ldg_t256_u8_b2|bulk_s16k_x8|bulk_s32k_x4" "$R/stream_probe.txt" | cut -c1-100; pack
