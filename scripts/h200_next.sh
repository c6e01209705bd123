#!/usr/bin/env bash
# Next session, call A (carry .whl and .shared_fixtures; ~9 minutes): the GPU suites not re-run since session 15 (direct
# / ops / prefill / dequant / JIT / reducers), the fixture models, then the prefill threshold: expand + cuBLAS (the
# bench's default path from 1024 tokens) against the fused 256-row TMA tiles at 1024 / 1536 / 2048 tokens, same run
# (session 17 saw the fused split-K TMA tile at 0.86x / 0.95x cuBLAS on 28672x4096 / 4096x14336 at M=1024 against
# 0.77x / 0.77x for the expansion path in another call).
. scripts/h200_setup.sh
call_results a
step 60 python3 scripts/prewarm_gemm.py --prefill-m 1024 >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "not overhead" >$R/gpu_tests_direct.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_direct.log | tail -4; pack
step 120 python3 -m pytest -q -m gpu tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py -k "not overhead" >$R/gpu_tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -4; pack
OUT=$R e2e_fixtures; pack
step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1024,1536,2048 --cold none --no-eager \
  --json $R/bench_prefill_expand.json >$R/bench_prefill_expand.log 2>&1; grep -A6 "^Summary" $R/bench_prefill_expand.log; pack
F=bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma
HUMMING_PREFILL_M=1000000000 SWEEP_TIMEOUT=120 sweep_case prefill_fused $I4 1024,1536,2048 "$SH" "$F"
