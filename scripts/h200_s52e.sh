#!/usr/bin/env bash
# Session 52, call E.  (1) The whole-tile bulk rule at 33-64 tokens (heuristics.WIDE_BULK_64): its GPU test, and the
# int4 bench at M=64 with the rule off / on (same run).  (2) Is the ~0.45 µs a consumer hold costs beyond the byte
# budget (session 51: per 16 KB slot ~max(0.8 µs, hold + 0.45)) a cost per slot?  The same hold per byte in 8 / 16 /
# 32 KB slots (stream_probe's new cases; call D: the 16-token math holds ~935 cycles per 16 KB), whole card and
# under an H200's per-SM load.  On an H200 the bench of record comes first.
. scripts/h200_setup.sh
call_results e
grep -q H200 "$OUT/device.txt" && int4_record 240
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k wide_bulk_64 >"$R/gpu_wide_bulk_64.log" 2>&1
tail -2 "$R/gpu_wide_bulk_64.log" | cut -c1-200; pack
for v in 0 1; do
  HUMMING_WIDE_BULK_64=$v step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 33,64 --no-upstream \
    --no-eager --cold none --json "$R/bench_m64_wb$v.json" >"$R/bench_m64_wb$v.log" 2>&1
  echo "-- HUMMING_WIDE_BULK_64=$v"; grep "] ours" "$R/bench_m64_wb$v.log" | sed 's/.*int4-g128 //' | cut -c1-50
done; pack
P=bulk_s8k_x16,bulk_s32k,bulk_s16k_x8_p1_w8_t1_h
step 120 python3 -m vllm_humming.tuning.stream_probe --sizes wide --cases $P --json "$R/slots.json" >"$R/slots.txt" 2>&1
cut -c1-110 "$R/slots.txt"; pack
step 120 python3 -m vllm_humming.tuning.stream_probe --sizes wide --cases $P --reserve-sms 40 --json "$R/slots_r40.json" \
  >"$R/slots_r40.txt" 2>&1
cut -c1-110 "$R/slots_r40.txt"; pack
