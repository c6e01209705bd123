#!/usr/bin/env bash
# Session 44, call A (any sm_90a card; carry .whl): the existing warp-specialized kernel (bulk pipeline: producer
# warpgroup with bulk copies into an mbarrier ring, math warpgroups dequantizing from shared memory into wgmma's
# register operand, persistent stream-K) had never been timed at 16 tokens.  Sweep it against the plan's choice at
# M = 16 on the three bench shapes: ring depth, rows per block, math warpgroups, x through TMA.
. scripts/h200_setup.sh
call_results a
C16=bt16_wn8_tm1_wk1_ak1_s8_bulk_wgmma,bt16_wn8_tm1_wk1_ak1_s12_bulk_wgmma,bt16_wn8_tm1_wk1_ak1_s16_bulk_wgmma
C16=$C16,bt16_wn8_tm2_wk1_ak1_s8_bulk_wgmma,bt16_wn8_tm2_wk1_ak1_s12_bulk_wgmma,bt16_wn4_tm2_wk1_ak1_s12_bulk_wgmma
C16=$C16,bt16_wn12_tm1_wk1_ak1_s12_bulk_wgmma,bt16_wn4_tm1_wk1_ak1_s16_bulk_wgmma
C16=$C16,bt16_wn8_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
SWEEP_TIMEOUT=240 sweep_case bulk16 $I4 16 $SH $C16
step 60 python3 scripts/check_choice.py $I4 bt16_wn8_tm1_wk1_ak1_s12_bulk_wgmma 6144x4096,4096x14336 16 2>&1 | tail -3
