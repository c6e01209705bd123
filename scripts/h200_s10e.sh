#!/usr/bin/env bash
# Session 10, call E (carry .whl): the bench on the final tree -- int4 at every M (cold compile, eager), int3 / int8 /
# MXFP4 at M <= 64 and at M = 256, ours vs upstream vs cuBLAS bf16 in the same run; the compile time of each default.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/e && R=/tmp/e
pack() { tar czf "$OUT/e_all.tgz" -C /tmp e; }
step 230 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "cold compile \(ours\):|eager" $R/bench_int4.log | cut -c1-110 | head -3
grep -A3 "^Summary" $R/bench_int4.log | tail -2; pack
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 80 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
step 90 python3 -m vllm_humming.cli compile-report --shapes 6144x4096,28672x4096,4096x14336 >$R/compile_report.txt 2>&1; tail -12 $R/compile_report.txt; pack
