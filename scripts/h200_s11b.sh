#!/usr/bin/env bash
# Session 11, call B (carry .whl): the direct kernel launched as thread block clusters (the K splits of a tile summed
# through distributed shared memory) -- its GPU tests, then M=1 / M=16 sweeps of clustered choices against the
# defaults; last, the 34 GPU tests call A's time limit cut (session 10's owed list, from test 184 on).
. scripts/h200_setup.sh
call_results b
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k cluster >$R/tests_cluster.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_cluster.log | head -12; pack
export HUMMING_PREFILL_M=1000000
C1="bt8_wn4_tm2_wk2_ak256_s4_c8_direct,bt8_wn4_tm2_wk2_ak256_s4_c4_direct,bt8_wn4_tm2_wk2_ak256_s4_c2_direct"
C1="$C1,bt8_wn8_tm1_wk1_ak256_s4_c8_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s4_c8_direct_wgmma"
C1="$C1,bt8_wn2_tm2_wk2_ak256_s4_c8_direct,bt8_wn2_tm2_wk2_ak256_s4_c4_direct,bt8_wn4_tm2_wk1_ak256_s4_c8_direct"
C1="$C1,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
step 150 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms 1 --choices "$C1" --top 12 \
  --json $R/sweep_m1.json >$R/sweep_m1.txt 2>&1
grep -E "cublas|^      " $R/sweep_m1.txt | sed 's/^      /  /' | cut -c1-100; pack
C16="bt16_wn8_tm1_wk1_ak256_s4_c8_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_c2_direct_wgmma"
C16="$C16,bt16_wn8_tm2_wk1_ak256_s2_c4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s4_c8_direct_wgmma"
C16="$C16,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"
step 120 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms 16 --choices "$C16" --top 8 \
  --json $R/sweep_m16.json >$R/sweep_m16.txt 2>&1
grep -E "cublas|^      " $R/sweep_m16.txt | sed 's/^      /  /' | cut -c1-100; pack
python3 -m pytest --collect-only -q -m gpu tests/test_gemm_pipelines_gpu.py -k "narrow_default or bulk_wgmma or stream_k or decode16_wgmma" \
  2>/dev/null | grep "::" | sed -n '184,$p' >$R/rest_ids.txt
step 120 python3 -m pytest -q -m gpu $(cat $R/rest_ids.txt) >$R/tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/tests_rest.log | tail -4; pack
