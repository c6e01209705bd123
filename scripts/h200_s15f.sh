#!/usr/bin/env bash
# Session 15, call F (carry .whl; ~9 minutes): the bulk kernel's end_segment with one y-write loop -- its GPU suites
# (grid sizes, formats, CUDA graphs, the stream-K any-finisher test) and the defaults that run it (8-bit codes at
# 129-256 / 257+ tokens, narrow layers at 100 / 257); a same-run timing of the bulk defaults; then the bench at
# M = 128 (int4, int8) for the new wide-layer default.
. scripts/h200_setup.sh
call_results f
step 230 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "any_finisher or bulk_grid_sizes or bulk_wgmma_grid_sizes or bulk_wgmma_formats or bulk_cuda_graph or bulk_formats or (large_m_default and uint8 and (129 or 256 or 257)) or (narrow_default and (100 or 257))" \
  >$R/gpu_tests_bulk.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_bulk.log | tail -8; pack
SWEEP_TIMEOUT=80 sweep_case i8_m256_bulk w:uint8b128,s:channel:bfloat16 256 28672x4096,4096x14336,6144x4096 \
  bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma
for f in w4a16-int4-g128 w8a16-int8-channel; do
  step 120 python3 -m vllm_humming.bench --formats $f --ms 128 --cold none --no-eager --json $R/bench_m128_$f.json \
    >$R/bench_m128_$f.log 2>&1; grep -A3 "^Summary" $R/bench_m128_$f.log | tail -1; pack
done
