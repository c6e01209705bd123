#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl): profiles, no re-verification needed -- session 6
# ran every GPU suite at its last kernel-source change (9b31e52) and the tests of its heuristic changes at 6f823d0.
# Kernel work next: NOTES.md, session 6, "Next, ranked".
. scripts/h200_setup.sh
# 0. Releasing PDL dependents right after griddepcontrol.wait instead of after the main loop (NOTES.md session 6,
#    next steps 4): timings at M = 1 / 16 / 64, then the graph + repeat test under the macro.
step 90 python3 scripts/exp_variants.py --ms 1,16,64 --variants ";HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_PDL_EARLY_RELEASE" \
  >"$OUT/exp_pdl_early.log" 2>&1; tail -20 "$OUT/exp_pdl_early.log"
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_PDL_EARLY_RELEASE step 90 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py \
  -k "graph or int4_shapes" 2>&1 | tail -2
export HUMMING_PREFILL_M=1000000
# 1. Where the bulk (warp-specialized) wgmma kernel loses 2x against the cp.async wgmma kernel, M=256 on 28672x4096
#    (standard sections only: custom metric names failed in session 5).
for c in bt128_wn8_tm1_wk1_ak1_s5_wgmma bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma; do
  step 150 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 $c >"$OUT/ncu_$c.txt" 2>&1
  grep -E "Duration|Throughput|Stall|stall|Warp Cycles|Eligible|ERR" "$OUT/ncu_$c.txt" | head -30
done
# 2. Why the M=1 decode kernel streams slower per byte on the widest layer (28672x4096) than on 4096x14336.
for s in "28672 4096" "4096 14336"; do
  set -- $s
  step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 $1 $2 1 bt8_wn4_tm2_wk1_ak1_s4 >"$OUT/ncu_m1_$1x$2.txt" 2>&1
  grep -E "Duration|Throughput|Stall|Warp Cycles|Eligible|Achieved Occupancy|Block Limit|ERR" "$OUT/ncu_m1_$1x$2.txt" | head -24
done
