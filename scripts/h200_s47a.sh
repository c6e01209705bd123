#!/usr/bin/env bash
# Session 47, call A (carry .whl).  On an H200: the int4 bench of record on this tree (session 46's bulk decode rule
# does not change the issue's cells; `vllm-humming plan`), then the bulk rule's own A/B at 12 / 16 / 24 / 32 tokens
# (HUMMING_DECODE_BULK=1 / 0), the 9-16-token threshold (HUMMING_WIDE_DECODE_BULK=1 puts the bulk tile on every
# wide int4 layer; the reservation said 28672x4096 M=16 24.8 vs 27.4 under an H200's per-SM load), and the one-token
# leads (`_pfr64_x16` on wide layers, the x16 tile on 14336x4096).  On an H100: the GPU tests of session 46's
# untested mends (MoE keeps the direct decode; the switch folded into decode_bulk_choice) -- H100 timings cannot
# answer the H200 questions above.
. scripts/h200_setup.sh
call_results a
BS=6144x4096,28672x4096,4096x14336,37888x3584
if grep -q H200 "$OUT/device.txt"; then
  int4_record 200
  step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 12,16,24,32 --shapes $BS --cold none --no-eager \
    --json $R/bench_bulk1.json > $R/bench_bulk1.log 2>&1
  grep -A9 "^== w4a16" $R/bench_bulk1.log | tail -8; pack
  HUMMING_DECODE_BULK=0 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 12,16,24,32 --shapes $BS \
    --cold none --no-eager --no-upstream --json $R/bench_bulk0.json > $R/bench_bulk0.log 2>&1
  grep -A9 "^== w4a16" $R/bench_bulk0.log | tail -8; pack
  WS=28672x4096,20480x5120,16384x4096  # N >= WIDE_N (16384): the layers the switch moves
  step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,12,16 --shapes $WS --cold none --no-eager \
    --no-upstream --json $R/bench_wide0.json > $R/bench_wide0.log 2>&1
  grep -A7 "^== w4a16" $R/bench_wide0.log | tail -5
  HUMMING_WIDE_DECODE_BULK=1 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,12,16 --shapes $WS \
    --cold none --no-eager --no-upstream --json $R/bench_wide1.json > $R/bench_wide1.log 2>&1
  grep -A7 "^== w4a16" $R/bench_wide1.log | tail -5; pack
  W1=bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr96_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
  SWEEP_TIMEOUT=150 sweep_case m1_wide $I4 1 28672x4096,14336x4096,37888x3584,12288x4096 $W1
elif [ -z "${S47_PROBE:-}" ]; then
  step 300 python3 -m pytest -q -n 4 --dist load -m gpu tests/test_moe_gpu.py tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py \
    -k "moe or decode_bulk or wide_decode or wide_cluster or bulk_wgmma" > $R/tests.log 2>&1
  grep -E "FAILED|passed|failed" $R/tests.log | tail -8; pack
else
  echo "not an H200 (S47_PROBE set): nothing more"; exit 0
fi
# 64 tokens on long-K layers: the bulk TMA tile led the plan under an H200's per-SM load (session 45: 4096x14336 29.0
# vs 31.1 with 40 SMs held) and lost on the whole H100 (session 46: 21.5 vs 23.2) -- the H200 decides.
if grep -q H200 "$OUT/device.txt"; then
  C64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
  SWEEP_TIMEOUT=120 sweep_case m64_long $I4 48,64 4096x14336,4096x11008,3584x18944 $C64
fi
