#!/usr/bin/env bash
# Session 44, call L (any sm_90a card; carry .whl): background compilation (jit/background.py) -- the GPU test that
# a layer's calls at 1-2048 tokens run NVRTC no more once ops.linear.compile_in_background has finished, the CPU
# tests of the module, and the first-decode test beside it.
. scripts/h200_setup.sh
call_results l
step 300 python3 -m pytest -v --tb=short -rf tests/test_ops_gpu.py tests/test_jit_background.py \
  -k "background or first_decode" >$R/test_background.log 2>&1
grep -E "FAILED|passed|failed|rror" $R/test_background.log | cut -c1-300 | tail -8; pack
