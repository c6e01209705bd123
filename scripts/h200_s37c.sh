#!/usr/bin/env bash
# Session 37, call C: the mma.sync decode's phase-2 pass over x (window sums + x16 staging) as the per-token cost
# (call B: the prefetch grid 6.3 / 8.8 / 8.8 / 11.2 us and the plain grid 8.0 / 8.5 / 9.3 / 10.0 at M = 1..4).
# (1) GPU bit-identity of HUMMING_DIRECT_XPASS_BY_ROWS (rows of a chunk in one thread) against the row-major pass;
# (2) sweeps at M = 1 / 2 / 4 / 8 of the mma.sync decode choices of the three int4 layers, default vs BY_ROWS, and on
# 6144x4096 the timing-only HUMMING_DEBUG_DIRECT_NO_XPASS (no pass at all: the bound).  On an H200 the int4 bench of
# record runs first.  Carry .whl.
# (Ran on 5e2c77e.  0ec0f2b replaced HUMMING_DIRECT_XPASS_BY_ROWS by the default direct_window_pass; the old pass is
# HUMMING_DIRECT_XPASS_ROW_MAJOR since -- scripts/h200_s37d.sh is the A/B on the final kernel.)
. scripts/h200_setup.sh
call_results c
grep -q H200 "$OUT/device.txt" && int4_record 190
step 150 python3 -m pytest -q -x tests/test_gemm_direct_gpu.py -k window_pass_by_rows >$R/test_xpass.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/test_xpass.log | tail -4; pack
PF=bt8_wn3_tm1_wk4_ak64_s4
for v in default HUMMING_DIRECT_XPASS_BY_ROWS HUMMING_DEBUG_DIRECT_NO_XPASS; do
  if [ $v = default ]; then unset HUMMING_DEBUG_DEFINES; else export HUMMING_DEBUG_DEFINES=$v; fi
  echo "==== $v"
  SWEEP_TIMEOUT=70 sweep_case small_$v $I4 1,2,4,8 6144x4096 \
    ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct,${PF}_x16_direct,${PF}_direct
  [ $v = HUMMING_DEBUG_DIRECT_NO_XPASS ] && continue
  SWEEP_TIMEOUT=70 sweep_case wide_$v $I4 1,2,4,8 28672x4096 \
    bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_x16_direct
  SWEEP_TIMEOUT=60 sweep_case long_$v $I4 1,2,4,8 4096x14336 \
    bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_x16_direct
done
