#!/usr/bin/env bash
# Session 12, call G (carry .whl): the 8-bit rule from 257 tokens (the bulk kernel on every layer) -- its GPU tests,
# and a sweep at M = 384 / 768 against the 256-row cp.async tiles it replaces.
. scripts/h200_setup.sh
call_results g
step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "large_m_default and uint8" >$R/tests_int8.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_int8.log | head -8; pack
HUMMING_PREFILL_M=1000000 step 120 python3 -m vllm_humming.tuning.sweep --desc w:uint8b128,s:channel:bfloat16 --ms 384,768 \
  --shapes 6144x4096,28672x4096,4096x14336 --top 4 --json $R/sweep_int8.json \
  --choices bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma >$R/sweep_int8.txt 2>&1
grep -E "cublas|^      " $R/sweep_int8.txt | sed 's/^      /  /' | cut -c1-96; pack
