#!/usr/bin/env bash
# Session 26, call D: every GPU suite and the e2e fixture models on the tree with the 8-bit rules (heuristics.
# _eight_bit_defaults, default_prefill_m 513 for 8-bit codes) -- the command that ran:
bash scripts/h200_final.sh tests; mkdir -p $OUT/d; cp $OUT/gpu_tests.log $OUT/e2e.log $OUT/device.txt $OUT/d/ 2>/dev/null; true
