#!/usr/bin/env bash
# Session 16, call A (carry .whl): two 64-column atoms per stage for the formats session 15 did not measure --
# int3 / MXFP4 / int8 at 48 / 64 tokens, and int3 / MXFP4 / int8 at 128 / 256 -- then the two-atom tests it cut (M=257).
. scripts/h200_setup.sh
call_results a
C64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm1_wk1_ak2_s3_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma
C256=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma
for f in "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4" "i8 w:uint8b128,s:channel:bfloat16"; do
  set -- $f
  SWEEP_TIMEOUT=75 sweep_case "ak2_m64_$1" "$2" 48,64 "$SH" "$C64"
done
for f in "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4" "i8 w:uint8b128,s:channel:bfloat16"; do
  set -- $f
  SWEEP_TIMEOUT=80 sweep_case "ak2_m256_$1" "$2" 128,256 "$SH" "$C256"
done
step 100 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "two_atom and 257" >$R/gpu_tests_two_atom_257.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_two_atom_257.log | tail -6; pack
