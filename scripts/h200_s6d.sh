#!/usr/bin/env bash
# Session 6, device call D (carry .whl): int3 against upstream at M <= 256 with the final heuristics (call C's int3 run
# hit its time limit before upstream's last shape), then how many K splits the decode kernels want (the split-K
# traffic cap HUMMING_DEBUG_SPLIT_RATIO: larger ratio = fewer splits), at M = 1 and 16.
. scripts/h200_setup.sh
step 170 python3 -m vllm_humming.bench --formats w3a16-int3-g128 --ms 1,16,64,256 --cold none --no-eager \
  --json "$OUT/bench_int3.json" >"$OUT/bench_int3.log" 2>&1
grep -E "^\[bench\] (ours|upstream)" "$OUT/bench_int3.log" | sed 's/, eager.*//' | cut -c9-90; grep -A3 "^Summary" "$OUT/bench_int3.log" | tail -1
step 120 python3 -m vllm_humming.tuning.sweep --ms 1 --choices bt8_wn4_tm2_wk1_ak1_s4 --split-ratios 128,4096,5461,8192,16384 \
  >"$OUT/sweep_splits_m1.log" 2>&1; grep -E "cublas|^      " "$OUT/sweep_splits_m1.log"
step 120 python3 -m vllm_humming.tuning.sweep --ms 16 --choices bt16_wn16_tm1_wk1_ak1_s4,bt16_wn8_tm1_wk2_ak2_s4 \
  --split-ratios 128,256,512,1024 >"$OUT/sweep_splits_m16.log" 2>&1; grep -E "cublas|^      " "$OUT/sweep_splits_m16.log"
