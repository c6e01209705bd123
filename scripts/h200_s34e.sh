#!/usr/bin/env bash
# Session 34, call E (run inline then; kept here as the record): the act-format bench with upstream at the launch
# shape then made the default (512 threads x 2 chunks, early release), and the late-release A/B.  Carry .whl.
. scripts/h200_setup.sh
call_results e
HUMMING_DEBUG_ACT_QUANT=512,2,1 step 150 python3 -m vllm_humming.bench --formats act --ms 1,16,64,256 --cold none \
  --no-eager --json "$R/bench_act.json" >"$R/bench_act.log" 2>&1
tail -8 "$R/bench_act.log"; pack
HUMMING_DEBUG_ACT_QUANT=512,2,1,1 timeout 60 python3 -m vllm_humming.bench --formats w4a8-int4-g128-fp8,w8a8-int8 \
  --ms 1,16 --no-upstream --no-eager --cold none >"$R/ab_512,2,1,1.log" 2>&1
grep "] ours" "$R/ab_512,2,1,1.log" | sed 's/.*ours //' | cut -c1-60 | tr '\n' ';'; pack
