#!/usr/bin/env bash
# Session 6, device call C (carry .whl): the final tree -- the new forced-choice tests (two-stage 8-bit ring, 256-row
# M=16 blocks, wide-layer default), then the bench of all four issue formats against upstream (int4 at every M with
# eager + cold compile; int3 / int8 / MXFP4 at M <= 256), then a small int3 / MXFP4 sweep if time is left.
. scripts/h200_setup.sh
T0=$SECONDS
step 100 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode8 or decode16 or wide" >"$OUT/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -4
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -E "^\[bench\] (ours|upstream)|cold compile \(ours\):" "$OUT/bench_int4.log" | cut -c9-120
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 80 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -E "^\[bench\] ours" "$OUT/bench_$f.log" | sed 's/, eager.*//' | cut -c9-90
done
for f in w4a16-int4-g128 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  grep -A3 "^Summary" "$OUT/bench_$([ $f = w4a16-int4-g128 ] && echo int4 || echo $f).log" | tail -1
done
left=$((560 - (SECONDS - T0)))
if [ $left -gt 40 ]; then
  step $left python3 -m vllm_humming.tuning.sweep --desc w:uint3b4,s:g128:bfloat16 --ms 1 --choices \
    bt8_wn4_tm2_wk1_ak1_s4,bt8_wn4_tm2_wk1_ak1_s5,bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak1_s6 >"$OUT/sweep_int3_m1.log" 2>&1
  grep -E "cublas|^      " "$OUT/sweep_int3_m1.log"
fi
