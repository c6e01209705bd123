#!/usr/bin/env bash
# Session 50, call A (any card; the timings that decide defaults only on an H200).  (1) GPU tests of the two 16-token
# experiments (HUMMING_WHOLE_TILE_DECODE: whole-tile mma.sync bulk grids; HUMMING_DECODE_TM2: the direct decode with
# two atom rows per warp) and the probe's own test; (2) the bench A/B of both switches vs neither at 9 / 16 tokens on
# the wide layers they serve; (3) the 16-token tile sweep on 28672x4096 (tm1 / tm2, ring depth, a 56 KB prefetch,
# whole-tile bulk); (4) on an H200: the bench of record with the A/B's winner (>= 2 % faster, else neither), then the
# same sweep on the small and long layers, skip-math and the stream probe.
. scripts/h200_setup.sh
call_results a
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py \
  -k "whole_tile or tm2_switch" >"$R/gpu_tests.log" 2>&1; tail -3 "$R/gpu_tests.log" | cut -c1-200; pack
# x through ldmatrix costs 16 smem cycles per 16-row atom at 16 tokens: two atom rows per warp (tm2) halve it; the
# 128 KB pass over x before the main loop leaves HBM idle past the register ring: a 56 KB weight prefetch (pf56) covers it
tm_sweep() {
  SWEEP_TIMEOUT=100 HUMMING_WHOLE_TILE_DECODE=1 sweep_case m16_tm $I4 16 28672x4096 \
    bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s3_direct,bt16_wn14_tm1_wk2_ak256_s4_pf56_direct,bt16_wn7_tm2_wk2_ak256_s3_pf56_direct,bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn7_tm2_wk1_ak2_s8_bulk,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
}
ab() {  # NAME ENV...
  env "${@:2}" timeout 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,16 \
    --shapes 28672x4096,16384x4096,20480x5120 --no-upstream --no-eager --cold none --json "$R/ab_$1.json" \
    >"$R/ab_$1.log" 2>&1
  echo "-- $1: ${*:2}"; grep "] ours" "$R/ab_$1.log" | sed 's/.*int4-g128 //' | cut -c1-70
}
ab base HUMMING_WHOLE_TILE_DECODE=0 HUMMING_DECODE_TM2=0
ab whole HUMMING_WHOLE_TILE_DECODE=1 HUMMING_DECODE_TM2=0
ab tm2 HUMMING_WHOLE_TILE_DECODE=0 HUMMING_DECODE_TM2=1
WIN=$(python3 scripts/pick_switch.py 0.02 base="$R/ab_base.json" whole="$R/ab_whole.json" tm2="$R/ab_tm2.json" 2>"$R/ab_pick.txt")
grep -qE "[0-9]+ (failed|error)" "$R/gpu_tests.log" && WIN=base   # (a switch whose GPU test failed is not benched)
cat "$R/ab_pick.txt"; echo "winner: $WIN" | tee -a "$R/ab_pick.txt"; pack
if ! grep -q H200 "$OUT/device.txt"; then
  tm_sweep
  exit 0
fi
case "$WIN" in
  whole) export HUMMING_WHOLE_TILE_DECODE=1 ;;
  tm2) export HUMMING_DECODE_TM2=1 ;;
esac
echo "bench of record with: WHOLE_TILE=${HUMMING_WHOLE_TILE_DECODE:-0} TM2=${HUMMING_DECODE_TM2:-0}" | tee "$R/record_env.txt"
int4_record 300
unset HUMMING_WHOLE_TILE_DECODE HUMMING_DECODE_TM2
tm_sweep
export SWEEP_TIMEOUT=100
sweep_case m16_small_tm $I4 16 6144x4096 \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s3_direct,bt16_wn2_tm2_wk4_ak256_s3_direct,bt16_wn4_tm2_wk4_ak256_s3_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct
sweep_case m16_long_tm $I4 16 4096x14336 \
  bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s3_direct,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk4_ak256_s3_direct
# 64 tokens on the wide layer: the plan's 112 blocks of 256 rows (20 SMs idle) vs stream-K bulk grids over all SMs
sweep_case m64_wide_bulk $I4 64 28672x4096 \
  bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep_case m16_tm_skip $I4 16 28672x4096 \
  bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn7_tm2_wk2_ak256_s3_direct,bt16_wn7_tm2_wk2_ak256_s3_pf56_direct
step 150 python3 -m vllm_humming.tuning.stream_probe --json "$R/stream_probe.json" --sizes wide >"$R/stream_probe.txt" 2>&1
grep -E "torch|ldg_t256_u8_b2|bulk_s16k_x8|bulk_s32k_x4" "$R/stream_probe.txt" | cut -c1-100; pack
