#!/usr/bin/env bash
# Session 13, call A (carry .whl; ~6 minutes): where the M = 64 / 256 wgmma kernels lose to upstream (NOTES.md,
# session 12, next step 1) -- ncu with PC sampling per SASS instruction of the defaults at the bench shapes whose gap
# is largest (M=64 4096x14336: 27.4 vs 22.3 us; M=256 28672x4096: 110.8 vs 91.1; M=64 28672x4096 on the new 256-row
# tile) and upstream's M=64 kernel for its launch shape.  Then scripts/h200_next_b.sh: the GPU suites session 12 did
# not re-run.
. scripts/h200_setup.sh
call_results a
export HUMMING_PREFILL_M=1000000
I4=w:uint4b8,s:g128:bfloat16
ncu_case m64_w4096 $I4 4096 14336 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma
ncu_case m64_w28672_tm2 $I4 28672 4096 64 bt64_wn8_tm2_wk1_ak1_s4_wgmma
ncu_case m256_w28672_tm2 $I4 28672 4096 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma
step 100 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis -o /tmp/up_m64_w4096 -f \
  python3 scripts/profile_upstream.py w4a16-int4-g128 4096 14336 64 >$R/up.log 2>&1
ncu -i /tmp/up_m64_w4096.ncu-rep --page details >$R/up_m64_w4096_details.txt 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Grid Size|Block Size|Dynamic Shared|Issue Slots Busy" \
  $R/up_m64_w4096_details.txt | head -10; pack
