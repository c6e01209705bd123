#!/usr/bin/env bash
# Session 8, call F (carry .whl): measurements for the next session only (no heuristic follows from this call).
# M=16 on 28672x4096 runs 112 blocks of 16 warps for 132 SMs (31 us vs upstream 25.7); upstream runs 2 blocks of 8
# warps per SM with 16 x 128 x 128 tiles.  Sweep 8-warp / 128-row shapes (2+ blocks per SM), then the stall profile
# of the current M=16 kernel there.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
sweep() {  # DESC MS CHOICES
  step 120 python3 -m vllm_humming.tuning.sweep --desc "$1" --ms "$2" --choices "$3" 2>&1 | grep -E "cublas|^      "
}
M16=bt16_wn8_tm2_wk2_ak2_s3,bt16_wn4_tm2_wk2_ak2_s4,bt16_wn4_tm2_wk2_ak2_s3,bt16_wn2_tm4_wk4_ak4_s3,bt16_wn2_tm4_wk2_ak2_s4,bt16_wn4_tm2_wk4_ak4_s3
sweep w:uint4b8,s:g128:bfloat16 16 $M16
sweep w:uint8b128,s:channel:bfloat16 16 $M16
sweep w:uint4b8,s:g128:bfloat16 1 bt8_wn4_tm2_wk1_ak1_s4,bt8_wn2_tm4_wk4_ak4_s3,bt8_wn2_tm4_wk2_ak2_s4
step 90 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
  --section WarpStateStats --section SpeedOfLight --section Occupancy --page raw \
  python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 16 bt16_wn8_tm2_wk2_ak2_s3 >"$OUT/ncu_m16.txt" 2>&1
grep -E "issue_stalled|gpu__time_duration.sum|sm__warps_active.avg.pct|issue_active.avg.per_cycle_active" "$OUT/ncu_m16.txt" \
  | awk '{print $1, $NF}' | sort -k2 -g -r | grep -v "_not_issued" | head -14
