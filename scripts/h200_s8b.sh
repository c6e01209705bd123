#!/usr/bin/env bash
# Session 8, call B (carry .whl): call A found the stream-K kernels 5-50 % slower than split-K.  Suspect: the last
# contributor's fixup summed the partials with one dependent L2 load per contributor (rolled loops) -- the same loop
# the bulk kernel had.  Both now use stream_k.cuh's batched sum.  Tests of both schedules, then the sweeps again
# (bulk wgmma at M = 64 / 256 too).
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "stream_k or bulk" -x >"$OUT/gpu_tests_stream_k_bulk.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/gpu_tests_stream_k_bulk.log" | tail -8
export HUMMING_PREFILL_M=1000000
sweep() {  # MS CHOICES [DESC]
  step 150 python3 -m vllm_humming.tuning.sweep --desc "${3:-w:uint4b8,s:g128:bfloat16}" --ms "$1" --choices "$2" 2>&1 \
    | grep -E "cublas|^      "
}
sweep 1 bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak1_s4_sk,bt8_wn4_tm2_wk2_ak2_s4_sk
sweep 16 bt16_wn8_tm2_wk2_ak2_s3,bt16_wn8_tm2_wk2_ak2_s3_sk,bt16_wn8_tm1_wk2_ak2_s4_sk
sweep 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_sk_wgmma,bt64_wn8_tm1_wk1_ak1_s4_bulk_wgmma
sweep 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma
