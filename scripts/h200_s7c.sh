#!/usr/bin/env bash
# Session 7, call C (carry .whl and .shared_fixtures): the kernel signature gained `flags` (runtime early PDL release),
# so every GPU suite and the e2e fixtures again; then the PDL rule against forced on / off and 32 splits, the 256-row
# M=256 choice for the other formats, and ncu stall reasons of the M=256 and M=1 kernels on 28672x4096.
. scripts/h200_setup.sh
gpu_suites 260
e2e_fixtures
step 100 python3 scripts/exp_variants.py --ms 1,16 \
  --variants ";HUMMING_PDL_EARLY_RELEASE=0;HUMMING_PDL_EARLY_RELEASE=1;HUMMING_DEBUG_MAX_SPLITS=32;HUMMING_DEBUG_MAX_SPLITS=32,HUMMING_PDL_EARLY_RELEASE=0" \
  >"$OUT/exp_pdl.log" 2>&1; tail -6 "$OUT/exp_pdl.log"
export HUMMING_PREFILL_M=1000000
for d in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  step 60 python3 -m vllm_humming.tuning.sweep --desc $d --shapes 28672x4096 --ms 256 \
    --choices bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s3_wgmma 2>&1 | grep -E "cublas|^      "
done
for c in "256 bt128_wn8_tm2_wk1_ak1_s4_wgmma" "1 bt8_wn4_tm2_wk1_ak1_s4"; do
  set -- $c
  step 90 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section WarpStateStats --section SpeedOfLight --page raw \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 $1 $2 >"$OUT/ncu_stalls_m$1.txt" 2>&1
  echo "-- stalls M=$1 $2"; grep -E "issue_stalled|gpu__time_duration.sum" "$OUT/ncu_stalls_m$1.txt" \
    | awk '{print $1, $NF}' | sort -k2 -g -r | grep -v "_not_issued" | head -14
done
