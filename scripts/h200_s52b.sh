#!/usr/bin/env bash
# Session 52's second call (split from h200_s52a.sh: the two no longer fit one 600 s call with the bench of record).
. scripts/h200_setup.sh
call_results b
# (call A: the mma.sync cases run at 1557 cycles / stage MMA-only (wgmma 1025) and add to the ALU (2012 both), so the
# mma.sync 64-token sweep planned here is dropped)
export SWEEP_TIMEOUT=150
# (3) Why the warp-specialized bulk kernel loses at 64 tokens although its loop issues 330 instructions per stage
# against the plan's 432 (the additive model: ~27 vs 36.5 µs): with 112 "SMs" planned its stream-K grid is one
# whole 256-row tile per block (no parked partials, no joins) -- the same grid as the plan's cp.async kernel.
# (s5 / s6: 170 / 204 KB rings -- the bulk kernel releases a slot one stage late, so s4 keeps only ~2 stages ahead)
HUMMING_DEBUG_SMS=112 sweep_case m64_wide_bulk112 $I4 64 28672x4096 \
  bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
ncu_case ncu_m64_bulk $I4 28672 4096 64 bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
# (4) What the dequant and the MMAs each cost the two 64-token kernels on those grids (wrong results, timing only):
# the raw words as the MMA operand (HUMMING_DEBUG_WG_SKIP_DEQUANT) and no tensor-core work (HUMMING_DEBUG_WG_SKIP_MMA).
for d in HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA; do
  HUMMING_DEBUG_SMS=112 HUMMING_DEBUG_DEFINES=$d SWEEP_TIMEOUT=90 sweep_case "m64_wide_bulk112_$d" $I4 64 28672x4096 \
    bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
done
