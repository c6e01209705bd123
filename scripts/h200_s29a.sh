#!/usr/bin/env bash
# Session 29, call A: 4-bit float codes in their own bit layout (dequant.cuh FloatFamily, repack.py
# _pack_float4_words: 11 shifts / lop3 per word instead of 15 for e2m1 in bf16).
#  1. every GPU suite and the e2e fixture models on the new layout (correctness: every FP4 format, every kernel path);
#  2. MXFP4 / NVFP4 bench at M = 1 / 16 / 64 / 256 with upstream and cuBLAS (the new layout);
#  3. the same without peers on the previous kernels (exp/old_kernels = HEAD's headers; the repacked words are then
#     read with the old layout -- wrong values, same instructions: timing only);
#  4. the same with HUMMING_DEBUG_FLOAT_FOLD_TIMING (a timing-only macro of that commit, replaced by the real fold
#     in the next one: the operand dequant without its 2^kExpAdjust multiply: what
#     folding it into the group scales would save; timing only).
. scripts/h200_setup.sh
call_results a
gpu_suites 420; cp "$OUT/gpu_tests.log" "$R/"; e2e_fixtures; cp "$OUT"/e2e.* "$R/" 2>/dev/null; pack
B="python3 -m vllm_humming.bench --formats w4a16-mxfp4,w4a16-nvfp4 --ms 1,16,64,256 --cold none --no-eager"
step 200 $B --json "$R/bench_fp4_new.json" >"$R/bench_fp4_new.log" 2>&1
grep -A4 "^Summary" "$R/bench_fp4_new.log"; pack
HUMMING_KERNELS_DIR=$PWD/exp/old_kernels step 120 $B --no-upstream --json "$R/bench_fp4_old.json" >"$R/bench_fp4_old.log" 2>&1
grep -A4 "^Summary" "$R/bench_fp4_old.log"; pack
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_FLOAT_FOLD_TIMING step 120 $B --no-upstream --json "$R/bench_fp4_fold.json" \
  >"$R/bench_fp4_fold.log" 2>&1
grep -A4 "^Summary" "$R/bench_fp4_fold.log"; pack
