#!/usr/bin/env bash
# Session 52, call E: is the ~0.45 µs a consumer hold costs beyond the byte budget (session 51: per 16 KB slot
# ~max(0.8 µs, hold + 0.45)) a cost per slot?  The same hold per byte in 8 / 16 / 32 KB slots (stream_probe's new
# cases; call D's probe: the 16-token math holds ~935 cycles per 16 KB), whole card and under an H200's per-SM load.
. scripts/h200_setup.sh
call_results e
grep -q H200 "$OUT/device.txt" && int4_record 240
P=bulk_s8k_x16,bulk_s32k,bulk_s16k_x8_p1_w8_t1_h
step 150 python3 -m vllm_humming.tuning.stream_probe --sizes wide --cases $P --json "$R/slots.json" >"$R/slots.txt" 2>&1
cut -c1-110 "$R/slots.txt"; pack
step 150 python3 -m vllm_humming.tuning.stream_probe --sizes wide --cases $P --reserve-sms 40 --json "$R/slots_r40.json" \
  >"$R/slots_r40.txt" 2>&1
cut -c1-110 "$R/slots_r40.txt"; pack
