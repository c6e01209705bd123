#!/usr/bin/env bash
# Session 46, call B (carry .whl).  Session 45's reading -- on the H200 each SM must stream ~1.44x the bytes per second
# it does on an H100, so kernels short of bytes in flight per SM lose there -- tested where the H100 could not show it:
# the one-token decodes with deeper register rings (_s6 / _s8) and with a shared-memory weight ring (_pfr), the
# 64-token candidates (the plan's TMA tiles vs the warp-specialized bulk kernel), and 32 tokens.  On an H100 the same
# with 40 SMs held, on the layers scaled to 92 SMs where the grid does not adapt (19968x4096, 4352x4096).
. scripts/h200_setup.sh
call_results b
W1=bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr32_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr96_x16_direct
L1=bt8_wn4_tm2_wk2_ak256_s4_x16_direct,bt8_wn4_tm2_wk2_ak256_s6_x16_direct,bt8_wn4_tm2_wk2_ak256_s8_x16_direct,bt8_wn4_tm2_wk2_ak256_s4_pfr32_x16_direct,bt8_wn4_tm2_wk2_ak256_s4_pfr48_x16_direct
B64=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s6_bulk_wgmma
C32=bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn8_tm1_wk1_ak2_s6_tma_bulk_wgmma,bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
export SWEEP_TIMEOUT=150
if grep -q H200 "$OUT/device.txt"; then
  sweep_case m1_wide $I4 1 28672x4096,57344x4096 $W1
  sweep_case m1_long $I4 1 4096x14336,8192x14336 $L1
  sweep_case m64_h200 $I4 64 $SH $B64
  sweep_case m32_h200 $I4 32 $SH $C32
  exit 0
fi
sweep_case m1_wide_r40 $I4 1 19968x4096,28672x4096 $W1 --reserve-sms 40
sweep_case m1_long_r40 $I4 1 4096x14336 $L1 --reserve-sms 40
sweep_case m32_r40 $I4 32 4352x4096,19968x4096,4096x14336 $C32 --reserve-sms 40
