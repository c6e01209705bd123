#!/usr/bin/env bash
# Session 17, call D (carry .whl; ~8 minutes): the final defaults' GPU tests (every default-choice test of the
# pipelines suite, the TMA suite incl. the W-by-bulk-copy variants, test_gemm_gpu.py), a same-run sweep of the TMA
# defaults against their bulk_w twins (int4, 64 / 256 tokens), then the int4 bench.
. scripts/h200_setup.sh
call_results d
W="bt64_wn8_tm1_wk1_ak2_s4_tmaw_wgmma bt128_wn8_tm1_wk1_ak2_s4_tmaw_wgmma bt128_wn8_tm2_wk1_ak2_s3_sk_tmaw_wgmma bt64_wn8_tm1_wk1_ak1_s6_tmaw_wgmma bt64_wn8_tm2_wk1_ak2_s4_tmaw_wgmma"
step 100 python3 scripts/prewarm_gemm.py $W >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_wgmma_tma_x or default" >$R/gpu_tests_defaults.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_defaults.log | tail -6; pack
step 80 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_gemm.log | tail -6; pack
SWEEP_TIMEOUT=50 sweep_case tmaw_m64 $I4 64 "$SH" bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tmaw_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tmaw_wgmma
SWEEP_TIMEOUT=50 sweep_case tmaw_m256 $I4 256 "$SH" bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tmaw_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tmaw_wgmma
step 220 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -A12 "^== w4a16" $R/bench_int4.log | tail -12; pack
