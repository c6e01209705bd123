#!/usr/bin/env bash
# Session 4, device call 1: wgmma kernels -- correctness, then wgmma vs mma.sync choices at M = 16 / 64 / 256 / 1024
# (the kernel at every M: HUMMING_PREFILL_M high), plus the GPU suite owed since session 3.
. scripts/h200_setup.sh
step 240 python3 -m pytest -q -x -m gpu tests/test_gemm_pipelines_gpu.py -k "wgmma" >"$OUT/wgmma_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/wgmma_tests.log" | tail -8
export HUMMING_PREFILL_M=1000000
step 150 python3 -m vllm_humming.tuning.sweep --ms 16,64 --json "$OUT/sweep_wg_small.json" --choices \
bt16_wn8_tm1_wk2_ak2_s4,bt16_wn4_tm1_wk1_ak1_s4_wgmma,bt16_wn4_tm2_wk1_ak1_s4_wgmma,bt16_wn8_tm1_wk1_ak1_s4_wgmma,bt16_wn4_tm2_wk1_ak1_s6_wgmma,\
bt64_wn8_tm1_wk2_ak2_s4,bt64_wn4_tm1_wk1_ak1_s4_wgmma,bt64_wn4_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm1_wk1_ak1_s4_wgmma,bt64_wn4_tm2_wk1_ak1_s6_wgmma,bt32_wn4_tm2_wk1_ak1_s4_wgmma \
  >"$OUT/sweep_wg_small.log" 2>&1; grep -v "^ " "$OUT/sweep_wg_small.log" | tail -12; grep -A5 "M=64" "$OUT/sweep_wg_small.log" | head -24
step 200 python3 -m vllm_humming.tuning.sweep --ms 256,1024 --json "$OUT/sweep_wg_large.json" --choices \
bt64_wn4_tm2_wk1_ak1_s4,bt128_wn4_tm1_wk1_ak1_s4_wgmma,bt128_wn4_tm2_wk1_ak1_s3_wgmma,bt256_wn4_tm1_wk1_ak1_s3_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma,bt128_wn8_tm1_wk1_ak1_s4_wgmma,bt64_wn4_tm2_wk1_ak1_s4_wgmma \
  >"$OUT/sweep_wg_large.log" 2>&1; tail -30 "$OUT/sweep_wg_large.log"
unset HUMMING_PREFILL_M
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 256,1024 --cold none --no-eager >"$OUT/bench_large_prefill.log" 2>&1
grep -A4 "^Summary" "$OUT/bench_large_prefill.log"; grep -E "^\s*(6144|28672|4096)x" "$OUT/bench_large_prefill.log" | head -12
