#!/usr/bin/env bash
# Session 23, call C (carry .whl): HUMMING_BF16_AS_FP16 with per-window scales (no cross-warp max pass) -- its GPU test
# and the fp16 row16 test (now the fp16 default), then bf16 int4 g128 A/B: sweeps of the mma.sync decode choices on the
# three default shapes at M=1 / 8 (6144x4096's wgmma default beside them) and the bench at M=1 / 16.
. scripts/h200_setup.sh
call_results c
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "fp16_row16 or bf16_as_fp16" >$R/gpu_x16.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_x16.log | tail -6; pack
C=bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
for v in "" HUMMING_BF16_AS_FP16; do
  HUMMING_DEBUG_DEFINES=$v SWEEP_TIMEOUT=150 sweep_case "bf16_${v:-base}" $I4 1,8 $SH $C
done
ab_int4 base
ab_int4 x16 HUMMING_DEBUG_DEFINES=HUMMING_BF16_AS_FP16
pack
