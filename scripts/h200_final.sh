#!/usr/bin/env bash
# The full H200 check (device tool): GPU tests, e2e fixture models, eager overhead, compile report, benches vs cuBLAS
# and upstream humming.  Logs and JSON land in $OUT.
#   carry: .whl (humming-kernels wheel, optional peer) and .shared_fixtures (copy of ../shared/fixtures)
# Two parts, each within the device tool's 600 s per call: `bash scripts/h200_final.sh tests` (every GPU suite and the
# e2e fixture models), `bash scripts/h200_final.sh bench` (eager overhead, compile report, benches); no argument: both.
. scripts/h200_setup.sh
PART=${1:-all}
if [ "$PART" != bench ]; then
# every GPU suite (pytest-xdist, 8 workers: ~6.5 minutes on a cold cache, session 24) -- log in $OUT/gpu_tests.log
gpu_suites 480
e2e_fixtures
fi
[ "$PART" = tests ] && exit 0
step 60 python3 scripts/exp_eager.py 2>&1 | tee "$OUT/exp_eager.log"
step 60 python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" >"$OUT/compile.log" 2>&1; tail -8 "$OUT/compile.log"
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A12 "^Summary" "$OUT/bench_int4.log"
step 240 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64,1024 \
  --cold none --json "$OUT/bench_more.json" >"$OUT/bench_more.log" 2>&1; grep -A8 "^Summary" "$OUT/bench_more.log"
# (profile a case: ncu ... python3 scripts/profile_case.py DESC N K M [CHOICE], see scripts/h200_round2.sh)
