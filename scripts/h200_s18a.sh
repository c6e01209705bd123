#!/usr/bin/env bash
# Session 18, call A (carry .whl; ~9 minutes): the prefill threshold per shape, same run -- the bench at M = 1024 /
# 1536 / 2048 (expand + cuBLAS, the default from 1024 tokens, against cuBLAS and upstream) and the fused kernels at
# the same M with the threshold lifted; then the direct kernels' GPU suite (not run since session 15).
. scripts/h200_setup.sh
call_results a
step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1024,1536,2048 --cold none --no-eager \
  --json $R/bench_prefill_expand.json >$R/bench_prefill_expand.log 2>&1; grep -A6 "^Summary" $R/bench_prefill_expand.log; pack
F=bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma
HUMMING_PREFILL_M=1000000000 SWEEP_TIMEOUT=230 sweep_case prefill_fused $I4 1024,1536,2048 "$SH" "$F"
step 60 python3 scripts/prewarm_gemm.py --prefill-m 1024 >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "not overhead" >$R/gpu_tests_direct.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_direct.log | tail -4; pack
