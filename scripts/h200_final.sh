#!/usr/bin/env bash
# The full H200 session in one command (device tool): GPU tests, e2e fixture models, bench vs cuBLAS + upstream,
# compile report, a profile of the decode kernel.  Logs and JSON land in $OUT.
#   carry: .whl (humming-kernels wheel, optional peer) and .shared_fixtures (copy of ../shared/fixtures)
. scripts/h200_setup.sh
step 90 python3 scripts/prewarm_gemm.py >"$OUT/prewarm.log" 2>&1; tail -1 "$OUT/prewarm.log"
step 560 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_ops_gpu.py tests/test_splitk_reducers_gpu.py -k "not overhead" \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 60 python3 scripts/exp_eager.py 2>&1 | tee "$OUT/exp_eager.log"
step 60 python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" >"$OUT/compile.log" 2>&1; tail -8 "$OUT/compile.log"
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A12 "^Summary" "$OUT/bench_int4.log"
step 150 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64,1024 \
  --cold none --json "$OUT/bench_more.json" >"$OUT/bench_more.log" 2>&1; grep -A8 "^Summary" "$OUT/bench_more.log"
# (profile a case: ncu ... python3 scripts/profile_case.py DESC N K M [CHOICE], see scripts/h200_round2.sh)
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 90 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | tail -14
fi
