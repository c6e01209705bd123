#!/usr/bin/env bash
# Session 53's third call (not run in session 53: its device budget was spent on failed starts) -- the next
# session's first.  On an H200 the bench of record first (sessions 48-52's defaults have not been through it).
# Then the split-K end: call B (H100) found the narrow layers' split-K end at ~4 µs -- 6144x4096 M=16 9.6 -> 5.9
# and M=64 14.9 -> 10.3 µs, 4096x14336 15.3 -> 12.0 and 21.6 -> 17.6 with no cross-block sum at all.  Two experiment
# macros shorten its chain of round trips: HUMMING_SPLITK_INFLIGHT=16 (up to 16 splits' float4s in flight per thread:
# one L2 round trip instead of two for 11 / 16 splits) and HUMMING_SPLITK_ACQREL_TICKET (one acq_rel atomic instead
# of fence + atomic + fence).  Their GPU test (bit-identical to the default), then timing sweeps of the plans' own
# choices on the narrow layers.
. scripts/h200_setup.sh
call_results c
grep -q H200 "$OUT/device.txt" && int4_record 200
step 120 python3 -m pytest -q -n 4 -m gpu tests/test_splitk_reducers_gpu.py -k splitk_end >"$R/gpu_splitk_end.log" 2>&1
tail -2 "$R/gpu_splitk_end.log" | cut -c1-200; pack
export SWEEP_TIMEOUT=40
for d in none HUMMING_SPLITK_INFLIGHT=16 HUMMING_SPLITK_ACQREL_TICKET HUMMING_SPLITK_INFLIGHT=16,HUMMING_SPLITK_ACQREL_TICKET; do
  defs=$d; [ "$d" = none ] && defs=""
  echo "## $d"
  c16=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma; c64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
  # (with the defaults: the K splits of a tile as one 4 / 8-block cluster summing through distributed shared
  # memory -- no workspace, no tickets; last measured on these layers in sessions 11-13, before the shared reducers)
  [ "$d" = none ] && c16=$c16,bt16_wn8_tm2_wk1_ak256_s2_c4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c8_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s2_c8_direct_wgmma \
    && c64=$c64,bt64_wn8_tm1_wk1_ak2_s4_c4_wgmma,bt64_wn8_tm1_wk1_ak2_s4_c8_wgmma
  HUMMING_DEBUG_DEFINES=$defs sweep_case "m16_$d" $I4 16 6144x4096,4096x14336 $c16
  HUMMING_DEBUG_DEFINES=$defs sweep_case "m64_$d" $I4 64 6144x4096,4096x14336 $c64
done
