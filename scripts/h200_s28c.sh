#!/usr/bin/env bash
# Session 28, call C: the FLOAT_ZERO_TMA rule (float zero points with < 128-column groups take the two-atom TMA-x
# stream-K tile at 257-512 tokens on every layer) through the layers' own plans -- the new GPU test and the suites'
# float-zero cases (test_large_m_default_choices, test_formats) -- then whether integer codes on the wide layer gain
# from the same TMA-x tile at 300 / 512 tokens (their rule keeps the non-TMA tile there; session 17 measured narrow).
. scripts/h200_setup.sh
call_results c
step 300 python3 -m pytest -q -n 8 -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py \
  -k "float_zero_point_large_m or (large_m_default and zp:float) or (zp and float)" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -8; pack
C=bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma
sweep_case wide_i4 "$I4" 300,512 28672x4096 $C
sweep_case wide_i4zp "w:uint4,s:g64:bfloat16,zp:int" 300,512 28672x4096 $C
