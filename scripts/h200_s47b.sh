#!/usr/bin/env bash
# Session 47, call B (an H200 only; carry .whl).  Only one H200 sweep of the 16-token kernels ever ran (session 41,
# 3-4 choices per shape), and on that card the ranking differed from the H100's (the 224-row mma.sync tile led the
# wide layer).  A broad one on the three shapes at 12 / 16 tokens: prefetching / clustered / bulk / 128-row
# wgmma decodes, and the mma.sync tiles with a shared-memory weight ring (`_pfr`: bytes in flight without
# registers -- session 45's reading of the H200's per-SM load), then 64 tokens on the small and wide layers.
. scripts/h200_setup.sh
call_results b
grep -q H200 "$OUT/device.txt" || { echo "not an H200: nothing to do"; exit 0; }
export SWEEP_TIMEOUT=150
sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c4_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
sweep_case m16_wide $I4 12,16 28672x4096 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr96_direct,bt16_wn16_tm2_wk1_ak256_s2_c2_direct_wgmma
sweep_case m16_long $I4 12,16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s4_pfr64_direct,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
sweep_case m64_small $I4 64 6144x4096 bt64_wn8_tm1_wk1_ak2_s4_sk_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
sweep_case m64_wide $I4 64 28672x4096 bt64_wn8_tm1_wk1_ak2_s4_sk_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_sk_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma
