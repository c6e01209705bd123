#!/usr/bin/env bash
# Session 10, call A: where the M >= 64 wgmma kernels lose -- ncu with PC-sampling per SASS instruction (SourceCounters)
# for the current M=256 / M=64 defaults, the warp-specialized bulk kernel and upstream; then short sweeps of wider
# token tiles at M=256.  Everything lands in $OUT/a_all.tgz as it goes.
. scripts/h200_setup.sh
mkdir -p /tmp/a && R=/tmp/a
pack() { tar czf "$OUT/a_all.tgz" -C /tmp a; }
export HUMMING_PREFILL_M=1000000
prof() {  # NAME N K M CHOICE
  step 100 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --section LaunchStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -o $R/$1 -f \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 $2 $3 $4 $5 >$R/$1.log 2>&1
  ncu -i $R/$1.ncu-rep --page details >$R/$1_details.txt 2>&1
  ncu -i $R/$1.ncu-rep --page raw >$R/$1_raw.txt 2>&1
  ncu -i $R/$1.ncu-rep --page source --csv --print-source sass >$R/$1_sass.csv 2>$R/$1_sass.err
  echo "-- $1: $5 $2x$3 M=$4"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Block Limit|Grid Size|Issue Slots Busy|Eligible Warps" $R/$1_details.txt | head -14
  grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio" $R/$1_raw.txt | awk '{print $1, $NF}' \
    | sed 's/smsp__average_warps_issue_stalled_//;s/_per_issue_active.ratio//' | sort -k2 -g -r | head -8 | tr '\n' ';'; echo
  python3 scripts/ncu_top.py $R/$1_sass.csv 28 2>&1 | head -34 | cut -c1-150
  rm -f $R/$1.ncu-rep.bak; pack
}
prof m256_w28672_tm2 28672 4096 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma
prof m256_w6144_tm1 6144 4096 256 bt128_wn8_tm1_wk1_ak1_s5_wgmma
prof m64_w28672 28672 4096 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma
prof m256_w28672_bulk 28672 4096 256 bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma
step 100 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis -o $R/up_m256_w6144 -f \
  python3 scripts/profile_upstream.py w4a16-int4-g128 6144 4096 256 >$R/up.log 2>&1
ncu -i $R/up_m256_w6144.ncu-rep --page details >$R/up_m256_w6144_details.txt 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Grid Size|Block Size|Shared Memory Config|Dynamic Shared|Issue Slots Busy|Eligible" $R/up_m256_w6144_details.txt | head -14; pack
sw() {  # NAME MS SHAPES CHOICES
  step 80 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms "$2" --shapes "$3" --choices "$4" --top 8 >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-120; pack
}
sw m256 256 6144x4096,4096x14336,28672x4096 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt128_wn4_tm2_wk1_ak1_s4_wgmma
