#!/usr/bin/env bash
# Session 8, call G (carry .whl): the M=16 wgmma rule.  The GPU tests of the new choice (every format) and of the decode
# defaults, the bench at M=16 for the four formats, then int3 / MXFP4 sweeps against the mma.sync choice.
. scripts/h200_setup.sh
step 100 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode16 or decode_default" >"$OUT/gpu_tests_m16.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests_m16.log" | tail -4
for f in w4a16-int4-g128 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 45 python3 -m vllm_humming.bench --formats $f --ms 16 --cold none --no-eager --json "$OUT/bench_m16_$f.json" \
    >"$OUT/bench_m16_$f.log" 2>&1; grep -E "^\[bench\] (ours|upstream)" "$OUT/bench_m16_$f.log" | sed 's/, [0-9]* copies.*//' | cut -c9-90
  grep -A3 "^Summary" "$OUT/bench_m16_$f.log" | tail -1
done
export HUMMING_PREFILL_M=1000000
for d in w:uint3b4,s:g128:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  step 60 python3 -m vllm_humming.tuning.sweep --desc $d --ms 16 --choices bt16_wn8_tm2_wk2_ak2_s3,bt16_wn8_tm2_wk1_ak1_s4_wgmma 2>&1 \
    | grep -E "cublas|^      "
done
