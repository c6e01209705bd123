#!/usr/bin/env bash
# Session 3, round 3 (device tool): programmatic dependent launch (weights prefetched before griddepcontrol.wait) and
# bound launches -- correctness (GPU tests incl. CUDA graphs), PDL on/off and register budgets, eager host cost.
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_jit_gpu.py -x \
  -k "not overhead" >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 60 python3 scripts/exp_eager.py 2>&1 | tee "$OUT/exp_eager.log"
step 200 python3 scripts/exp_variants.py --ms 1 --choices bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak1_s4 \
  --variants "HUMMING_PDL=1;HUMMING_PDL=0;HUMMING_DEBUG_MIN_BLOCKS=4;HUMMING_DEBUG_MIN_BLOCKS=6" 2>&1 | tee "$OUT/exp_variants_m1.log"
step 120 python3 scripts/exp_variants.py --ms 16,64 --choices heur,bt64_wn4_tm2_wk1_ak1_s6 \
  --variants "HUMMING_PDL=1;HUMMING_PDL=0;HUMMING_DEBUG_MIN_BLOCKS=4" 2>&1 | tee "$OUT/exp_variants_m16.log"
