#!/usr/bin/env bash
# Session 54's third call.  On an H200 the bench of record first (sessions 48-54's defaults have not been through it;
# the polled split-K end stays off).  Then what the narrow layers' split-K end costs, if not its fence and ticket
# (s54/b): the same tile with fewer / more K splits (fp32 partial bytes scale with the splits: 11 x 16 x 6144 x 4 B
# = 4.3 MB at M=16 against 12.6 MB of weights), and the 128-row 16-token tile (5 splits) that led s54/b's sweep with
# the polled end (9.0 vs 9.9 us), both ends, twice.
. scripts/h200_setup.sh
call_results c
grep -q H200 "$OUT/device.txt" && int4_record 200
export SWEEP_TIMEOUT=90
c16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma
sweep_case m16_splits $I4 16 6144x4096,4096x14336 $c16 --splits 3,5,8,11,16
sweep_case m64_splits $I4 64 6144x4096,4096x14336 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma --splits 2,3,5,8
for rep in 1 2; do
  for p in 0 1; do
    HUMMING_SPLITK_POLL=$p sweep_case "m16_poll${p}_$rep" $I4 16 6144x4096,4096x14336 $c16
  done
done
