#!/usr/bin/env bash
# Session 14, call D (carry .whl; ~5 minutes): the bulk kernel's stream-K end moved onto the shared join
# (streamk_join_partial, stream_k.cuh; the cp.async kernels' SASS is unchanged from call C).  Its GPU tests, then
# M = 256 / 512 on the three shapes for the four formats: 256-row split-K / stream-K (s4, s5) vs the bulk kernels.
. scripts/h200_setup.sh
call_results d
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "any_finisher or bulk_grid_sizes or bulk_wgmma_grid_sizes or bulk_wgmma_formats or bulk_cuda_graph or bulk_formats" \
  >$R/gpu_tests_bulk.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_bulk.log | tail -8; pack
export HUMMING_PREFILL_M=1000000
S3=28672x4096,4096x14336,6144x4096
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma
for d in w:uint4b8,s:g128:bfloat16 w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  n=$(echo $d | cut -d, -f1 | tr -d ':')
  SWEEP_TIMEOUT=80 sweep_case "m256_$n" $d 256,512 $S3 $CH
done
