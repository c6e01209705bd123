#!/usr/bin/env bash
# Session 15, call G (carry .whl and .shared_fixtures; ~6 minutes): two atoms per stage in the cp.async wgmma kernel
# (half the per-stage barriers / waits / fixed costs) -- its GPU tests, a same-run sweep against the one-atom defaults
# at 48-256 tokens, then the fixture models end to end on the final tree.
. scripts/h200_setup.sh
call_results g
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k two_atom >$R/gpu_tests_two_atom.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_two_atom.log | tail -6; pack
C64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm1_wk1_ak2_s3_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s3_wgmma
C128=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma
SWEEP_TIMEOUT=90 sweep_case i4_ak2_m64 w:uint4b8,s:g128:bfloat16 48,64 "$SH" "$C64"
SWEEP_TIMEOUT=90 sweep_case i4_ak2_m256 w:uint4b8,s:g128:bfloat16 128,256 "$SH" "$C128"
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack
