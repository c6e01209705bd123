#!/usr/bin/env bash
# Session 35, call A: the HUMMING_DIRECT_SMEM_PREFETCH experiment (gemm_wna16_direct.cuh: each warp's first atoms
# copied to shared memory before griddepcontrol.wait, in grids small enough that the next PDL launch's blocks are
# resident beside them).  GPU bit-identity test, then int4 M=1 sweeps: the defaults and one-split candidates without
# the define, the same candidates with it (and the early PDL release forced on).  Carry .whl.
. scripts/h200_setup.sh
call_results a
step 240 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k prefetch >"$R/test_prefetch.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$R/test_prefetch.log" | tail -5; pack
S1=bt8_wn3_tm1_wk4_ak64_s4_direct,bt8_wn3_tm1_wk4_ak64_s4_x16_direct,bt8_wn1_tm3_wk8_ak64_s2_direct,bt8_wn1_tm3_wk8_ak64_s2_x16_direct
S2=bt8_wn4_tm2_wk2_ak64_s4_direct,bt8_wn4_tm2_wk2_ak64_s4_x16_direct
S3=bt8_wn7_tm2_wk1_ak64_s4_direct,bt8_wn7_tm2_wk1_ak64_s4_x16_direct
for pf in 0 73728; do
  if [ $pf = 0 ]; then unset HUMMING_DEBUG_DEFINES HUMMING_PDL_EARLY_RELEASE
  else export HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_SMEM_PREFETCH=$pf HUMMING_PDL_EARLY_RELEASE=1; fi
  sweep_case small_pf$pf $I4 1 6144x4096 $S1 --splits 1
  sweep_case long_pf$pf $I4 1 4096x14336 $S2 --splits 4
  sweep_case wide_pf$pf $I4 1 28672x4096 $S3 --splits 1
done
