#!/usr/bin/env bash
# Session 6, device call B (carry .whl): sweeps of hand-picked kernel choices after the int8 / int3 dequant change --
# int8 at M=1 / 16 (its stages are twice as many bytes as int4's), int4 and int3 at M=16 and M=64 -- to see whether
# per-bit-width or per-shape heuristics pay.  Same timing method as the bench.
. scripts/h200_setup.sh
M1=bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak1_s2,bt8_wn4_tm2_wk1_ak1_s5,bt8_wn8_tm2_wk1_ak1_s3,bt8_wn8_tm2_wk1_ak1_s4,bt8_wn2_tm2_wk2_ak2_s3,bt8_wn4_tm2_wk2_ak2_s3,bt8_wn4_tm2_wk2_ak2_s4,bt8_wn4_tm1_wk1_ak1_s4,bt8_wn8_tm1_wk1_ak1_s4,bt8_wn8_tm1_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak2_s3,bt8_wn4_tm1_wk2_ak2_s4,bt8_wn8_tm1_wk2_ak2_s3,bt8_wn16_tm1_wk1_ak1_s3
M16=bt16_wn8_tm1_wk2_ak2_s4,bt16_wn8_tm1_wk2_ak2_s3,bt16_wn8_tm1_wk2_ak2_s5,bt16_wn8_tm1_wk2_ak2_s6,bt16_wn8_tm2_wk1_ak4_s4,bt16_wn4_tm1_wk2_ak2_s4,bt16_wn4_tm1_wk4_ak4_s4,bt16_wn8_tm1_wk1_ak2_s4,bt16_wn8_tm1_wk1_ak1_s4,bt16_wn8_tm1_wk1_ak1_s6,bt16_wn4_tm2_wk1_ak1_s4,bt16_wn8_tm2_wk1_ak1_s4,bt16_wn4_tm1_wk1_ak1_s6,bt16_wn16_tm1_wk1_ak1_s4
M64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s4_wgmma,bt64_wn8_tm1_wk1_ak1_s8_wgmma,bt64_wn4_tm1_wk1_ak1_s6_wgmma,bt64_wn4_tm1_wk1_ak1_s8_wgmma,bt32_wn8_tm1_wk1_ak1_s6_wgmma,bt32_wn4_tm1_wk1_ak1_s6_wgmma,bt64_wn4_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm1_wk2_ak2_s4
sw() { local name=$1 desc=$2 ms=$3 ch=$4
  step 150 python3 -m vllm_humming.tuning.sweep --desc "$desc" --ms $ms --choices $ch --json "$OUT/sweep_$name.json" \
    >"$OUT/sweep_$name.log" 2>&1; grep -E "cublas|^      " "$OUT/sweep_$name.log" | head -40; }
sw int8_m1 w:uint8b128,s:channel:bfloat16 1 $M1
sw int8_m16 w:uint8b128,s:channel:bfloat16 16 $M16
sw int4_m16 w:uint4b8,s:g128:bfloat16 16 $M16
sw int4_m64 w:uint4b8,s:g128:bfloat16 64 $M64
sw int3_m64 w:uint3b4,s:g128:bfloat16 64 $M64
