#!/usr/bin/env bash
# Session 5, device call C: wgmma math warpgroups in the bulk pipeline (producer warpgroup + mbarriers, persistent
# stream-K, x by swizzled cp.async): correctness, then the sweep against the cp.async wgmma picks at M = 64/256/1024.
. scripts/h200_setup.sh
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "bulk" -x >"$OUT/tests_bulk_wgmma.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/tests_bulk_wgmma.log" | head -12
export HUMMING_PREFILL_M=1000000
step 300 python3 -m vllm_humming.tuning.sweep --ms 64,256,1024 --json "$OUT/sweep_bulk_wgmma.json" --choices \
bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,\
bt64_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt64_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt64_wn4_tm1_wk1_ak1_s6_bulk_wgmma,\
bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s3_bulk_wgmma,\
bt256_wn8_tm1_wk1_ak1_s4_bulk_wgmma >"$OUT/sweep_bulk_wgmma.log" 2>&1
grep -v "^\[" "$OUT/sweep_bulk_wgmma.log" | cut -c1-170 | tail -60
