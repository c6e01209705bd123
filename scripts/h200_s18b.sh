#!/usr/bin/env bash
# Session 18, call B (carry .whl): the bulk wgmma kernel with x through a tensor map (_tma_bulk) -- a smoke test, the
# sweep against the defaults at 64-2048 tokens, then its GPU test.
. scripts/h200_setup.sh
call_results b
step 90 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -x -k "test_bulk_tma_x and 257 and tm2" >$R/smoke.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/smoke.log | tail -4; pack
B=bt128_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_tma_bulk_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s6_tma_bulk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma
HUMMING_PREFILL_M=1000000000 SWEEP_TIMEOUT=200 sweep_case bulk_tma_large $I4 256,1024,2048 "$SH" "$B"
B64=bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s6_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s8_tma_bulk_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
SWEEP_TIMEOUT=120 sweep_case bulk_tma_small $I4 64,128 "$SH" "$B64"
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_bulk_tma_x" >$R/gpu_bulk_tma.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_bulk_tma.log | tail -6; pack
