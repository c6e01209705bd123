#!/usr/bin/env bash
# Session 13, call B (carry .whl): what the split-K reduction of the wgmma kernels costs at M = 16 / 64 (call A's ncu:
# 28 % of the M=64 4096x14336 kernel's elapsed time the SMs hold no block -- the tail where the last block of every
# tile sums 8 partials, one L2 round trip per split).  Experiment macros (HUMMING_DEBUG_DEFINES, splitk_epilogue):
# SPLITK_INFLIGHT16 / 32 (2 / 4 splits' loads in flight), SPLITK_ATOMIC (fp32 vector reductions into one zeroed
# region, not deterministic), SPLITK_SKIP (no reduction: the bound).
. scripts/h200_setup.sh
call_results b
I4=w:uint4b8,s:g128:bfloat16
CH=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma
for D in none HUMMING_DEBUG_SPLITK_INFLIGHT16 HUMMING_DEBUG_SPLITK_INFLIGHT32 HUMMING_DEBUG_SPLITK_ATOMIC HUMMING_DEBUG_SPLITK_SKIP; do
  [ $D = none ] && export HUMMING_DEBUG_DEFINES= || export HUMMING_DEBUG_DEFINES=$D
  echo "#### $D"
  sweep_case ${D#HUMMING_DEBUG_} $I4 16,64 6144x4096,4096x14336,28672x4096 $CH
done
export HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_SPLITK_ATOMIC
step 60 python3 scripts/check_choice.py $I4 bt64_wn8_tm1_wk1_ak1_s6_wgmma 4096x14336,6144x4096,4000x4000 1,17,64 >$R/check_atomic.txt 2>&1
tail -9 $R/check_atomic.txt; pack
sweep_case atomic_splits $I4 64 4096x14336,6144x4096 bt64_wn8_tm1_wk1_ak1_s6_wgmma --splits 4,12,16
export HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_SPLITK_INFLIGHT32
sweep_case inflight32_splits $I4 64 4096x14336,6144x4096 bt64_wn8_tm1_wk1_ak1_s6_wgmma --splits 4,12,16
