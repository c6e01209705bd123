#!/usr/bin/env bash
# Session 17, call C (carry .whl; ~8 minutes): the TMA x tiles as defaults for codes of <= 4 bits -- their GPU tests
# (the tma_x suite and every default-choice test of the pipelines suite), then same-run sweeps, old default vs new:
# int3 / MXFP4 at 64 and 256 tokens, int4 at 512 (stream-K), int8's one-atom tiles with TMA at 64.
. scripts/h200_setup.sh
call_results c
step 100 python3 scripts/prewarm_gemm.py bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_wgmma_tma_x or default_choices or default" >$R/gpu_tests_tma.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests_tma.log | tail -6; pack
M64=bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma
M256=bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma
for f in "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4"; do
  set -- $f
  SWEEP_TIMEOUT=50 sweep_case "m64_$1" "$2" 64 "$SH" "$M64"
  SWEEP_TIMEOUT=70 sweep_case "m256_$1" "$2" 256 "$SH" "$M256"
done
SWEEP_TIMEOUT=50 sweep_case m512_i4 $I4 512 "$SH" bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma
SWEEP_TIMEOUT=50 sweep_case m64_i8 w:uint8b128,s:channel:bfloat16 64 "$SH" bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s4_tma_wgmma
