#!/usr/bin/env bash
# Session 49, call B.  Call A (an H100) timed the stream skeletons and the GPU tests of the one-token tiles; its probe's
# consumers spent ~0.45 us per slot on 64-bit divisions (fixed since).  Here: on an H200 the bench of record, the
# fixed probe, the real 16-token kernels' pipelines alone (HUMMING_SKIP_MATH), session 48's 16-token sweeps and ncu;
# on any other card only the fixed probe (whole card and 40 SMs held).
. scripts/h200_setup.sh
call_results b
probe() {  # NAME [args]
  step 150 python3 -m vllm_humming.tuning.stream_probe --json "$R/$1.json" "${@:2}" >"$R/$1.txt" 2>&1
  grep -E "torch|ldg_t256_u8_b2|bulk_s16k_x8|bulk_s32k_x4|bulk_s8k_x8" "$R/$1.txt" | cut -c1-100; pack
}
# whole-tile bulk grids on the wide layer at 16 tokens: 128 blocks of 224 rows (mma.sync math warps) or 112 of 256
# (wgmma) -- one tile per block, no stream-K joins -- planned through HUMMING_DEBUG_SMS (the bulk grid = the SM count)
WS=bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak1_s12_bulk,bt16_wn7_tm2_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak4_s4_bulk
whole_tiles() {
  export SWEEP_TIMEOUT=100
  HUMMING_DEBUG_SMS=128 sweep_case ws128_wide $I4 16 28672x4096 $WS
  HUMMING_DEBUG_SMS=112 sweep_case ws112_wide $I4 16 28672x4096 bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
  sweep_case ws132_wide $I4 16 28672x4096 $WS
  # (128-row blocks fit two per SM: 64 "SMs" give the 128-block grid)
  HUMMING_DEBUG_SMS=128 sweep_case ws128_more $I4 16 20480x5120 bt16_wn10_tm1_wk1_ak2_s8_bulk
  HUMMING_DEBUG_SMS=64 sweep_case ws64_more $I4 16 16384x4096 bt16_wn8_tm1_wk1_ak2_s8_bulk
  sweep_case ws132_more $I4 16 16384x4096,20480x5120 bt16_wn8_tm1_wk1_ak2_s8_bulk
  HUMMING_DEBUG_SMS=128 HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep_case ws128_skip $I4 16 28672x4096 bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak1_s12_bulk
  HUMMING_DEBUG_SMS=128 step 60 python3 scripts/check_choice.py $I4 bt16_wn14_tm1_wk1_ak2_s8_bulk 28672x4096 9,16 > $R/check_ws.log 2>&1
  grep -c "^OK" $R/check_ws.log; grep "^BAD" $R/check_ws.log | head -3; pack
}
if ! grep -q H200 "$OUT/device.txt"; then
  whole_tiles
  probe stream_probe_r40 --reserve-sms 40 --cases bulk_s16k,ldg_t256_u8 --sizes wide
  exit 0
fi
int4_record 300
whole_tiles
probe stream_probe
export SWEEP_TIMEOUT=100
export HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH
sweep_case skip_wide $I4 1,16 28672x4096 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt16_wn14_tm1_wk2_ak256_s4_direct
unset HUMMING_DEBUG_DEFINES
sweep_case full_wide $I4 16 28672x4096 bt16_wn12_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn12_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct
sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
sweep_case m16_long $I4 12,16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s4_pfr64_direct,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
ncu_case ncu_bulk16 $I4 28672 4096 16 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
ncu_case ncu_m64_small $I4 6144 4096 64 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
