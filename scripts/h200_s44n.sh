#!/usr/bin/env bash
# Session 44, call N (any sm_90a card; carry .whl): call M showed 8 background NVRTC threads slowing each compile ~9x,
# so the background batch now compiles on one thread.  scripts/exp_background.py with a 4 s wait after preparing the
# layers (vLLM loading the rest of a model) with and without background compilation, then with it and no wait; fresh
# processes, empty caches, the background run first (it also pays the machine's first NVRTC use).
. scripts/h200_setup.sh
call_results n
for run in "1 4" "0 4" "1 0"; do
  set -- $run
  rm -rf /tmp/bgcache; HUMMING_CACHE_DIR=/tmp/bgcache HUMMING_JIT_BACKGROUND=$1 timeout 100 python3 scripts/exp_background.py \
    --load-s $2 2>&1 | tail -1 | tee -a $R/exp_background.txt
done
pack
