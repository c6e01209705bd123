#!/usr/bin/env bash
# Session 49, call D (the last seconds of device time): the 224-row whole-tile bulk grid vs the plan, wide layer, M=16.
. scripts/h200_setup.sh
call_results d
export SWEEP_TIMEOUT=60
HUMMING_DEBUG_SMS=128 sweep_case ws128_wide $I4 16 28672x4096 bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak1_s12_bulk
sweep_case ws132_wide $I4 16 28672x4096 bt16_wn14_tm1_wk1_ak2_s8_bulk
