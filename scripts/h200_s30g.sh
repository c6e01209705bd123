#!/usr/bin/env bash
# Session 30, call G: the split-plan GPU tests after they were folded onto one helper.
. scripts/h200_setup.sh
call_results g
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "dp_tail or sibling_head" \
  >"$R/gpu_plan.log" 2>&1; grep -E "^FAILED|passed|failed|Error" "$R/gpu_plan.log" | tail -8; pack
