#!/usr/bin/env bash
# Session 7, call A: where the M=256 / M=64 / decode time goes, ours against upstream, from ncu (standard sections:
# launch, occupancy, SOL, compute / memory workload, warp states), plus the early-PDL-release experiment.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
SEC="--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
mkdir -p "$OUT/ncu"
KEYS="Duration|Registers Per|Shared Memory Config|Dynamic Shared|Static Shared|Block Size|Grid Size|Waves Per SM|Achieved Occupancy|Theoretical Occ|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Th|Executed Ipc A|Issue Slots Busy|Eligible Warps|No Eligible|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|L2 Cache Throughput|L1/TEX Cache Throughput|SM Busy|Stall"
prof_ours() {  # N K M CHOICE
  step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 $SEC \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 $1 $2 $3 $4 >"$OUT/ncu/ours_$1x$2_m$3.txt" 2>&1
  echo "-- ours $1x$2 M=$3 $4"; grep -E "$KEYS" "$OUT/ncu/ours_$1x$2_m$3.txt" | grep -v "^==PROF" | head -40
}
prof_up() {  # N K M
  step 120 ncu --clock-control none --profile-from-start off $SEC \
    python3 scripts/profile_upstream.py w4a16-int4-g128 $1 $2 $3 >"$OUT/ncu/up_$1x$2_m$3.txt" 2>&1
  echo "-- upstream $1x$2 M=$3"; grep -E "^  [a-zA-Z_]|$KEYS" "$OUT/ncu/up_$1x$2_m$3.txt" | grep -v "^==PROF" | head -60
}
prof_ours 28672 4096 256 bt128_wn8_tm1_wk1_ak1_s5_wgmma
prof_up 28672 4096 256
prof_ours 28672 4096 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma
prof_up 28672 4096 64
prof_ours 28672 4096 1 bt8_wn4_tm2_wk1_ak1_s4
prof_up 28672 4096 1
prof_ours 28672 4096 16 bt16_wn8_tm2_wk2_ak2_s3
prof_up 28672 4096 16
(cd "$OUT" && tar czf ncu.tgz ncu && rm -rf ncu)
unset HUMMING_PREFILL_M
# Early PDL release (experiment macro, default off): M = 1 / 16 / 64 / 256 on the three default shapes.
step 150 python3 scripts/exp_variants.py --ms 1,16,64,256 --variants ";HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_PDL_EARLY_RELEASE" \
  >"$OUT/exp_pdl_early.log" 2>&1; tail -30 "$OUT/exp_pdl_early.log"
