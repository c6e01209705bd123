#!/usr/bin/env bash
# Session 6, device call G (carry .whl): the final M <= 16 default (bt16_wn8_tm2_wk2_ak2_s3) -- its forced-choice and
# default-choice tests, then all four issue formats against upstream at M=16 (the other M buckets did not change
# since calls C / D).
. scripts/h200_setup.sh
step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode8 or decode16 or decode_default" \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -4
for f in w4a16-int4-g128 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 100 python3 -m vllm_humming.bench --formats $f --ms 16 --cold none --no-eager --json "$OUT/bench_m16_$f.json" \
    >"$OUT/bench_m16_$f.log" 2>&1; grep -E "^\[bench\] (ours|upstream)" "$OUT/bench_m16_$f.log" | sed 's/, eager.*//' | cut -c9-90
  grep -A3 "^Summary" "$OUT/bench_m16_$f.log" | tail -1
done
