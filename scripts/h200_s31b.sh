#!/usr/bin/env bash
# Prepared in session 31 (no device was lent), call B of the next device session: an M scan of the int4 layer --
# batch sizes between the bench's default Ms, where a decode server spends most calls -- against cuBLAS and upstream
# in the same run, to find the token counts where a bucket's choice falls off.
. scripts/h200_setup.sh
call_results b
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 2,4,8,12,24,32,40,48,80,96,128 --cold none --no-eager \
  --json "$R/scan_small.json" >"$R/scan_small.log" 2>&1
grep "] ours\|] upstream" "$R/scan_small.log" | cut -c1-80; pack
step 220 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 160,192,224,300,384,448,640,768,1000 --cold none --no-eager \
  --json "$R/scan_large.json" >"$R/scan_large.log" 2>&1
grep "] ours\|] upstream" "$R/scan_large.log" | cut -c1-80; pack
# The split plans at token counts no run has timed (`vllm-humming plan --ms all`): whole waves + a K-split tail on
# 28672x4096 at 1025-1280, the 192-row sibling head + tail on 28672x4096 at 1793-2047 and on 4096x14336 at
# 1537-1792 -- A/B against the one grid (HUMMING_DP_TAIL=0), upstream in the default run.
for v in 0 1; do
  up=--no-upstream; [ $v = 1 ] && up=
  HUMMING_DP_TAIL=$v step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 28672x4096,4096x14336 \
    --ms 1100,1600,1900 $up --no-eager --cold none --json "$R/bench_big_dptail$v.json" >"$R/bench_big_dptail$v.log" 2>&1
  echo "-- HUMMING_DP_TAIL=$v"; grep "] ours\|] upstream" "$R/bench_big_dptail$v.log" | sed 's/.*\] //' | cut -c1-70
done; pack
# Split plans on shapes outside the bench's defaults (`vllm-humming plan --ms all`): 14336x4096 (Llama-3-8B's
# gate / up halves) at 400 (sibling head + tail), 900 and 1400 (whole waves + tail); 8192x8192 at 1100 and 1600.
for v in 0 1; do
  HUMMING_DP_TAIL=$v step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 14336x4096,8192x8192 \
    --ms 400,900,1100,1400,1600 --no-upstream --no-eager --cold none --json "$R/bench_other_dptail$v.json" \
    >"$R/bench_other_dptail$v.log" 2>&1
  echo "-- HUMMING_DP_TAIL=$v"; grep "] ours" "$R/bench_other_dptail$v.log" | sed 's/.*\] //' | cut -c1-70
done; pack
