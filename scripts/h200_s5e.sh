#!/usr/bin/env bash
# Session 5, device call E (carry .whl and .shared_fixtures): the final tree -- every GPU suite (incl. the bulk wgmma
# tests), int3 / int8 / MXFP4 against upstream at M <= 256, the e2e fixture models, then the compile report if time
# is left.  (The int4 bench of call A stands: the default sm_90a kernels are byte-identical, see results/README.md.)
. scripts/h200_setup.sh
T0=$SECONDS
step 230 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 80 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -A3 "^Summary" "$OUT/bench_$f.log" | tail -1
done
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 70 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | cut -c1-90 | tail -8
fi
left=$((570 - (SECONDS - T0)))
if [ $left -gt 30 ]; then
  step $left python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" >"$OUT/compile.log" 2>&1; tail -3 "$OUT/compile.log"
fi
