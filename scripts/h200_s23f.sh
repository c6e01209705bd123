#!/usr/bin/env bash
# Session 23, call F (carry .whl): the fp16 gemm tests through the heuristics' own choices (the one-shift fp16 decode
# is now the default of the mma.sync decode kernel on wide / deep layers).
. scripts/h200_setup.sh
call_results f
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "fp16" >$R/gpu_fp16.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_fp16.log | tail -6; pack
