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
gpu_test splitk_end 120 tests/test_splitk_reducers_gpu.py -k splitk_end
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
# On an H200 only (never measured there): the wide 16-token bulk kernel's pipeline without its math, beside the bare
# bulk-copy skeleton of the same bytes -- on the H100 (session 49) 26.0 vs 22.0 µs with the math at 28.5, so the
# stream-K structure, not the math, bounded it there; the H200 runs it at 26.6 where its bandwidth would allow ~13.
if grep -q H200 "$OUT/device.txt"; then
  for d in none HUMMING_SKIP_MATH; do
    defs=$d; [ "$d" = none ] && defs=""
    HUMMING_DEBUG_DEFINES=$defs sweep_case "wide16_$d" $I4 16 28672x4096 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
  done
  step 60 python3 -m vllm_humming.tuning.stream_probe --sizes wide --cases bulk_s24k_x4_p2_w12_t1_h0,bulk_s16k_x8_p1_w8_t1_h0_b1,bulk_s16k_x8_p1_w8_t1_h800_b1,ldg_t256_u8_b2 >"$R/stream_probe.txt" 2>&1
  tail -12 "$R/stream_probe.txt" | cut -c1-120; pack
fi
