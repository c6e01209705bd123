#!/usr/bin/env bash
# Session 45, call C (carry .whl).  Call B: with 40 SMs held (92 left: each SM under an H200's per-SM HBM load) the
# bulk TMA kernel led the wide layer's 16-token candidates (33.5 us vs the direct decode's 37.6, the clustered default
# 49.2; on all 132 SMs it ties the default, 27.5 vs 27.0).  Its variants on wide layers at 12 / 16 tokens, 40 and 0
# SMs held -- 19968x4096 is the wide layer scaled to 92 SMs (78 x 2 blocks of 256 rows on 184 slots: the H200's 0.85
# wave of 28672x4096; 28672 rows on 92 SMs make 1.22 waves of the direct decode).  On an H200: the int4 bench of record first, then the same sweeps without a reservation.
. scripts/h200_setup.sh
call_results c
B=bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak1_s12_tma_bulk_wgmma,bt16_wn8_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn4_tm2_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
WIDE=19968x4096,28672x4096
export SWEEP_TIMEOUT=200
if grep -q H200 "$OUT/device.txt"; then
  int4_record 200
  sweep_case bulk_h200 $I4 12,16 $SH,16384x4096,57344x8192 $B
  exit 0
fi
sweep_case bulk_r40 $I4 16 $WIDE $B --reserve-sms 40
sweep_case bulk_r0 $I4 16 $WIDE $B
