#!/usr/bin/env bash
# Session 5, device call D: bulk wgmma with the whole producer warpgroup copying x (call C: 4x slower than the
# cp.async wgmma kernel with one producer warp copying x).
. scripts/h200_setup.sh
step 100 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bulk_wgmma or bulk_grid" -x >"$OUT/tests_bulk_wgmma.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/tests_bulk_wgmma.log" | head -12
export HUMMING_PREFILL_M=1000000
step 150 python3 -m vllm_humming.tuning.sweep --ms 64,256 --shapes 28672x4096,4096x14336 --json "$OUT/sweep_bulk_wgmma.json" --choices \
bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt64_wn8_tm1_wk1_ak1_s6_bulk_wgmma,\
bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s4_bulk_wgmma >"$OUT/sweep_bulk_wgmma.log" 2>&1
grep -v "^\[" "$OUT/sweep_bulk_wgmma.log" | cut -c1-170 | tail -30
