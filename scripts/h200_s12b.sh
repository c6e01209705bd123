#!/usr/bin/env bash
# Session 12, call B (carry .whl): the bulk kernel's three-warpgroup tiles (GPU-tested in session 11, never timed)
# against the defaults at M = 64 / 256 / 1024; the cluster-reduced split-K choices that won for int4 in call A
# (6144x4096 M=64 c2, 4096x14336 M=256 c2, 28672x4096 M=16 c2) for the other bench formats; M=64 wide-layer tiles.
. scripts/h200_setup.sh
call_results b
export HUMMING_PREFILL_M=1000000
sw() {  # NAME DESC MS SHAPES CHOICES [extra sweep args]
  step 100 python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 --json $R/sweep_$1.json \
    "${@:6}" >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-96; pack
}
I4=w:uint4b8,s:g128:bfloat16
ALL=6144x4096,28672x4096,4096x14336
sw bulk256 $I4 256 $ALL bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt64_wn12_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma
sw bulk1024 $I4 1024 28672x4096,4096x14336 bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma
sw m64wide $I4 64 28672x4096,4096x14336 bt64_wn12_tm1_wk1_ak1_s6_bulk_wgmma,bt64_wn4_tm1_wk1_ak1_s6_wgmma,bt64_wn4_tm2_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm1_wk1_ak1_s6_wgmma
sw m16i4 $I4 16 28672x4096 bt16_wn8_tm2_wk1_ak1_s4_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
for f in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sw m64_${f:2:5} $f 64 6144x4096 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma
  sw m256_${f:2:5} $f 256 4096x14336 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s5_c2_wgmma
done
sw m1024c $I4 1024 4096x14336,6144x4096 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s5_c2_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma
