#!/usr/bin/env bash
# Session 23, call B (carry .whl): where HUMMING_BF16_AS_FP16's gain goes -- bf16 int4 g128 at M=1 / 8 on the two
# wide layers' default choices: base, the experiment, the experiment without its max pass (timing only), and fp16
# with / without HUMMING_FP16_ROW16 in the same run.
. scripts/h200_setup.sh
call_results b
C=bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct
for v in "" HUMMING_BF16_AS_FP16 HUMMING_BF16_AS_FP16,HUMMING_DEBUG_X16_NO_MAX; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=120 sweep_case "bf16_${v:-base}" $I4 1,8 28672x4096,4096x14336 $C
done
for v in "" HUMMING_FP16_ROW16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=120 sweep_case "fp16_${v:-base}" w:int4,s:g128:float16 1,8 28672x4096,4096x14336 $C --dtype float16
done
pack
