#!/usr/bin/env bash
# Session 51, call G (any card).  Calls E / F: the consumers' holds cost ~"hold + 0.45 us" per slot whatever the
# ring depth or scheduling, with the SM clock at its 1.98 GHz boost.  Is it holding the SLOT (the copy engine cannot
# refill it) rather than the time?  touch 2 releases each slot as soon as it is read, then holds.  On an H200: the
# bench of record first.
. scripts/h200_setup.sh
call_results g
step 150 python3 -m pytest -q -m gpu tests/test_stream_probe.py >"$R/gpu_probe.log" 2>&1
tail -2 "$R/gpu_probe.log" | cut -c1-200; pack
grep -q H200 "$OUT/device.txt" && int4_record 240
step 120 python3 -m vllm_humming.tuning.stream_probe --json "$R/probe_early.json" --sizes wide \
  --cases bulk_s16k_x8_p1_w8_t1_h,bulk_s16k_x8_p1_w8_t2,ring_s16k_x8_l8_w8_t1_h,ring_s16k_x8_l8_w8_t2 \
  >"$R/probe_early.txt" 2>&1
grep -E "#|bulk|ring" "$R/probe_early.txt" | grep -v "_d[0-9]" | cut -c1-130; pack
