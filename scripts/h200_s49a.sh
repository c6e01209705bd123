#!/usr/bin/env bash
# Session 49, call A (any card; the bench of record only on an H200).  (1) The int4 bench of record on this tree
# (session 48's one-token tiles; the M=1 wide cell should move 17.5 -> ~16.6 us).  (2) The weight-stream skeletons
# (tuning.stream_probe: register loads vs a bulk-copy ring, no math) on the three layers.  (3) The GPU tests
# of the one-token tiles and of the probe.  (4) The real 16-token kernels' pipelines alone (HUMMING_SKIP_MATH).
. scripts/h200_setup.sh
call_results a
if grep -q H200 "$OUT/device.txt"; then int4_record 300; fi
step 150 python3 -m vllm_humming.tuning.stream_probe --json "$R/stream_probe.json" >"$R/stream_probe.txt" 2>&1
cat "$R/stream_probe.txt" | cut -c1-110; pack
if ! grep -q H200 "$OUT/device.txt"; then   # an H100: the same skeletons with 40 SMs held (an H200's per-SM load)
  step 150 python3 -m vllm_humming.tuning.stream_probe --reserve-sms 40 --json "$R/stream_probe_r40.json" \
    >"$R/stream_probe_r40.txt" 2>&1; cat "$R/stream_probe_r40.txt" | cut -c1-110; pack
fi
step 150 python3 -m pytest -q -m gpu tests/test_stream_probe.py tests/test_gemm_direct_gpu.py -k "one_token or stream" \
  >"$R/gpu_tests.log" 2>&1; tail -3 "$R/gpu_tests.log" | cut -c1-200; pack
export SWEEP_TIMEOUT=100
export HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH
sweep_case skip_wide $I4 1,16 28672x4096 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt16_wn14_tm1_wk2_ak256_s4_direct
sweep_case skip_long $I4 16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct
unset HUMMING_DEBUG_DEFINES
sweep_case full_wide $I4 1,16 28672x4096 bt16_wn12_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma,bt16_wn12_tm1_wk1_ak2_s8_tma_bulk_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt16_wn14_tm1_wk2_ak256_s4_direct
grep -q H200 "$OUT/device.txt" || exit 0
# session 48's 16-token candidates on the small and long layers (h200_s48b.sh, never run on an H200)
sweep_case m16_small $I4 12,16 6144x4096 bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt16_wn3_tm1_wk4_ak64_s4_pf72_direct,bt16_wn8_tm2_wk1_ak2_s6_tma_bulk_wgmma
sweep_case m16_long $I4 12,16 4096x14336 bt16_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn4_tm2_wk2_ak256_s4_direct,bt16_wn4_tm2_wk2_ak256_s4_pfr64_direct,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
ncu_case ncu_bulk16 $I4 28672 4096 16 bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma
ncu_case ncu_m64_small $I4 6144 4096 64 bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma
