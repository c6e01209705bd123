#!/usr/bin/env bash
# Session 17, call B (carry .whl; ~8 minutes): the activation tile through the TMA unit (KernelChoice.tma_x) -- its
# GPU tests, then same-run sweeps of the int4 defaults at 64 / 128 / 256 tokens against their _tma twins.
. scripts/h200_setup.sh
call_results b
T="bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma bt128_wn8_tm1_wk1_ak2_s3_tma_wgmma bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma"
step 90 python3 scripts/prewarm_gemm.py --only $T >$R/prewarm.log 2>&1; tail -3 $R/prewarm.log
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "tma" -x >$R/gpu_tests_tma.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_tma.log | tail -6; pack
C64=bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma
SWEEP_TIMEOUT=80 sweep_case tma_m64 $I4 64 "$SH" "$C64"
C256=bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma
SWEEP_TIMEOUT=150 sweep_case tma_m128_256 $I4 128,256 "$SH" "$C256"
