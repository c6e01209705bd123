#!/usr/bin/env bash
# Session 46, call A (carry .whl).  On an H200: the int4 bench of record on this tree (HUMMING_WIDE_DECODE_BULK off,
# upstream in the same run), the switch on for the 16-token cells, then the 16-token candidates the H100 could only
# rank under a reservation (session 45): the bulk TMA kernels, the direct decodes with and without a cluster, the
# mma.sync 16-token tile with deeper shared-memory weight rings (_pfr) and with x staged as fp16 (_x16).
# On an H100: the same 16-token candidates with 40 SMs held on the layers scaled to 92 SMs, and the 64-token ones.
. scripts/h200_setup.sh
call_results a
C16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr32_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct,bt16_wn14_tm1_wk2_ak256_s4_x16_direct,bt16_wn8_tm2_wk1_ak256_s4_x16_direct,bt16_wn7_tm2_wk2_ak256_s4_x16_direct
B64=bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s6_bulk_wgmma
export SWEEP_TIMEOUT=200
if grep -q H200 "$OUT/device.txt"; then
  int4_record 200; pack
  HUMMING_WIDE_DECODE_BULK=1 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 12,16 \
    --shapes 28672x4096 --no-upstream --no-eager --cold none --json $R/bench_wdb1.json > $R/bench_wdb1.log 2>&1
  echo "-- HUMMING_WIDE_DECODE_BULK=1"; grep "] ours" $R/bench_wdb1.log | cut -c1-90; pack
  sweep_case m16_h200 $I4 16 $SH $C16
  exit 0
fi
sweep_case m16_r40 $I4 16 4352x4096,19968x4096,4096x14336 $C16 --reserve-sms 40
sweep_case m64_r40 $I4 64 4096x14336,4096x11008,2048x14336 $B64 --reserve-sms 40
