#!/usr/bin/env bash
# Session 9, call B (carry .whl): the direct kernel's GPU tests (mma.sync + the new wgmma math), then sweeps against
# the current heuristic at M = 1 / 16 / 32 / 64 with the wave-aware split planner, the math-removed timings and the
# other formats.  Every sweep's full output goes to $OUT/sweep_*.txt; stdout gets the ranked rows.
. scripts/h200_setup.sh
step 300 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py >"$OUT/gpu_tests_direct.log" 2>&1
grep -E "^FAILED|passed|failed|rror" "$OUT/gpu_tests_direct.log" | head -12
export HUMMING_PREFILL_M=1000000
sweep() {  # NAME TIMEOUT MS CHOICES DESC [EXTRA...]
  local name=$1 t=$2 ms=$3 ch=$4 d=$5; shift 5
  step "$t" python3 -m vllm_humming.tuning.sweep --desc "$d" --ms "$ms" --choices "$ch" --top 14 "$@" \
    >"$OUT/sweep_$name.txt" 2>&1
  grep -E "cublas|^      |rror" "$OUT/sweep_$name.txt" | sed 's/^      /  /' | cut -c1-120
}
I4=w:uint4b8,s:g128:bfloat16
M1=bt8_wn1_tm2_wk8_ak256_s2_direct,bt8_wn1_tm2_wk8_ak256_s4_direct,bt8_wn1_tm2_wk4_ak256_s4_direct,bt8_wn1_tm2_wk4_ak256_s2_direct,bt8_wn2_tm2_wk4_ak256_s2_direct,bt8_wn2_tm2_wk4_ak256_s4_direct,bt8_wn1_tm1_wk8_ak256_s8_direct,bt8_wn1_tm1_wk8_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn1_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm1_wk1_ak256_s6_direct_wgmma
sweep int4_m1 170 1 $M1 $I4
M16=bt16_wn4_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s6_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s8_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s3_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s3_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn1_tm2_wk8_ak256_s2_direct,bt16_wn2_tm2_wk4_ak256_s2_direct
sweep int4_m16 120 16 $M16 $I4
sweep int4_m32_64 120 32,64 bt32_wn4_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn4_tm2_wk1_ak256_s3_direct_wgmma,bt64_wn4_tm1_wk1_ak256_s4_direct_wgmma,bt64_wn8_tm1_wk1_ak256_s3_direct_wgmma,bt64_wn4_tm2_wk1_ak256_s2_direct_wgmma,bt64_wn8_tm1_wk1_ak256_s4_direct_wgmma $I4
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH sweep int4_m1_nomath 50 1 bt8_wn1_tm2_wk8_ak256_s2_direct,bt8_wn1_tm2_wk4_ak256_s4_direct,bt8_wn1_tm1_wk8_ak256_s8_direct $I4
for d in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sweep "$(echo $d | cut -c3-8)" 100 1,16 bt8_wn1_tm2_wk8_ak256_s2_direct,bt8_wn1_tm2_wk4_ak256_s4_direct,bt8_wn2_tm2_wk4_ak256_s2_direct,bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s3_direct_wgmma $d
done
