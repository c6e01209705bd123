#!/usr/bin/env bash
# Session 52, call D (call C + the ALU mixes, the slowest SM, the 16-token m64n16k16 shape): where the ALU / wgmma overlap goes missing (tuning.mma_probe's new split / ss / store / chain
# cases): one role per warpgroup, A from shared memory, the ALU's stores, the tile-major MMA order.
. scripts/h200_setup.sh
call_results d
grep -q H200 "$OUT/device.txt" && int4_record 240
step 120 python3 -m pytest -q -m gpu tests/test_mma_probe.py >"$R/gpu_mma_probe.log" 2>&1
tail -2 "$R/gpu_mma_probe.log" | cut -c1-200; pack
step 200 python3 -m vllm_humming.tuning.mma_probe --json "$R/mma_probe.json" >"$R/mma_probe.txt" 2>&1
cat "$R/mma_probe.txt" | cut -c1-130; pack
# (2) The warp-specialized bulk kernel on whole tiles (one 256-row tile per block: HUMMING_DEBUG_SMS = the layer's
# tiles) against the plan at 33-64 tokens on the wide layers (call B: 28672x4096 M=64 bulk s5 34.3 vs 36.0 µs, H100).
export SWEEP_TIMEOUT=100
C64=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
HUMMING_DEBUG_SMS=112 sweep_case wt_28672 $I4 33,48,64 28672x4096 $C64
HUMMING_DEBUG_SMS=78 sweep_case wt_19968 $I4 33,48,64 19968x4096 $C64
