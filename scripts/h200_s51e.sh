#!/usr/bin/env bash
# Session 51, call E (any card).  probe_bulk with dynamic scheduling (`dyn`: blocks take chunks of slots from a
# global counter): its GPU test (every word once, counters back at zero), then the bulk cases on the wide layer --
# static vs dynamic with the consumers holding each slot 0 / 400 / 800 / 1200 cycles (call A: holds that fit the
# per-SM byte budget still cost 6-27 % with static runs).  On an H100 also with 40 SMs held; on an H200 the bench of
# record first.
. scripts/h200_setup.sh
call_results e
step 150 python3 -m pytest -q -m gpu tests/test_stream_probe.py >"$R/gpu_probe.log" 2>&1
tail -3 "$R/gpu_probe.log" | cut -c1-200; pack
grep -q H200 "$OUT/device.txt" && int4_record 240
probe() {  # NAME [args]
  step 150 python3 -m vllm_humming.tuning.stream_probe --json "$R/$1.json" --sizes wide --cases bulk_s16k_x8_p1_w8 \
    "${@:2}" >"$R/$1.txt" 2>&1
  grep -E "#|bulk" "$R/$1.txt" | cut -c1-100; pack
}
probe stream_probe_dyn
grep -q H200 "$OUT/device.txt" || probe stream_probe_dyn_r40 --reserve-sms 40
