#!/usr/bin/env bash
# Session 5, device call A (carry .whl): main + the staged wgmma epilogue (branch next/wgmma-staged-epilogue merged).
# (1) the GPU suites -- first GPU run of the fence (9bacbf9) and of the staged epilogue; (2) the int4 bench, all M,
# with cuBLAS and upstream; (3) the 256-row wgmma tiles re-swept at M = 64 / 256 / 1024 (no expand path).
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 170 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
sed -n '/^== w4a16/,/eager us/p;/^Summary/,+3p' "$OUT/bench_int4.log" | cut -c1-200
export HUMMING_PREFILL_M=1000000
step 200 python3 -m vllm_humming.tuning.sweep --ms 64,256,1024 --json "$OUT/sweep_wide.json" --choices \
bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,\
bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma \
  >"$OUT/sweep_wide.log" 2>&1; grep -v "^\[" "$OUT/sweep_wide.log" | cut -c1-170 | tail -45
