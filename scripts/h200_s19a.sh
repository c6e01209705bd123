#!/usr/bin/env bash
# Session 19, call A (carry .whl; ~5 minutes): is the 256-token tile bound by L2 -> SM traffic at M >= 256?  Per
# 128-row x 256-token tile it moves 2 MB of x and 256 KB of W: 896 tiles = 2.1 GB on 28672x4096 at M=1024 in ~372 us
# = 5.7 TB/s.  The L2 re-read ceiling (scripts/l2_probe.py), ncu's L2 / DRAM / tensor-pipe throughput of ours and of
# upstream (256 x 176 tiles, x multicast in 2-CTA clusters), and NVRTC alone on the M=1 kernel (cold-compile question).
. scripts/h200_setup.sh
call_results a
mem_ncu() {  # NAME NCU_FILTER CMD...: light ncu (speed of light, memory, compute pipes) of one launch
  local name=$1 filt=$2; shift 2
  step 120 ncu --clock-control none $filt --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section LaunchStats -o /tmp/$name -f "$@" >$R/$name.log 2>&1
  ncu -i /tmp/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page raw >$R/${name}_raw.txt 2>&1
  echo "-- $name"
  grep -E "Duration|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\)|Grid Size|Registers|Mem Busy|Max Bandwidth|Mem Pipes" \
    $R/${name}_details.txt | head -14
  grep -E "lts__t_bytes.sum.per_second|lts__t_sectors.sum |sm__pipe_tensor_op_gmma_cycles_active.avg.pct|sm__inst_executed_pipe_tensor|lts__throughput.avg.pct" $R/${name}_raw.txt | head -8
  pack
}
OURS="--kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1"
mem_ncu ours_m1024_w28672 "$OURS" python3 scripts/profile_case.py $I4 28672 4096 1024
mem_ncu up_m1024_w28672 "--profile-from-start off" python3 scripts/profile_upstream.py w4a16-int4-g128 28672 4096 1024
mem_ncu ours_m256_w28672 "$OURS" python3 scripts/profile_case.py $I4 28672 4096 256
mem_ncu up_m256_w28672 "--profile-from-start off" python3 scripts/profile_upstream.py w4a16-int4-g128 28672 4096 256
mem_ncu ours_m64_w28672 "$OURS" python3 scripts/profile_case.py $I4 28672 4096 64
pack
