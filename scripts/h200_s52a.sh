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
