#!/usr/bin/env bash
# Session 13, call E (carry .whl): the reducers' GPU test, the cp.async / wgmma pipeline suite (every forced choice
# goes through the changed split-K end) and test_gemm_gpu on the new defaults (9-16 tokens narrow int3 / int4: the
# 256-row direct tiles; 33-64 narrow: ticketed splits again); then M = 128 / 256 with the reducers: bulk vs the
# cp.async wgmma tiles.
. scripts/h200_setup.sh
call_results e
step 150 python3 -m pytest -q -m gpu tests/test_splitk_reducers_gpu.py >$R/tests_reducers.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/tests_reducers.log | tail -5; pack
for F in w:uint4b8,s:g128:bfloat16 w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  SWEEP_TIMEOUT=60 sweep_case m128_256_${F:2:6} $F 128,256 6144x4096,4096x14336 bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma
done
step 330 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py >$R/tests_pipelines_gemm.log 2>&1
grep -E "^FAILED|passed|failed" $R/tests_pipelines_gemm.log | tail -8; pack
