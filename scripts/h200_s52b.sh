#!/usr/bin/env bash
# Session 52's second call (split from h200_s52a.sh: the two no longer fit one 600 s call with the bench of record).
. scripts/h200_setup.sh
call_results b
export SWEEP_TIMEOUT=150
sweep_case m64_sync $I4 64 $SH \
  bt64_wn8_tm2_wk1_ak2_s4,bt64_wn8_tm1_wk1_ak2_s4,bt64_wn4_tm2_wk2_ak2_s4,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
# (3) Why the warp-specialized bulk kernel loses at 64 tokens although its loop issues 330 instructions per stage
# against the plan's 432 (the additive model: ~27 vs 36.5 µs): with 112 "SMs" planned its stream-K grid is one
# whole 256-row tile per block (no parked partials, no joins) -- the same grid as the plan's cp.async kernel.
# (s5 / s6: 170 / 204 KB rings -- the bulk kernel releases a slot one stage late, so s4 keeps only ~2 stages ahead)
HUMMING_DEBUG_SMS=112 sweep_case m64_wide_bulk112 $I4 64 28672x4096 \
  bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
ncu_case ncu_m64_bulk $I4 28672 4096 64 bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
