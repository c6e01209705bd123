#!/usr/bin/env bash
# Session 10, call C: MMA groups of half an atom (HUMMING_DEBUG_WG_HALF_ATOM_GROUPS) against one k16 step for the
# 128-accumulator wgmma tiles at M = 256 / 1024; the bulk 128-row choice on 6144x4096 at other M and formats.
. scripts/h200_setup.sh
mkdir -p /tmp/c && R=/tmp/c
pack() { tar czf "$OUT/c_all.tgz" -C /tmp c; }
export HUMMING_PREFILL_M=1000000
sw() {  # NAME DESC MS SHAPES CHOICES [DEFINES]
  HUMMING_DEBUG_DEFINES="${6:-}" step 150 python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-120; pack
}
BIG=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma
sw g1 w:uint4b8,s:g128:bfloat16 256,1024 28672x4096,4096x14336 $BIG
sw g2 w:uint4b8,s:g128:bfloat16 256,1024 28672x4096,4096x14336 $BIG HUMMING_DEBUG_WG_HALF_ATOM_GROUPS
NAR=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s8_bulk_wgmma
sw nar_int4 w:uint4b8,s:g128:bfloat16 128,512 6144x4096 $NAR
sw nar_int8 w:uint8b128,s:channel:bfloat16 256 6144x4096 $NAR
sw nar_mxfp4 w:float4_e2m1,s:g32:float8_e8m0fnu 256 6144x4096 $NAR
sw nar_int3 w:uint3b4,s:g128:bfloat16 256 6144x4096,4096x14336 $NAR
