#!/usr/bin/env bash
# Session 14, call C (carry .whl; ~6 minutes): the stream-K end rewritten (streamk_join_partial: the finisher that
# finds the others parked reads only their parts into its registers).  Its GPU tests first, then stream-K vs split-K
# 256-row tiles at M = 256 / 512 / 1024 (int4) and M=256 for the other formats.
. scripts/h200_setup.sh
call_results c
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "stream_k or (large_m_default and (256 or 700))" \
  >$R/gpu_tests_sk.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_sk.log | tail -8; pack
export HUMMING_PREFILL_M=1000000
I4=w:uint4b8,s:g128:bfloat16
S3=28672x4096,4096x14336,6144x4096
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma
SWEEP_TIMEOUT=90 sweep_case sk_int4 $I4 256,512,1024 $S3 $CH
for d in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  n=$(echo $d | cut -d, -f1 | tr -d ':')
  SWEEP_TIMEOUT=70 sweep_case "sk_$n" $d 256,512 $S3 $CH,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma
done
