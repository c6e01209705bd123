#!/usr/bin/env bash
# Session 54's last call, on the final tree (the polled 128-row tile at 9-16 tokens on narrow int4 layers with
# K <= 4096 by default): the int4 bench with upstream in the same run (the bench of record where the card is an
# H200), then the split-K GPU tests (polled end, reducers) under the new defaults.
. scripts/h200_setup.sh
call_results e
int4_record 200
gpu_test splitk 120 tests/test_splitk_poll_gpu.py tests/test_splitk_reducers_gpu.py -k "not experiments"
