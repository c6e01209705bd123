#!/usr/bin/env bash
# Session 51, call I (any card; on an H200 the bench of record first).  Call H: a warpgroup's ALU work and its register-A wgmmas nearly add up (one warpgroup: 819 cycles / stage vs 513 + 360); ping-pong does not help.  Now with the mma.sync cases too (the same MACs through m16n8k16). The ALU / wgmma overlap probe
# (tuning/mma_probe.py, mma_probe.cuh): its GPU test, then every default case -- does a warpgroup's dequant-like work
# overlap its own in-flight register-A wgmmas, and does ping-pong ordering of two warpgroups change it?
. scripts/h200_setup.sh
call_results i
grep -q H200 "$OUT/device.txt" && int4_record 240
step 120 python3 -m pytest -q -m gpu tests/test_mma_probe.py >"$R/gpu_mma_probe.log" 2>&1
tail -2 "$R/gpu_mma_probe.log" | cut -c1-200; pack
step 150 python3 -m vllm_humming.tuning.mma_probe --json "$R/mma_probe.json" >"$R/mma_probe.txt" 2>&1
cat "$R/mma_probe.txt" | cut -c1-130; pack
