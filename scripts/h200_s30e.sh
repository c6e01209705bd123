#!/usr/bin/env bash
# Session 30, call E (measurement only): the wide layer at 256 tokens on the 128-row x 128-token tile (448 tiles on
# 132 SMs, 3.39 waves) as whole waves + a split tail, emulated with two layers, vs that tile's one grid and vs the
# default plan (the 128-row x 256-token tile, 224 tiles, 1.7 waves).
. scripts/h200_setup.sh
call_results e
step 150 python3 scripts/exp_dp_tail.py --n 28672 --k 4096 --ms 200,256 --head-rows 25344 --tail-splits 2,3 \
  --choice bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma >"$R/dp_tail_bt128.txt" 2>&1; cut -c1-400 "$R/dp_tail_bt128.txt"; pack
step 100 python3 scripts/exp_dp_tail.py --n 28672 --k 4096 --ms 200,256 --head-rows 25344 --tail-splits 2 \
  >"$R/dp_tail_default.txt" 2>&1; cut -c1-400 "$R/dp_tail_default.txt"; pack
