#!/usr/bin/env bash
# Session 30, call F: the sibling-head plan (heuristics.sibling_head_split: the wide layer at 129-256 tokens as one
# wave of 192-row tiles + the last rows' 128-row tiles split along K) -- its GPU test with the other split-plan tests,
# A/B timings (HUMMING_DP_TAIL=0 / default) on 28672x4096, and the int4 bench at 256 tokens with upstream.
. scripts/h200_setup.sh
call_results f
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "dp_tail or sibling_head or plan_alternatives" \
  >"$R/gpu_plan.log" 2>&1; grep -E "^FAILED|passed|failed|Error" "$R/gpu_plan.log" | tail -8; pack
for v in 0 1; do
  HUMMING_DP_TAIL=$v step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128,w4a16-mxfp4 --shapes 28672x4096 \
    --ms 150,200,256 --no-upstream --no-eager --cold none --json "$R/bench_dptail$v.json" >"$R/bench_dptail$v.log" 2>&1
  echo "-- HUMMING_DP_TAIL=$v"; grep "] ours" "$R/bench_dptail$v.log" | sed 's/.*ours //' | cut -c1-50 | tr '\n' ';'; echo
done; pack
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 256 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; grep "] ours\|] upstream" "$R/bench_int4.log" | cut -c1-80; pack
