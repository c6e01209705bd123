#!/usr/bin/env bash
# Session 12, call H (carry .whl): stream-K 256-row tiles on every layer from 257 tokens -- GPU tests (every format,
# K tails), and int4 at M = 384 / 768 (split-K vs stream-K: the split-K grids hit 1-2 wave cliffs there).
. scripts/h200_setup.sh
call_results h
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "large_m_default and (257 or 700)" >$R/tests_sk.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_sk.log | head -8; pack
HUMMING_PREFILL_M=1000000 step 100 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms 384,768 \
  --shapes 6144x4096,28672x4096,4096x14336 --top 4 --json $R/sweep_int4.json \
  --choices bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma >$R/sweep_int4.txt 2>&1
grep -E "cublas|^      " $R/sweep_int4.txt | sed 's/^      /  /' | cut -c1-96; pack
