#!/usr/bin/env bash
# Session 37, call F: the x16 twin at 1-8 tokens on layers deeper than 4096 (heuristics.x16_max_m) -- its GPU plan test.
. scripts/h200_setup.sh
call_results f
step 110 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "x16_where_the_plan" >$R/test_x16.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/test_x16.log | tail -4; pack
