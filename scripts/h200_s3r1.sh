#!/usr/bin/env bash
# Session 3, round 1 (device tool): streaming rate vs bytes in flight (ldg vs cp.async rings), the eager host-cost
# breakdown, source-level ncu of the default decode kernel, and the GPU tests of the current code.
. scripts/h200_setup.sh
step 120 python3 scripts/exp_inflight.py 2>&1 | tee "$OUT/exp_inflight.log"
step 60 python3 scripts/exp_eager.py 2>&1 | tee "$OUT/exp_eager.log"
step 120 ncu --clock-control none --set full --import-source yes --kernel-name regex:humming_wna16 --launch-skip 5 \
  --launch-count 1 -o /tmp/prof python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 1 >"$OUT/ncu_run.log" 2>&1
tail -3 "$OUT/ncu_run.log"
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass >"$OUT/ncu_src.csv" 2>&1; head -c 600 "$OUT/ncu_src.csv"; echo
ncu -i /tmp/prof.ncu-rep --page details >"$OUT/ncu_details.txt" 2>&1
step 300 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_ops_gpu.py tests/test_jit_launch_fast.py -k "not overhead" \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
