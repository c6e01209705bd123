#!/usr/bin/env bash
# Session 3, round 4 (device tool): M = 16 / 64 -- how far the split-K traffic cap holds the narrow layers back.
. scripts/h200_setup.sh
step 240 python3 scripts/exp_variants.py --ms 16,64 --choices heur,bt64_wn4_tm2_wk1_ak1_s6,bt64_wn8_tm1_wk2_ak2_s4 \
  --variants "HUMMING_DEBUG_SPLIT_RATIO=128;HUMMING_DEBUG_SPLIT_RATIO=32;HUMMING_DEBUG_SPLIT_RATIO=8" 2>&1 | tee "$OUT/exp_split.log"
