#!/usr/bin/env bash
# Session 35, call B: the shared-memory prefetch as a default (KernelChoice.pf, heuristics.smem_prefetch_decode_choice:
# 1-2 tokens on 4-bit integer layers with K <= 4096 and <= 48 rows per SM) -- GPU tests (the experiment's bit
# identity incl. the smem ring, the defaults against the reference), the int4 bench at 1-2 tokens with the rule on
# (upstream in the same run) and off (HUMMING_SMEM_PREFETCH=0), then the smem ring (HUMMING_DIRECT_SMEM_RING) on
# the two large layers.  Carry .whl.
. scripts/h200_setup.sh
call_results b
step 300 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "prefetch" >"$R/test_prefetch.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$R/test_prefetch.log" | tail -5; pack
SHP=6144x4096,4096x4096,2048x4096,28672x4096,4096x14336
step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes $SHP --ms 1,2 --cold none --no-eager \
  --json "$R/bench_pf1.json" >"$R/bench_pf1.log" 2>&1
HUMMING_SMEM_PREFETCH=0 step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes $SHP --ms 1,2 \
  --cold none --no-eager --no-upstream --json "$R/bench_pf0.json" >"$R/bench_pf0.log" 2>&1
for v in 1 0; do echo "-- HUMMING_SMEM_PREFETCH=$v"; grep -E "\] (ours|upstream|cuBLAS)" "$R/bench_pf$v.log" | sed "s/\[bench\] //;s/w4a16-int4-g128 //;s/ us\/GEMM//" | cut -c1-60; done; pack
S2=bt8_wn4_tm2_wk2_ak64_s4_x16_direct,bt8_wn8_tm1_wk2_ak64_s4_x16_direct,bt8_wn4_tm1_wk4_ak64_s4_x16_direct
S3=bt8_wn7_tm2_wk1_ak64_s4_x16_direct,bt8_wn14_tm1_wk1_ak64_s4_x16_direct,bt8_wn7_tm1_wk2_ak64_s4_x16_direct
export HUMMING_PDL_EARLY_RELEASE=1 HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_SMEM_PREFETCH=73728,HUMMING_DIRECT_SMEM_RING
sweep_case long_ring $I4 1 4096x14336 $S2 --splits 4
sweep_case wide_ring $I4 1 28672x4096 $S3 --splits 1
