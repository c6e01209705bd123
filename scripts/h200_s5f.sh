#!/usr/bin/env bash
# Session 5, device call F (carry .whl): the bulk wgmma kernel after the stream-K reduction fix (float4, no 64-bit
# division per element) -- its tests, test_gemm_gpu.py with HUMMING_PIPELINE=bulk (every format x M through the bulk
# pipeline), and the int4 bench at M = 64 / 256 with HUMMING_PIPELINE=bulk against the default in the same call.
. scripts/h200_setup.sh
step 90 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bulk" -x >"$OUT/tests_bulk.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/tests_bulk.log" | head -6
HUMMING_PIPELINE=bulk step 110 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -x >"$OUT/tests_gemm_bulk.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/tests_gemm_bulk.log" | head -6
HUMMING_PIPELINE=bulk step 70 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 64,256 --cold none --no-eager \
  --json "$OUT/bench_int4_bulk.json" >"$OUT/bench_int4_bulk.log" 2>&1
sed -n '/^== w4a16/,/^64 /p;/^256 /p' "$OUT/bench_int4_bulk.log" | cut -c1-200 | tail -4
