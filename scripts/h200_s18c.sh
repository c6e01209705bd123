#!/usr/bin/env bash
# Session 18, call C (carry .whl): 256-token tiles (128 weight rows x 256 tokens per block, one m64n256k16 per k16
# step and warpgroup: half the MMA instructions and groups of the 256-row x 128-token tile at the same 128
# accumulators, 166 registers) -- sweep against the 256-row tile at 256-4096 tokens, then their GPU tests.
. scripts/h200_setup.sh
call_results c
step 60 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -x -k "test_wgmma_tma_x and bt256 and 257" >$R/smoke.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/smoke.log | tail -4; pack
B=bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma,bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt256_wn8_tm1_wk1_ak1_s5_tma_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_bulk_wgmma,bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma
HUMMING_PREFILL_M=1000000000 SWEEP_TIMEOUT=240 sweep_case bt256 $I4 256,512,1024,2048,4096 "$SH" "$B"
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bt256" >$R/gpu_bt256.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_bt256.log | tail -6; pack
