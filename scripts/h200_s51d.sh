#!/usr/bin/env bash
# Session 51, call D.  On an H200: h200_s51b.sh's H200 branch (the bench of record on this tree, the one-token tiles'
# GPU test, session 48's one-token sweeps).  On any other card: the GPU suites' second part (every file but the
# pipelines suite) under 8 xdist workers with the CUDA cache released after each GPU test (tests/conftest.py) --
# call B's 16 failures were memory contention among the workers -- then the failures, if any, alone.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash scripts/h200_s51b.sh
fi
. scripts/h200_setup.sh
call_results d
gpu_suites 420 2; cp "$OUT"/gpu_tests*.log "$R/"; pack
