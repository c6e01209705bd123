#!/usr/bin/env bash
# Next session's first call (any card; on an H200 the bench of record first -- session 48's one-token tiles have
# never been through it).  Session 51 (call H) found a warpgroup's dequant-like ALU work and its register-A wgmmas
# nearly ADD UP (tuning.mma_probe: one warpgroup 819 cycles / stage vs 513 MMA-only + 360 ALU-only; ping-pong of two
# warpgroups no better), and that sum predicts the 64-token wide kernel's 36.5 µs from its SASS.  (1) The probe with
# its mma.sync cases (an HMMA reads its registers at issue: does the ALU overlap there, and at what MMA rate?).
# (2) The current mma.sync 64-token tiles against the wgmma plan on the three shapes (their SASS: 271
# instructions per 64 HMMAs, vs 864 per 32 m64n64k16 wgmmas).
. scripts/h200_setup.sh
call_results a
grep -q H200 "$OUT/device.txt" && int4_record 240
step 120 python3 -m pytest -q -m gpu tests/test_mma_probe.py >"$R/gpu_mma_probe.log" 2>&1
tail -2 "$R/gpu_mma_probe.log" | cut -c1-200; pack
step 150 python3 -m vllm_humming.tuning.mma_probe --json "$R/mma_probe.json" >"$R/mma_probe.txt" 2>&1
cat "$R/mma_probe.txt" | cut -c1-130; pack
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
