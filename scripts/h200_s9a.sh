#!/usr/bin/env bash
# Session 9, call A (carry .whl): the rewritten direct decode kernel (gemm_wna16_direct.cuh: register ring, K-warps,
# window sums of x) -- its GPU tests, then sweeps against the current heuristic (cp.async / wgmma) at M = 1 and 16,
# the math-removed timing, split counts, other formats, and the bench with HUMMING_PIPELINE=direct vs upstream.
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -x >"$OUT/gpu_tests_direct.log" 2>&1
grep -E "^FAILED|passed|failed|Error|error" "$OUT/gpu_tests_direct.log" | head -12
export HUMMING_PREFILL_M=1000000
sweep() {  # TIMEOUT MS CHOICES [DESC] [EXTRA...]
  local t=$1 ms=$2 ch=$3 d=${4:-w:uint4b8,s:g128:bfloat16}; shift 4 2>/dev/null || shift 3
  step "$t" python3 -m vllm_humming.tuning.sweep --desc "$d" --ms "$ms" --choices "$ch" --top 12 "$@" 2>&1 \
    | grep -E "cublas|^      |skip|Error"
}
D8=bt8_wn1_tm2_wk8_ak256_s4_direct
sweep 150 1 $D8,bt8_wn1_tm2_wk8_ak256_s2_direct,bt8_wn1_tm2_wk8_ak256_s3_direct,bt8_wn1_tm2_wk4_ak256_s4_direct,bt8_wn2_tm2_wk4_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn1_tm1_wk8_ak256_s4_direct,bt8_wn1_tm1_wk8_ak256_s8_direct,bt8_wn1_tm4_wk4_ak256_s2_direct,bt8_wn1_tm2_wk16_ak256_s2_direct,bt8_wn4_tm2_wk1_ak16_s6_direct,bt8_wn2_tm2_wk8_ak256_s2_direct
sweep 90 16 bt16_wn1_tm2_wk8_ak256_s4_direct,bt16_wn1_tm2_wk8_ak256_s2_direct,bt16_wn1_tm2_wk8_ak256_s3_direct,bt16_wn2_tm2_wk4_ak256_s4_direct,bt16_wn1_tm1_wk8_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s3_direct,bt16_wn1_tm2_wk4_ak256_s4_direct
sweep 60 1 $D8 w:uint4b8,s:g128:bfloat16 --splits 1,2,3,4
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep 40 1 $D8,bt8_wn1_tm2_wk8_ak256_s2_direct
for d in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sweep 60 1,16 $D8,bt8_wn1_tm2_wk8_ak256_s2_direct,bt8_wn2_tm2_wk4_ak256_s4_direct,bt16_wn1_tm2_wk8_ak256_s4_direct,bt16_wn1_tm2_wk8_ak256_s2_direct $d
done
unset HUMMING_PREFILL_M
HUMMING_PIPELINE=direct step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --cold none --no-eager \
  --json "$OUT/bench_int4_direct.json" >"$OUT/bench_int4_direct.log" 2>&1
grep -E "^\[bench\] (ours|upstream)" "$OUT/bench_int4_direct.log" | sed 's/, [0-9]* copies//' | cut -c9-110; grep -A3 "^Summary" "$OUT/bench_int4_direct.log" | tail -2
