#!/usr/bin/env bash
# Session 46, call C (carry .whl).  Calls A / B (40 SMs held) found three leads: the one-token wide decode with a 64 KB
# shared-memory weight ring (_pfr64: 19968x4096 16.4 vs the plan's 17.5 us), the bulk TMA kernel at 32 tokens
# (19968x4096 28.5 vs 41.3, 4096x14336 23.7 vs 30.2), and the 224-row mma.sync 16-token tile (24.9, = the bulk kernel).
# The same candidates on the real shapes, with nothing held (H100) -- or on the H200 itself.
. scripts/h200_setup.sh
call_results c
W1=bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr32_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr96_x16_direct
C32=bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
C16=bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr32_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
export SWEEP_TIMEOUT=150
sweep_case m1_wide $I4 1 28672x4096,14336x4096 $W1
sweep_case m32 $I4 24,32 $SH $C32
sweep_case m16_wide $I4 16 28672x4096 $C16
