#!/usr/bin/env bash
# Session 30, call D (the tree of call C): the int4 bench at 1-512 tokens and NVFP4 at 64 tokens with upstream in the
# same run; the whole-waves + split-tail plan A/B (HUMMING_DP_TAIL=0 / default) for int8 and MXFP4 on the wide layer.
. scripts/h200_setup.sh
call_results d
step 190 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256,512 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; pack
step 80 python3 -m vllm_humming.bench --formats w4a16-nvfp4 --ms 64 --cold none --no-eager \
  --json "$R/bench_nvfp4.json" >"$R/bench_nvfp4.log" 2>&1
grep -A3 "^Summary" "$R/bench_nvfp4.log"; grep "] ours\|] upstream" "$R/bench_nvfp4.log" | cut -c1-80; pack
for v in 0 1; do
  HUMMING_DP_TAIL=$v step 100 python3 -m vllm_humming.bench --formats w8a16-int8-channel,w4a16-mxfp4 --shapes 28672x4096 \
    --ms 512,768 --no-upstream --no-eager --cold none --json "$R/bench_dptail$v.json" >"$R/bench_dptail$v.log" 2>&1
  echo "-- HUMMING_DP_TAIL=$v"; grep "] ours" "$R/bench_dptail$v.log" | sed 's/.*ours //' | cut -c1-50 | tr '\n' ';'; echo
done; pack
