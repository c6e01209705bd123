#!/usr/bin/env bash
# Session 35, call B: the smem prefetch (call A: 6144x4096 M=1 6.3 vs 7.8 us on an H100) and the warp-private smem ring
# (HUMMING_DIRECT_SMEM_RING: every atom through shared memory, kMaxPos positions in flight per warp, no register
# ring -- fewer registers, so more warps per co-resident block).  GPU bit-identity test (prefetch + ring), then int4
# M=1 sweeps: defaults, the prefetch, the ring.  Carry .whl.
. scripts/h200_setup.sh
call_results b
step 240 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k prefetch >"$R/test_prefetch.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$R/test_prefetch.log" | tail -5; pack
S1=bt8_wn3_tm1_wk4_ak64_s4_x16_direct,bt8_wn1_tm3_wk8_ak64_s2_x16_direct,bt8_wn3_tm1_wk4_ak64_s4_direct
S2=bt8_wn4_tm2_wk2_ak64_s4_x16_direct,bt8_wn8_tm1_wk2_ak64_s4_x16_direct,bt8_wn4_tm1_wk4_ak64_s4_x16_direct
S3=bt8_wn7_tm2_wk1_ak64_s4_x16_direct,bt8_wn14_tm1_wk1_ak64_s4_x16_direct,bt8_wn7_tm1_wk2_ak64_s4_x16_direct
export HUMMING_PDL_EARLY_RELEASE=1
for mode in pf ring; do
  export HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_SMEM_PREFETCH=73728
  [ $mode = ring ] && export HUMMING_DEBUG_DEFINES=$HUMMING_DEBUG_DEFINES,HUMMING_DIRECT_SMEM_RING
  sweep_case small_$mode $I4 1 6144x4096 $S1 --splits 1
  sweep_case long_$mode $I4 1 4096x14336 $S2 --splits 4
  sweep_case wide_$mode $I4 1 28672x4096 $S3 --splits 1
done
unset HUMMING_DEBUG_DEFINES HUMMING_PDL_EARLY_RELEASE
sweep_case defaults $I4 1 $SH bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
