#!/usr/bin/env bash
# Session 8, call D (carry .whl and .shared_fixtures): every GPU suite on one tree (the final kernels: split-K path
# restructured around run_segment, stream-K schedule, the narrow M<=8 rule), three pytest processes side by side (the
# NVRTC compiles are CPU-bound; the JIT cache is shared under its file locks), then the e2e fixture models.
. scripts/h200_setup.sh
run_suite() {  # NAME FILES...
  local name=$1; shift
  timeout 470 python3 -m pytest -q -m gpu "$@" -k "not overhead" >"$OUT/gpu_tests_$name.log" 2>&1
  echo "-- $name: $(grep -E 'passed|failed' "$OUT/gpu_tests_$name.log" | tail -1)"
  grep -E "^FAILED" "$OUT/gpu_tests_$name.log" | head -5
}
run_suite gemm tests/test_gemm_gpu.py &
run_suite pipelines tests/test_gemm_pipelines_gpu.py &
run_suite other tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py &
wait
e2e_fixtures
