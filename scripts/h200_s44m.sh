#!/usr/bin/env bash
# Session 44, call M (any sm_90a card; carry .whl): what background compilation saves a cold start --
# scripts/exp_background.py (Llama-3-8B's four linear shapes, int4 g128, every layer called at 1-512 tokens as
# CUDA-graph capture does) in fresh processes with empty caches, without and with it; the first run also pays the
# machine's first NVRTC use: the background run goes first (the conservative order).
. scripts/h200_setup.sh
call_results m
for v in 1 0; do
  rm -rf /tmp/bgcache; HUMMING_CACHE_DIR=/tmp/bgcache HUMMING_JIT_BACKGROUND=$v timeout 100 python3 scripts/exp_background.py \
    2>&1 | tail -1 | tee -a $R/exp_background.txt
done
pack
