#!/usr/bin/env bash
# Session 8, call A (carry .whl): the stream-K schedule of the cp.async kernel (KernelChoice.stream_k) -- its GPU
# tests, then int4 sweeps of every default choice against its stream-K twin at M = 1 / 16 / 64 / 256 / 1024.
. scripts/h200_setup.sh
step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 6144x4096 --ms 1 --no-upstream --no-eager \
  2>&1 | grep "cold compile (ours):"
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "stream_k" -x >"$OUT/gpu_tests_stream_k.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/gpu_tests_stream_k.log" | tail -8
export HUMMING_PREFILL_M=1000000
sweep() {  # MS CHOICES [DESC]
  step 150 python3 -m vllm_humming.tuning.sweep --desc "${3:-w:uint4b8,s:g128:bfloat16}" --ms "$1" --choices "$2" 2>&1 \
    | grep -E "cublas|^      "
}
sweep 1 bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak1_s4_sk,bt8_wn4_tm2_wk2_ak2_s4_sk,bt8_wn4_tm2_wk1_ak1_s6_sk
sweep 16 bt16_wn8_tm2_wk2_ak2_s3,bt16_wn8_tm2_wk2_ak2_s3_sk,bt16_wn8_tm1_wk2_ak2_s4_sk,bt16_wn4_tm2_wk2_ak2_s4_sk
sweep 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_sk_wgmma,bt64_wn8_tm1_wk1_ak1_s4_sk_wgmma,bt64_wn8_tm2_wk1_ak1_s4_sk_wgmma
sweep 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s3_sk_wgmma
sweep 1024 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
