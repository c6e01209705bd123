#!/usr/bin/env bash
# Session 15, call E (carry .whl; ~8 minutes): 256-row tiles on wide layers at 65-128 tokens (the new default) --
# same-run sweep against the old 128-row choice for four formats at M = 72 / 96 / 128 on two wide shapes, the GPU
# tests of the new default (test_large_m_default_choices at 65 / 100 / 128, every format of FORMATS, odd N, K tail),
# test_gemm_gpu.py (every format x M in {1, 17, 64, 257, 1024, 4096}), and the bench at M = 128 (all four formats).
. scripts/h200_setup.sh
call_results e
C=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s5_wgmma
for f in "i4 w:uint4b8,s:g128:bfloat16" "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4" "i8 w:uint8b128,s:channel:bfloat16"; do
  set -- $f
  SWEEP_TIMEOUT=100 sweep_case "wide_$1" "$2" 72,96,128 28672x4096,18432x7168 "$C"
done
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "large_m_default and (65 or 100 or 128 or 64)" \
  >$R/gpu_tests_wide128.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_wide128.log | tail -6; pack
step 170 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_gemm.log | tail -4; pack
for f in w4a16-int4-g128 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 60 python3 -m vllm_humming.bench --formats $f --ms 128 --cold none --no-eager --json $R/bench_m128_$f.json \
    >$R/bench_m128_$f.log 2>&1; grep -A3 "^Summary" $R/bench_m128_$f.log | tail -1; pack
done
