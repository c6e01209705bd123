#!/usr/bin/env bash
# Session 46, call E.  The 17-32-token bulk rule: where between 29 M weights (2048x14336 / 4096x7168: the direct
# decode wins by 11-27 %) and 59 M (14336x4096 / 4096x14336: the bulk kernel wins by 15-20 %) it starts to pay, and
# whether the other codes follow int4.  Also 9-16 tokens on layers bigger than the bench's (the bulk kernel vs the
# plan), and the one-token decode of 14336x4096.
. scripts/h200_setup.sh
call_results e
C32=bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
C16=bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
export SWEEP_TIMEOUT=200
sweep_case m24_mid $I4 24 8192x4096,4096x8192,11008x4096,4096x11008,5120x8192,12288x4096,3072x14336,2048x28672 $C32
for f in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 mxfp4 w:uint4,s:g128:bfloat16,zp:int nvfp4 fp8-channel; do
  sweep_case m24_$(echo $f | tr -c 'a-z0-9\n' '_' | cut -c1-16) $f 24 28672x4096,4096x14336,8192x8192,4096x7168 $C32
done
sweep_case m16_big $I4 16 8192x28672,37888x3584,10240x8192,14336x4096,57344x8192 $C16
# the rule as built (decode_bulk_32_choice) on the GPU: the plans' own choices at 17 / 24 / 32 tokens vs the reference
step 200 python3 -m pytest -q -x -m gpu tests/test_gemm_direct_gpu.py -k decode_bulk > $R/test_bulk32.log 2>&1; tail -3 $R/test_bulk32.log; pack
