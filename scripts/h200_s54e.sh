#!/usr/bin/env bash
# Session 54's last call, on the final tree (the polled 128-row tile at 9-16 tokens on narrow int4 layers with
# K <= 4096 by default): the int4 bench with upstream in the same run (the bench of record where the card is an
# H200), then the GPU suites other than the pipelines file (split-K reducers, direct, ops, MoE, ...).
. scripts/h200_setup.sh
call_results e
int4_record 220
gpu_suites 300 2
cp "$OUT/gpu_tests.log" "$R/" 2>/dev/null; pack
