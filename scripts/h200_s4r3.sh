#!/usr/bin/env bash
# Session 4, device call 3: where the wgmma kernels spend their time (ncu sections) at M = 64 and M = 256.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
prof() {  # name N K M choice
  step 150 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis \
    --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 $2 $3 $4 $5 >"$OUT/ncu_$1.txt" 2>&1
  grep -E "Duration|Throughput|Pipe|Registers|Achieved Occupancy|Block Limit|Stall|Warp Cycles|Issued Ipc|Grid Size|Shared Memory Configuration|L2 Hit|Mem Busy|Max Bandwidth|No Eligible|Eligible Warps" "$OUT/ncu_$1.txt" | head -60
}
prof m256_28672 28672 4096 256 bt128_wn8_tm1_wk1_ak1_s4_wgmma
prof m64_6144 6144 4096 64 bt64_wn8_tm1_wk1_ak1_s4_wgmma
