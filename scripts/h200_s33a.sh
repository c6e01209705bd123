#!/usr/bin/env bash
# Prepared in session 32 (no device was lent), call A of the next device session: the expert-indexed MoE kernels
# (ops/moe_gemm.py, HUMMING_MOE_KERNELS) have never run on a GPU -- their correctness suite first, then the MoE bench
# (int4 and MXFP4; bf16 torch._grouped_mm in the same run), then every other GPU suite and the fixture models on this
# tree (session 31's plan refactor has not run on a GPU either).  Carry .shared_fixtures.
. scripts/h200_setup.sh
call_results a
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -q $par -m gpu tests/test_moe_gpu.py >"$R/moe_gpu_tests.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$R/moe_gpu_tests.log" | cut -c1-160 | tail -12; pack
step 150 python3 -m vllm_humming.bench.moe --json "$R/bench_moe_int4.json" >"$R/bench_moe_int4.log" 2>&1
tail -22 "$R/bench_moe_int4.log" | cut -c1-150; pack
step 80 python3 -m vllm_humming.bench.moe --desc "w:float4_e2m1,s:g32:float8_e8m0fnu" --layers 128:8:2048:768 \
  --json "$R/bench_moe_mxfp4.json" >"$R/bench_moe_mxfp4.log" 2>&1
tail -8 "$R/bench_moe_mxfp4.log" | cut -c1-150; pack
gpu_suites 420; cp "$OUT/gpu_tests.log" "$R/"; pack
e2e_fixtures; pack
