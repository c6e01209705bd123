#!/usr/bin/env bash
# Session 49, call C (the last ~150 s of device time, any card): the whole-tile bulk grids of h200_s49b.sh on the wide
# layer only, then (an H200) the bench of record.
. scripts/h200_setup.sh
call_results c
export SWEEP_TIMEOUT=90
WS=bt16_wn14_tm1_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak1_s12_bulk,bt16_wn7_tm2_wk1_ak2_s8_bulk,bt16_wn14_tm1_wk1_ak4_s4_bulk
HUMMING_DEBUG_SMS=128 sweep_case ws128_wide $I4 16 28672x4096 $WS
sweep_case ws132_wide $I4 16 28672x4096 bt16_wn14_tm1_wk1_ak2_s8_bulk
HUMMING_DEBUG_SMS=128 step 40 python3 scripts/check_choice.py $I4 bt16_wn14_tm1_wk1_ak2_s8_bulk 28672x4096 9,16 > $R/check_ws.log 2>&1
grep -c "^OK" $R/check_ws.log; grep "^BAD" $R/check_ws.log | head -3; pack
HUMMING_DEBUG_SMS=112 sweep_case ws112_wide $I4 16 28672x4096 bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
if grep -q H200 "$OUT/device.txt"; then int4_record 200; fi
