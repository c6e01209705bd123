#!/usr/bin/env bash
# Session 8, call C (carry .whl): stream-K did not beat split-K (call B), so the wave quantization it was meant to fix
# is probed with forced split counts instead (HUMMING_DEBUG_SPLITS via tuning.sweep --splits): 28672x4096 runs 112
# tiles on 132 slots at M=16 and 224 on 264 at M=64.  Then two K-warps at M=1 for four formats (session 7: 2-6 %
# faster on the narrow shapes for int4).
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
sweep() {  # DESC MS CHOICES [EXTRA...]
  local d=$1 m=$2 c=$3; shift 3
  step 150 python3 -m vllm_humming.tuning.sweep --desc "$d" --ms "$m" --choices "$c" "$@" 2>&1 | grep -E "cublas|^      "
}
I4=w:uint4b8,s:g128:bfloat16
sweep $I4 16 bt16_wn8_tm2_wk2_ak2_s3 --splits 2,3,4,7
sweep $I4 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma --splits 2,3,4,6
sweep $I4 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma --splits 2,3 --shapes 28672x4096,6144x4096
for d in $I4 w:uint3b4,s:g128:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sweep $d 1 bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk2_ak2_s4,bt8_wn4_tm2_wk2_ak2_s3
done
sweep w:uint8b128,s:channel:bfloat16 1 bt8_wn4_tm2_wk1_ak1_s2,bt8_wn4_tm2_wk2_ak2_s2,bt8_wn4_tm2_wk2_ak2_s3
