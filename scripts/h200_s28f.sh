#!/usr/bin/env bash
# Session 28, call F: test_float_zero_point_large_m_defaults after its plan expectation was fixed (call E: at 512
# tokens uint4 g16 + float zero falls through to the two-atom TMA-x tile -- the 256-token tile's stages do not fit).
# TESTS_K=... picks other tests (call G: the same test and test_eight_bit_large_m_defaults after a shared helper).
. scripts/h200_setup.sh
call_results f
step 200 python3 -m pytest -q -n 8 -m gpu tests/test_gemm_pipelines_gpu.py -k "${TESTS_K:-float_zero_point_large_m}" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -8; pack
