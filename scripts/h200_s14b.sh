#!/usr/bin/env bash
# Session 14, call B (carry .whl; ~6 minutes): pipeline depth of the wgmma kernels.  Call A showed the 256-row
# tiles' copy pipeline alone (HUMMING_SKIP_MATH) taking 64 of 113 us at 28672x4096 M=256 -- with 4 stages only 2 are
# in flight (one stage's MMAs stay pending) -- so: 4 / 5 / 6 stages at M = 256 / 512 / 1024 (split-K and stream-K),
# the M=64 tiles at 4 / 6 / 8, and the other formats at M=256.
. scripts/h200_setup.sh
call_results b
export HUMMING_PREFILL_M=1000000
I4=w:uint4b8,s:g128:bfloat16
S3=28672x4096,4096x14336,6144x4096
T2=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s6_wgmma,bt128_wn8_tm2_wk1_ak1_s7_wgmma
K2=bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s6_sk_wgmma
SWEEP_TIMEOUT=80 sweep_case m256_depth $I4 256,512 $S3 $T2,$K2
SWEEP_TIMEOUT=80 sweep_case m1024_depth $I4 1024 $S3 $K2,bt128_wn8_tm2_wk1_ak1_s7_sk_wgmma
C64=bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s8_wgmma,bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s8_wgmma
SWEEP_TIMEOUT=80 sweep_case m64_depth $I4 64 $S3 $C64
C128=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s6_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s6_wgmma
SWEEP_TIMEOUT=60 sweep_case m128_depth $I4 128 $S3 $C128
for d in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  n=$(echo $d | cut -d, -f1 | tr -d ':')
  SWEEP_TIMEOUT=70 sweep_case "m256_$n" $d 256 $S3 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s6_wgmma,bt128_wn8_tm2_wk1_ak1_s6_sk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma
done
