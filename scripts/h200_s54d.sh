#!/usr/bin/env bash
# Session 54's fourth call: the experiment switch HUMMING_NARROW16_POLLED (narrow int3 / int4 layers at 9-16 tokens:
# the 128-row direct wgmma tile with the polled split-K end; on an H100 9.0 / 16.1 vs 9.9 / 16.4 us, s54/c).  Its GPU
# test, the bench's own A/B at 9 / 16 tokens on the default shapes, and on an H200 the bench of record under the
# winner (scripts/pick_switch.py, 2 % over the baseline).
. scripts/h200_setup.sh
call_results d
gpu_test switch 150 tests/test_splitk_poll_gpu.py -k switch
for v in 0 1; do
  HUMMING_NARROW16_POLLED=$v step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,16 \
    --no-upstream --no-eager --cold none --json "$R/ab_n16p$v.json" >"$R/ab_n16p$v.log" 2>&1
  echo "-- HUMMING_NARROW16_POLLED=$v"; grep "] ours" "$R/ab_n16p$v.log" | sed 's/.*int4-g128 //' | cut -c1-40; pack
done
WIN=$(python3 scripts/pick_switch.py 0.02 base="$R/ab_n16p0.json" polled="$R/ab_n16p1.json" 2>"$R/ab_pick.txt")
cat "$R/ab_pick.txt"; echo "winner: $WIN"
if grep -q H200 "$OUT/device.txt"; then
  [ "$WIN" = polled ] && export HUMMING_NARROW16_POLLED=1
  int4_record 200
fi
