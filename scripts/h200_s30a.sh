#!/usr/bin/env bash
# Session 30, call A (measurements only): (1) the wide layer at 400-512 tokens as whole waves of 128-row x 256-token
# tiles plus a split-K tail (two layers back to back: 25344 + 3328 rows) vs the one grid of 3.39 waves; (2) forced
# tiles / splits for 6144x4096 and 4096x14336 at 256 / 512 tokens and NVFP4 6144x4096 at 64 (cells behind upstream);
# (3) the int4 bench at 256 / 512 tokens with upstream in the same run.
. scripts/h200_setup.sh
call_results a
step 170 python3 scripts/exp_dp_tail.py --n 28672 --k 4096 --ms 400,512 --head-rows 25344 --tail-splits 1,2,3 \
  >"$R/dp_tail_wide.txt" 2>&1; cat "$R/dp_tail_wide.txt" | cut -c1-400; pack
T256=bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma
SWEEP_TIMEOUT=150 sweep_case m512_narrow "$I4" 512 6144x4096 "$T256" --splits 1,2,3,4
SWEEP_TIMEOUT=150 sweep_case m256_narrow "$I4" 256 6144x4096,4096x14336 "$T256" --splits 1,2,3
T64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt32_wn8_tm1_wk1_ak2_s4_tma_wgmma
SWEEP_TIMEOUT=120 sweep_case m64_nvfp4 nvfp4-w4a16 64 6144x4096 "$T64" --splits 2,3,4,6
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 256,512 --cold none --no-eager \
  --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4.log"; pack
