#!/usr/bin/env bash
# Session 37, call D: the new phase-2 pass over x (direct_window_pass: (row, pass) items in rounds of 4 -- 2 in the
# prefetch kernels --, the max and the sum in the same butterfly rounds).  (1) the direct suite, incl. the bit-identity
# test against the row-major pass (HUMMING_DIRECT_XPASS_ROW_MAJOR); (2) on an H200 the int4 bench of record; (3)
# sweeps at M = 1 / 2 / 4 / 8 of the mma.sync decode choices of the three int4 layers: new default vs the old pass.
# Carry .whl.
. scripts/h200_setup.sh
call_results d
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 170 python3 -m pytest -q $par -m gpu tests/test_gemm_direct_gpu.py >$R/test_direct.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/test_direct.log | tail -6; pack
grep -q H200 "$OUT/device.txt" && int4_record 190
PF=bt8_wn3_tm1_wk4_ak64_s4
for v in default HUMMING_DIRECT_XPASS_ROW_MAJOR; do
  if [ $v = default ]; then unset HUMMING_DEBUG_DEFINES; else export HUMMING_DEBUG_DEFINES=$v; fi
  echo "==== $v"
  SWEEP_TIMEOUT=50 sweep_case small_${v%=*} $I4 1,2,4,8 6144x4096 ${PF}_pf72_x16_direct,${PF}_pf48_x16_direct
  SWEEP_TIMEOUT=50 sweep_case wide_${v%=*} $I4 1,2,4,8 28672x4096 \
    bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_x16_direct
  SWEEP_TIMEOUT=50 sweep_case long_${v%=*} $I4 1,2,4,8 4096x14336 \
    bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_x16_direct
done
