#!/usr/bin/env bash
# Session 35, call C: the tree with the one-token prefetch rule (SMEM_PF_MAX_M = 1) -- the int4 bench of record
# (M = 1 / 16 / 64 / 256, upstream in the same run), the GEMM / direct / ops GPU suites (they run the default plans,
# the prefetch choice at M=1 on narrow 4-bit layers included), the prefetch A/B at M=1 (HUMMING_SMEM_PREFETCH=0).
# Carry .whl.
. scripts/h200_setup.sh
call_results c
step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; grep -E "\] ours .* M=1:" "$R/bench_int4.log" | cut -c1-90; pack
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 260 python3 -m pytest -q $par -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py tests/test_ops_gpu.py \
  -k "not overhead" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -6; pack
HUMMING_SMEM_PREFETCH=0 step 50 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1 --shapes 6144x4096 \
  --cold none --no-eager --no-upstream --json "$R/bench_pf0.json" >"$R/bench_pf0.log" 2>&1
grep -E "\] ours" "$R/bench_pf0.log" | cut -c1-90; pack
