#!/usr/bin/env bash
# One H200 development round (device tool): install, bulk-pipeline + core GPU tests, a sweep of candidate choices,
# a quick int4 bench against cuBLAS and upstream.  Logs land in $OUT.   carry: .whl
#   CHOICES_1/16/32/64: comma-separated KernelChoice short names to sweep per M (empty: skip that M)
. scripts/h200_setup.sh
step ${TEST_TIMEOUT:-150} python3 -m pytest -q -x -m gpu ${TESTS:-tests/test_gemm_pipelines_gpu.py} >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|^E  |passed|failed|error" "$OUT/gpu_tests.log" | head -30
for m in 1 16 32 64; do
  v="CHOICES_$m"; c="${!v:-}"
  [ -n "$c" ] || continue
  step ${SWEEP_TIMEOUT:-100} python3 -m vllm_humming.tuning.sweep --ms $m --choices "$c" --max-cands 12 \
    --json "$OUT/sweep_m$m.json" 2>&1 | tee -a "$OUT/sweep.log" | grep -v "^      "
done
grep "^      " "$OUT/sweep.log" | head -0
if [ -n "${BENCH:-}" ]; then
  step ${BENCH_TIMEOUT:-200} python3 -m vllm_humming.bench $BENCH --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1
  grep -B2 -A14 "^Summary" "$OUT/bench.log" | head -40
fi
