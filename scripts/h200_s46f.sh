#!/usr/bin/env bash
# Session 46, call F (carry .whl).  The bulk decode rule as built (heuristics.decode_bulk_choice): its GPU test and
# the decode-default tests around it, the background-compile coverage test (its M=17 call now launches the bulk
# kernel), then the bench at 16 / 24 / 32 tokens with the rule on and off (HUMMING_DECODE_BULK), upstream in the same
# run.  On an H200 the int4 bench of record first.
. scripts/h200_setup.sh
call_results f
if grep -q H200 "$OUT/device.txt"; then int4_record 200; pack; fi
step 150 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py tests/test_ops_gpu.py -k "decode_bulk or background" > $R/tests.log 2>&1
tail -3 $R/tests.log; pack
BS=6144x4096,28672x4096,4096x14336,37888x3584
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16,32 --shapes $BS --cold none --no-eager \
  --json $R/bench_bulk1.json > $R/bench_bulk1.log 2>&1
grep -B2 -A9 "^== w4a16" $R/bench_bulk1.log | tail -10; pack
HUMMING_DECODE_BULK=0 step 80 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16,32 --shapes $BS \
  --cold none --no-eager --no-upstream --json $R/bench_bulk0.json > $R/bench_bulk0.log 2>&1
grep -A9 "^== w4a16" $R/bench_bulk0.log | tail -8; pack
