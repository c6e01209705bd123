#!/usr/bin/env bash
# Next session, call A (carry .whl; ~9 minutes; call B is scripts/h200_next2.sh):
# 1. the session-22 experiments, unmeasured: HUMMING_FP16_ROW16 (4-bit codes in fp16 decoded with one shift per word
#    instead of three in the mma.sync decode kernel) and HUMMING_BF16_AS_FP16 (the same for bf16 activations, staged
#    as fp16 per token) -- their GPU tests, fp16 int4 g128 at M=1 / 8 on the two wide layers' default choices with and
#    without ROW16 (tuning.sweep --dtype float16; cuBLAS fp16 in the same run), the bf16 int4 A/B at M=1 / 16;
. scripts/h200_setup.sh
call_results a
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "fp16_row16 or bf16_as_fp16" >$R/gpu_row16.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_row16.log | tail -4; pack
for v in "" HUMMING_FP16_ROW16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=120 sweep_case "row16_${v:-base}" w:int4,s:g128:float16 1,8 28672x4096,4096x14336 \
    bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct --dtype float16
done
ab_int4 base
ab_int4 bf16_as_fp16 HUMMING_DEBUG_DEFINES=HUMMING_BF16_AS_FP16
pack
