#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl and .shared_fixtures): what session 4 could not run
# -- main since 9bacbf9 (fence.proxy.async before the wgmma reads of each activation tile) has not been on a GPU.
# The GPU suites, the full int4 bench, int3 / int8 / MXFP4 at M <= 256, the e2e fixtures and the compile report.
# Then merge branch next/wgmma-staged-epilogue (smaller wgmma kernels) and run this again.
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A5 "^Summary" "$OUT/bench_int4.log"
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 110 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_$f.log"
done
step 90 python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" >"$OUT/compile.log" 2>&1; tail -4 "$OUT/compile.log"
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 90 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | tail -8
fi
