#!/usr/bin/env bash
# Session 12, call C (carry .whl): GPU tests of the new cluster defaults (wide int3/int4 at 9-16 tokens, narrow
# 33-64 tokens for every format) and the default-choice suites they change; then stream-K for the 256-row tiles
# (the wide layer's M=64 / 256 grids are 112 / 224 tiles on 132 SMs), the large-M choices at M=512, and the wide
# M=64 256-row tile for the other bench formats.
. scripts/h200_setup.sh
call_results c
step 240 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "default_choices or cluster" >$R/tests_defaults.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_defaults.log | head -12; pack
export HUMMING_PREFILL_M=1000000
sw() {  # NAME DESC MS SHAPES CHOICES [extra sweep args]
  step 110 python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 --json $R/sweep_$1.json \
    "${@:6}" >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-96; pack
}
I4=w:uint4b8,s:g128:bfloat16
ALL=6144x4096,28672x4096,4096x14336
sw sk64 $I4 64 $ALL bt64_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt64_wn8_tm1_wk1_ak1_s6_sk_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm1_wk1_ak1_s6_wgmma
sw sk256 $I4 256,512 $ALL bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s5_c2_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma
for f in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sw m64w_${f:2:5} $f 64 28672x4096 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s4_sk_wgmma
done
