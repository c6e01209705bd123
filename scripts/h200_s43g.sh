#!/usr/bin/env bash
# Session 43, call G (any sm_90a card): the final tree's GEMM / direct / ops / act-quant GPU suites (the prefetch
# rule's new codes reach the dense layers and the quantized-activation layers built on them).
. scripts/h200_setup.sh
call_results g
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 420 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py \
  tests/test_ops_gpu.py tests/test_act_quant_gpu.py -k "not overhead" >"$R/gpu_tests_final.log" 2>&1
grep -E "FAILED|passed|failed" "$R/gpu_tests_final.log" | cut -c1-200 | tail -12; pack
