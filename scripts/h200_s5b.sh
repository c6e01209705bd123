#!/usr/bin/env bash
# Session 5, device call B: why the wgmma kernels run the tensor pipe at ~50 % at M = 64 / 256.
# (1) stall reasons (ncu) of the M=256 and M=64 picks on 28672x4096; (2) the same kernels with parts removed
# (experiment macros: no dequant, no MMA, no math at all) and with a one-block register budget.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
prof() {  # name N K M choice
  step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SchedulerStats \
    --metrics "regex:^smsp__warp_issue_stalled_.*_per_warp_active\.pct$,regex:^sm__pipe_tensor_op_gmma_cycles_active.*pct_of_peak_sustained_active$,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,lts__t_bytes.sum.per_second" \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 $2 $3 $4 $5 >"$OUT/ncu_$1.txt" 2>&1
  grep -E "Duration|Registers|Achieved Occupancy|Tensor|stalled|gmma|wavefronts|lts__t_bytes|Issued Ipc|Eligible Warps|L2 Cache Throughput|Shared Memory Configuration|Mem Busy|ERR|rror" "$OUT/ncu_$1.txt" | grep -v "^ *$" | awk '!/stalled/ || $NF+0 >= 1.0' | head -50
}
prof m256 28672 4096 256 bt128_wn8_tm1_wk1_ak1_s5_wgmma
prof m64 28672 4096 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma
V="HUMMING_PDL=1;HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_SKIP_DEQUANT;HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_SKIP_MMA;HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH;HUMMING_DEBUG_MIN_BLOCKS=1"
step 150 python3 scripts/exp_variants.py --shapes 28672x4096,6144x4096 --ms 64,256 \
  --choices bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma --variants "$V" >"$OUT/variants.log" 2>&1
grep -E "M=" "$OUT/variants.log" | cut -c1-260
