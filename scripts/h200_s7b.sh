#!/usr/bin/env bash
# Session 7, call B: one wgmma group per k16 step for 128-accumulator tiles (256 rows x 128 tokens) -- tests, the
# M = 256 / 1024 sweep against the current pick, ncu of the warp-specialized 256-row kernel; PDL release variants.
. scripts/h200_setup.sh
step 300 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "wgmma" -x 2>&1 | tail -4
export HUMMING_PREFILL_M=1000000
C=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s8_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma
step 330 python3 -m vllm_humming.tuning.sweep --ms 256,1024 --choices $C --json "$OUT/sweep_m256.json" >"$OUT/sweep_m256.log" 2>&1
grep -v "^\[" "$OUT/sweep_m256.log" | tail -40
SEC="--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 $SEC \
  python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma >"$OUT/ncu_bulk_tm2_m256.txt" 2>&1
grep -E "Duration|Registers Per|Dynamic Shared|Grid Size|Achieved Occ|Throughput|Issue Slots|Eligible Warps|Warp Cycles Per Issued|highest-utilized|ERR" "$OUT/ncu_bulk_tm2_m256.txt" | head -24
unset HUMMING_PREFILL_M
step 120 python3 scripts/exp_variants.py --ms 1,16 --variants ";HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_PDL_EARLY_RELEASE;HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_PDL_RELEASE_AFTER_LOADS" \
  >"$OUT/exp_pdl.log" 2>&1; tail -8 "$OUT/exp_pdl.log"
