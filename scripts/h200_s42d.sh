#!/usr/bin/env bash
# Session 42, call D (and the next session's first H200 call): the H200 branch of h200_s42b.sh (the bench of record
# with eager / cold compile, then the other formats), then the prefetching wgmma decode's A/B; on any other card it
# stops after the device line.  Carry .whl.
. scripts/h200_setup.sh
grep -q H200 "$OUT/device.txt" || { echo "not an H200: nothing to do"; exit 0; }
call_results d
step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,2,16,64,256 \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
pack; sed -n '/^vllm-humming bench/,$p' "$R/bench_int4.log" | head -60
step 240 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
  --cold none --no-eager --json "$R/bench_w3_w8_mxfp4.json" >"$R/bench_w3_w8_mxfp4.log" 2>&1
grep -A5 "^Summary" "$R/bench_w3_w8_mxfp4.log"; pack
# (added at the end of session 42) the prefetching wgmma decode's A/B on the small layers it serves (session 42's
# call G measured it on an H100 only)
SHP=1024x4096,2048x4096,3072x4096,4096x4096,4096x2048
for v in 1 0; do
  HUMMING_WG_PREFETCH=$v timeout 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 3,8,16 --shapes $SHP \
    --no-upstream --no-eager --cold none --json $R/ab_wgpf$v.json >$R/ab_wgpf$v.log 2>&1
  echo "-- HUMMING_WG_PREFETCH=$v"; grep "] ours" $R/ab_wgpf$v.log | sed 's/.*int4-g128 //' | cut -c1-40 | tr '\n' ';'; echo
done
pack
