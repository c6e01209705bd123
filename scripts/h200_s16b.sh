#!/usr/bin/env bash
# Session 16, call B (carry .whl): the GPU tests of the new two-atom defaults (<= 4-bit codes at 33-256 tokens), then
# the rolled two-atom loop against the unrolled one (NVRTC time), and two-atom stages at 512 tokens (stream-K).
. scripts/h200_setup.sh
call_results b
AK2=bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma,bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma
step 90 python3 scripts/prewarm_gemm.py ${AK2//,/ } >$R/prewarm.log 2>&1; tail -2 $R/prewarm.log
step 270 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "two_atom or narrow_m64_default or (large_m_default and not 257- and not 700-)" >$R/gpu_tests_new_defaults.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_new_defaults.log | tail -8; pack
SWEEP_TIMEOUT=60 sweep_case unrolled_m64_256 $I4 64,256 "$SH" "$AK2"
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED SWEEP_TIMEOUT=60 sweep_case rolled_m64_256 $I4 64,256 "$SH" "$AK2"
C512=bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma
for f in "i4 $I4" "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4"; do
  set -- $f
  SWEEP_TIMEOUT=55 sweep_case "ak2_m512_$1" "$2" 512 "$SH" "$C512"
done
