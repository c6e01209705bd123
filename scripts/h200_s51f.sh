#!/usr/bin/env bash
# Session 51, call F (any card).  Call E: dynamic scheduling recovers little of what the consumers' holds cost, and
# the per-slot times fit "hold + ~700-900 cycles" -- as if the SM clock under a streaming load were far below its
# 1.98 GHz boost.  Measure it: (1) the probe's GPU test (now also checks the clock it reports); (2) the bulk cases
# with block 0's SM cycles / ns printed; (3) nvidia-smi sampling the SM clock and power every 50 ms while the int4
# bench runs M = 1 / 16 on the wide layer (its own kernels, the same graph replays).
. scripts/h200_setup.sh
call_results f
step 150 python3 -m pytest -q -m gpu tests/test_stream_probe.py >"$R/gpu_probe.log" 2>&1
tail -3 "$R/gpu_probe.log" | cut -c1-200; pack
step 120 python3 -m vllm_humming.tuning.stream_probe --json "$R/probe_clock.json" --sizes wide \
  --cases bulk_s16k_x8_p1_w8_t1_h0_b1,bulk_s16k_x8_p1_w8_t1_h800_b1,bulk_s16k_x8_p1_w8_t1_h1200_b1,ring_s16k_x8_l8_w8_t1_h0 \
  >"$R/probe_clock.txt" 2>&1
grep -E "#|bulk|ring" "$R/probe_clock.txt" | cut -c1-130; pack
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 50 >"$R/smi_clock.csv" 2>&1 &
SMI=$!
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --shapes 28672x4096 --no-upstream \
  --no-eager --cold none >"$R/bench_clock.log" 2>&1
kill $SMI 2>/dev/null; wait $SMI 2>/dev/null
grep "] ours\|] cuBLAS" "$R/bench_clock.log" | cut -c1-100
python3 - "$R/smi_clock.csv" <<'PY'
import sys, collections
rows = [l.strip().split(", ") for l in open(sys.argv[1]) if l.count(",") >= 5]
busy = [r for r in rows if r[1].split()[0].isdigit() and int(r[1].split()[0]) > 500]
c = collections.Counter((r[1], r[5]) for r in busy)
print(f"{len(rows)} samples, {len(busy)} with the SM clock > 500 MHz; most common (clock, throttle reasons):")
for k, v in c.most_common(6): print("  ", v, k)
pw = [float(r[3].split()[0]) for r in busy if r[3].split()[0].replace(".", "").isdigit()]
if pw: print(f"   power {min(pw):.0f}-{max(pw):.0f} W")
PY
pack
