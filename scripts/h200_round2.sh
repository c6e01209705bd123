#!/usr/bin/env bash
# Round 2: each mainloop with and without its math (scripts/exp_variants.py; scripts/exp_pipeline.py when it ran) and ncu profiles at M = 1.
. scripts/h200_setup.sh
export HUMMING_LAUNCH_PATH=bindings
timeout 200 python3 scripts/exp_variants.py --shapes 28672x4096,6144x4096 --ms 1 \
  --choices bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak2_s8_bulk,bt8_wn8_tm2_wk1_ak2_s5_bulk \
  --variants ";HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH;HUMMING_DEBUG_DEFINES=HUMMING_NO_L2_HINT" 2>&1 | tee $OUT/exp.log
timeout 80 python3 scripts/exp_variants.py --shapes 28672x4096 --ms 64 --choices bt64_wn8_tm1_wk2_ak2_s4,bt64_wn8_tm1_wk1_ak2_s4_bulk --variants ";HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH" 2>&1 | tee -a $OUT/exp.log
for c in bt8_wn4_tm2_wk1_ak2_s8_bulk bt8_wn4_tm2_wk1_ak1_s3; do
timeout 90 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
  python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 1 $c > $OUT/ncu_$c.txt 2>&1
grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Waves|Block Limit|Stall|Issued Warp|Eligible|Active Warps|No Eligible|Memory Throughput|L2 Hit|smsp__pcsamp" $OUT/ncu_$c.txt | head -40
done
