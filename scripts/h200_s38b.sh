#!/usr/bin/env bash
# Session 38, call B: the mma.sync decode's pass over x reads x from global memory itself (no cp.async copy of x and
# one barrier fewer after griddepcontrol.wait).  (1) GPU tests: the pass bit-identical to the row-major pass and to
# the same pass reading the copied tile (HUMMING_DIRECT_XPASS_FROM_SMEM), the prefetch defaults, the x16 tests, x at a
# misaligned address; (2) sweeps of the three int4 layers' decode choices: default vs FROM_SMEM vs the timing-only
# no-pass bound, same run; (3) on an H200 the int4 bench of record.  Carry .whl.
. scripts/h200_setup.sh
call_results b
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -q $par -m gpu tests/test_gemm_direct_gpu.py tests/test_gemm_gpu.py \
  -k "window_pass or smem_prefetch or x16 or misaligned or int4_shapes" >$R/tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/tests.log | tail -6; pack
PF=bt8_wn3_tm1_wk4_ak64_s4
for v in default HUMMING_DIRECT_XPASS_FROM_SMEM HUMMING_DEBUG_DIRECT_NO_XPASS; do
  if [ $v = default ]; then unset HUMMING_DEBUG_DEFINES; else export HUMMING_DEBUG_DEFINES=$v; fi
  echo "==== $v"
  SWEEP_TIMEOUT=50 sweep_case small_$v $I4 1,2 6144x4096 ${PF}_pf72_x16_direct
  SWEEP_TIMEOUT=50 sweep_case wide_$v $I4 1,2 28672x4096 bt8_wn14_tm1_wk2_ak256_s4_x16_direct
  SWEEP_TIMEOUT=50 sweep_case long_$v $I4 1,8 4096x14336 bt8_wn4_tm2_wk2_ak256_s4_x16_direct
done
unset HUMMING_DEBUG_DEFINES
grep -q H200 "$OUT/device.txt" && int4_record 190
