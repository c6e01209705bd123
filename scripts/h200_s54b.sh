#!/usr/bin/env bash
# Session 54's second call: the polled split-K end (gemm_wna16.cuh splitk_poll_end, plan.FLAG_SPLITK_POLL, on by
# default for one-wave wgmma split-K grids of 16-128-token tiles).  Its GPU test first (bit-identical to the ticket
# path, the workspace empty after every call), then the bench's own A/B at 16 / 64 tokens (HUMMING_SPLITK_POLL=0 / 1,
# all three layers), the plan choices' sweeps, and on an H200 the bench of record with the new default.
. scripts/h200_setup.sh
call_results b
gpu_test poll 240 tests/test_splitk_poll_gpu.py
for p in 0 1; do
  HUMMING_SPLITK_POLL=$p step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16,32,64,128 \
    --no-upstream --no-eager --cold none --json "$R/ab_poll$p.json" >"$R/ab_poll$p.log" 2>&1
  echo "-- HUMMING_SPLITK_POLL=$p"; grep "] ours" "$R/ab_poll$p.log" | sed 's/.*int4-g128 //' | cut -c1-48; pack
done
export SWEEP_TIMEOUT=60
for p in 0 1; do
  HUMMING_SPLITK_POLL=$p sweep_case "m16_poll$p" $I4 16 6144x4096,4096x14336 \
    bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s2_direct_wgmma
  HUMMING_SPLITK_POLL=$p sweep_case "m64_poll$p" $I4 64 6144x4096,4096x14336 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
done
# sparser polling (L2 traffic of the waiting reducers vs the chain after the last arrival)
for d in HUMMING_SPLITK_POLL_SLEEP=400; do
  HUMMING_DEBUG_DEFINES=$d sweep_case "m16_$d" $I4 16 6144x4096,4096x14336 bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
  HUMMING_DEBUG_DEFINES=$d sweep_case "m64_$d" $I4 64 6144x4096,4096x14336 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
done
grep -q H200 "$OUT/device.txt" && int4_record 200
gpu_test reducers 150 tests/test_splitk_reducers_gpu.py -k "not experiments"
