#!/usr/bin/env bash
# Session 43, call A (carry .whl).  Any card: the new cold-first-call test (a layer's first one-token call loads only
# the kernel its plan launches) and one cold compile of the M=1 layer.  H200: then the int4 bench of record with
# eager / cold compile and the other formats.  Other cards: the GPU suites session 42's prefetch tree had not run
# (MoE, act-quant, pipelines, prefill, dequant, JIT, split-K reducers).
. scripts/h200_setup.sh
call_results a
step 120 python3 -m pytest -v --tb=short -rf -m gpu tests/test_ops_gpu.py -k "first_decode" >"$R/test_first_decode.log" 2>&1
grep -E "PASSED|FAILED|passed|failed|Error" "$R/test_first_decode.log" | cut -c1-160 | tail -6; pack
if grep -q H200 "$OUT/device.txt"; then
  step 300 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,2,16,64,256 \
    --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
  pack; sed -n '/^vllm-humming bench/,$p' "$R/bench_int4.log" | head -60
  step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 \
    --cold none --no-eager --json "$R/bench_w3_w8_mxfp4.json" >"$R/bench_w3_w8_mxfp4.log" 2>&1
  grep -A5 "^Summary" "$R/bench_w3_w8_mxfp4.log"; pack
else
  step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1 --shapes 6144x4096 --no-upstream --no-eager \
    --json "$R/cold_m1.json" >"$R/cold_m1.log" 2>&1
  grep -i "cold" "$R/cold_m1.log" | cut -c1-160 | tail -4; pack
  par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
  step 400 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
    tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py tests/test_moe_gpu.py \
    tests/test_act_quant_gpu.py tests/test_ops_gpu.py -k "not overhead" >"$R/gpu_tests_rest.log" 2>&1
  grep -E "FAILED|passed|failed" "$R/gpu_tests_rest.log" | cut -c1-200 | tail -12; pack
fi
