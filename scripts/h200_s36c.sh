#!/usr/bin/env bash
# Session 36, call C: on an H200, the int4 bench of record with the 25 ms warm-up first; then (any card) the GPU
# suites calls A / B left unfinished at their limits (pipelines, prefill chunks, dequant, JIT, reducers, MoE,
# act-quant) in the time left.  Carry .whl.
. scripts/h200_setup.sh
call_results c
SUITE_S=380
if grep -q H200 "$OUT/device.txt"; then
  step 180 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 --cold none --no-eager \
    --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
  grep -A3 "^Summary" "$R/bench_int4.log"; grep -E "\] (ours|upstream|cuBLAS) .* M=1:" "$R/bench_int4.log" | cut -c1-90; pack
  SUITE_S=200
fi
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step $SUITE_S python3 -m pytest -q $par -m gpu tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py tests/test_moe_gpu.py \
  tests/test_act_quant_gpu.py -k "not overhead" -rf >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -6; grep "%\]" "$R/gpu_tests.log" | tail -1; pack
