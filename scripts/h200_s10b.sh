#!/usr/bin/env bash
# Session 10, call B: the bulk (warp-specialized) wgmma kernel after the producer's x copy plan was made per-thread
# constant: its GPU tests, sweeps against the cp.async wgmma defaults at M = 64 / 256 / 1024, and ncu of the M=256 case.
. scripts/h200_setup.sh
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bulk_wgmma or step_groups" >$R/tests_bulk_wgmma.log 2>&1
grep -E "^FAILED|passed|failed" $R/tests_bulk_wgmma.log | tail -5; pack
export HUMMING_PREFILL_M=1000000
sw() {  # NAME MS CHOICES
  step 150 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms "$2" --choices "$3" --top 10 >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-120; pack
}
sw m256 256 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s8_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_bulk_wgmma
sw m64 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s8_bulk_wgmma,bt64_wn4_tm1_wk1_ak1_s8_bulk_wgmma
step 100 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --section LaunchStats \
  --section ComputeWorkloadAnalysis -o $R/bulk_m256 -f \
  python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma >$R/bulk_m256.log 2>&1
ncu -i $R/bulk_m256.ncu-rep --page details >$R/bulk_m256_details.txt 2>&1
ncu -i $R/bulk_m256.ncu-rep --page source --csv --print-source sass >$R/bulk_m256_sass.csv 2>&1
grep -E "Duration|SM Active|Tensor is|Executed Ipc A" $R/bulk_m256_details.txt | sed 's/  */ /g'
python3 scripts/ncu_top.py $R/bulk_m256_sass.csv 12 | cut -c1-150; pack
sw m1024 1024 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s8_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_bulk_wgmma
