#!/usr/bin/env bash
# Session 51, call A (any card).  (1) the stream probe's GPU test (probe_ring and the refactored probe_bulk: every word
# read exactly once); (2) the copy skeleton of the next 16-token decode: ring (cp.async load warps -> smem ring ->
# consumer warps) vs ldg and bulk on the wide layer (on an H100 also with 40 SMs held, an H200's per-SM load);
# (3) on an H200: the bench of record on this tree.
. scripts/h200_setup.sh
call_results a
step 150 python3 -m pytest -q -m gpu tests/test_stream_probe.py >"$R/gpu_probe.log" 2>&1
tail -3 "$R/gpu_probe.log" | cut -c1-200; pack
if grep -q H200 "$OUT/device.txt"; then
  int4_record 300
fi
step 120 python3 -m vllm_humming.tuning.stream_probe --json "$R/stream_probe.json" --sizes wide --cases ring,ldg,bulk \
  >"$R/stream_probe.txt" 2>&1
grep -vE "^\s*$" "$R/stream_probe.txt" | cut -c1-110 | head -40; pack
if ! grep -q H200 "$OUT/device.txt"; then
  step 120 python3 -m vllm_humming.tuning.stream_probe --json "$R/stream_probe_r40.json" --sizes wide \
    --cases ring,ldg,bulk --reserve-sms 40 >"$R/stream_probe_r40.txt" 2>&1
  grep -vE "^\s*$" "$R/stream_probe_r40.txt" | cut -c1-110 | head -40; pack
fi
