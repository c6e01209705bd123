#!/usr/bin/env bash
# Session 15, call H (carry .whl; ~2.5 minutes): the two-atom stages after the split fix -- their GPU tests, the int4
# defaults that take them at 33-64 tokens (narrow and wide, every int4 format of FORMATS).
. scripts/h200_setup.sh
call_results h
step 95 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k two_atom >$R/gpu_tests_two_atom.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_two_atom.log | tail -6; pack
step 60 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "(narrow_m64_default or (large_m_default and (33 or 64))) and uint4" >$R/gpu_tests_defaults.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_defaults.log | tail -6; pack
