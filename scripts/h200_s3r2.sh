#!/usr/bin/env bash
# Session 3, round 2 (device tool): the leaner cp.async main loop (constant ring slots, one fence per block):
# correctness, then a sweep of stage depths at M = 1 / 16 / 64, and the eager breakdown.
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py -x \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
C1=bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak1_s5,bt8_wn4_tm2_wk1_ak1_s6,bt8_wn8_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak2_s3,bt8_wn4_tm2_wk1_ak2_s4,bt8_wn2_tm2_wk2_ak2_s3
C16=bt16_wn8_tm1_wk2_ak2_s4,bt16_wn4_tm1_wk2_ak2_s4,bt16_wn8_tm2_wk1_ak2_s4,bt16_wn8_tm1_wk1_ak1_s4,bt16_wn8_tm1_wk1_ak1_s6,bt16_wn4_tm2_wk1_ak1_s5
C64=bt64_wn8_tm2_wk1_ak2_s4,bt64_wn4_tm2_wk1_ak2_s4,bt64_wn8_tm1_wk2_ak2_s4,bt64_wn8_tm2_wk1_ak1_s5,bt64_wn4_tm2_wk1_ak1_s6
step 240 python3 -m vllm_humming.tuning.sweep --ms 1,16,64 --pipeline cp_async --choices $C1,$C16,$C64 \
  --json "$OUT/sweep.json" 2>&1 | tee "$OUT/sweep.log" | grep -v "^      "
grep -A3 "M=1:" "$OUT/sweep.log" | head -20
step 60 python3 scripts/exp_eager.py 2>&1 | tee "$OUT/exp_eager.log"
