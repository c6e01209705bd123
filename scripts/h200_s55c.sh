#!/usr/bin/env bash
# Session 55's short K-warpgroup call (the device budget left ~450 s): the bench's own A/B of HUMMING_NARROW16_WK on
# 6144x4096 at 9 / 16 tokens (0 = the plan's 128-row polled split-K tile, 1 = one 64-row K-warpgroup block per tile,
# no split-K end), then the K-warpgroup GPU tests of the rule's tile (fp32 reference, graphs).
. scripts/h200_setup.sh
call_results c
for v in 0 1; do
  HUMMING_NARROW16_WK=$v timeout 45 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,16 \
    --shapes 6144x4096 --no-upstream --no-eager --cold none --json "$R/ab_wk$v.json" >"$R/ab_wk$v.log" 2>&1
  echo "-- HUMMING_NARROW16_WK=$v"; grep "] ours" "$R/ab_wk$v.log" | sed 's/.*int4-g128 //' | cut -c1-40 | tr '\n' ';'
  echo; pack
done
gpu_test wk 70 tests/test_gemm_direct_gpu.py -k "k_warpgroups and (wk4 or graph)"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -6 | cut -c1-250
echo "elapsed ${SECONDS}s"
