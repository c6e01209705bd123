#!/usr/bin/env bash
# Session 38, call A: (1) on an H200 the int4 bench of record on session 37's final tree; (2) the GPU plan test of
# the x16 rule (heuristics.x16_max_m, not run in session 37); (3) how much of the M = 1 / 2 decode the phase-2 pass
# over x still takes on the wide and long layers: their plan choices with the pass and timing-only without it
# (HUMMING_DEBUG_DIRECT_NO_XPASS: wrong results), same run.  Carry .whl.
. scripts/h200_setup.sh
call_results a
grep -q H200 "$OUT/device.txt" && int4_record 190
step 150 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "x16_where_the_plan" >$R/test_x16.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/test_x16.log | tail -4; pack
PF=bt8_wn3_tm1_wk4_ak64_s4
for v in default HUMMING_DEBUG_DIRECT_NO_XPASS; do
  if [ $v = default ]; then unset HUMMING_DEBUG_DEFINES; else export HUMMING_DEBUG_DEFINES=$v; fi
  echo "==== $v"
  SWEEP_TIMEOUT=60 sweep_case small_$v $I4 1,2 6144x4096 ${PF}_pf72_x16_direct
  SWEEP_TIMEOUT=60 sweep_case wide_$v $I4 1,2 28672x4096 bt8_wn14_tm1_wk2_ak256_s4_x16_direct
  SWEEP_TIMEOUT=60 sweep_case long_$v $I4 1,2 4096x14336 bt8_wn4_tm2_wk2_ak256_s4_x16_direct
done
