#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl and .shared_fixtures): the GPU suites, the int4
# bench at every M and the e2e fixtures of whatever the session changed -- session 5 ended with all of them run at
# its final tree (results/h200-2026-11-30).  Kernel work next: NOTES.md, session 5, "Next, ranked".
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
sed -n '/^== w4a16/,/eager us/p;/^Summary/,+3p' "$OUT/bench_int4.log" | cut -c1-200
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 90 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | cut -c1-90 | tail -8
fi
# Then where the bulk wgmma kernel loses 2x against the cp.async wgmma kernel (NOTES.md session 5): stall reasons and
# source-level hot spots of both at M=256 on 28672x4096 (standard sections only: custom metric names failed in call B).
export HUMMING_PREFILL_M=1000000
for c in bt128_wn8_tm1_wk1_ak1_s5_wgmma bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma; do
  step 150 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 $c >"$OUT/ncu_$c.txt" 2>&1
  grep -E "Duration|Throughput|Stall|stall|Warp Cycles|Eligible|ERR" "$OUT/ncu_$c.txt" | head -30
done
