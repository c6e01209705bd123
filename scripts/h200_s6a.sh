#!/usr/bin/env bash
# Session 6, device call A (carry .whl and .shared_fixtures): the new int8 (bf16) and int3 dequant -- two-magic int8
# pairs without the fp32 round trip, 3-bit fields instead of a 2+1 plane split (layout.cuh) -- through every GPU suite,
# the e2e fixtures, then int3 / int8 against upstream at M <= 256.
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 70 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | cut -c1-90 | tail -8
fi
for f in w8a16-int8-channel w3a16-int3-g128; do
  step 90 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -E "^\[bench\] (ours|upstream)" "$OUT/bench_$f.log" | sed 's/, eager.*//' | cut -c9-90
  grep -A3 "^Summary" "$OUT/bench_$f.log" | tail -1
done
