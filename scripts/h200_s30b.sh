#!/usr/bin/env bash
# Session 30, call B: (1) the new plan -- whole waves + a split tail (heuristics.dp_tail_split) -- on the GPU: its
# test, then A/B timings (HUMMING_DP_TAIL=0 / default) on the layers where it applies; (2) the int4 bench at 1-512
# tokens with upstream (the split-K workspace now holds a launch's own columns: every split-K kernel changed a little);
# (3) NVFP4 at 33-64 tokens: one-atom stages (call A: 15.6 vs 16.8 us on 6144x4096 at M=64) on every bench shape.
. scripts/h200_setup.sh
call_results b
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "dp_tail or plan_alternatives" \
  >"$R/gpu_dp_tail.log" 2>&1; grep -E "^FAILED|passed|failed|Error" "$R/gpu_dp_tail.log" | tail -8; pack
for v in 0 1; do
  HUMMING_DP_TAIL=$v step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 28672x4096,18432x7168 \
    --ms 400,512,768,1536 --no-upstream --no-eager --cold none --json "$R/bench_dptail$v.json" >"$R/bench_dptail$v.log" 2>&1
  echo "-- HUMMING_DP_TAIL=$v"; grep "] ours" "$R/bench_dptail$v.log" | sed 's/.*int4-g128 //' | cut -c1-40 | tr '\n' ';'; echo
done; pack
N64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak1_s4_tma_wgmma
SWEEP_TIMEOUT=150 sweep_case m64_nvfp4 nvfp4-w4a16 48,64 "$SH" "$N64"
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256,512 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; pack
