#!/usr/bin/env bash
# Session 29, call D: test_float_group_scales_past_the_exponent_fold after its fix (call C failed it on the test's own
# expectation: "float8" also matched the MXFP4 / NVFP4 scale dtypes, so it expected k = 0 where the fold rightly
# took k = 2 / 7 -- before any numbers were compared).
. scripts/h200_setup.sh
call_results d
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "exponent_fold" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -8; pack
