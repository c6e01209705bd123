#!/usr/bin/env bash
# Session 8, call E (carry .whl): the final bench on the tree of call D -- int4 at every M with cold compile and eager
# time, int3 / int8 / MXFP4 at M <= 256 -- ours vs upstream humming-kernels 0.1.19 vs cuBLAS in the same runs.
. scripts/h200_setup.sh
step 210 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -E "^\[bench\] (ours|upstream)|cold compile \(ours\):" "$OUT/bench_int4.log" | sed 's/, [0-9]* copies//' | cut -c9-110
grep -A3 "^Summary" "$OUT/bench_int4.log" | tail -2
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 100 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -A3 "^Summary" "$OUT/bench_$f.log" | tail -2
done
