#!/usr/bin/env bash
# Session 21, call C (carry .whl; ~5 minutes): the single acq_rel ticket atomic as the 8-token default -- its GPU test
# and the direct suite's wgmma / split cases -- then a timing-only experiment: the int4 decode without its three
# shifts per word (HUMMING_DEBUG_DECODE_NO_SHIFT, wrong values) at M = 1 / 16 against the defaults, alternating.
. scripts/h200_setup.sh
call_results c
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "splitk_8_token or wgmma or splits" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -6; pack
run_bench() {  # NAME DEFINES
  HUMMING_DEBUG_DEFINES=$2 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 \
    --no-upstream --no-eager --cold none $3 --json $R/bench_$1.json >$R/bench_$1.log 2>&1
  echo "-- $1 (${2:-defaults})"; grep "] ours" $R/bench_$1.log | sed "s/.*g128 //; s/ us\/GEMM.*//" | tr "\n" ";"; echo; pack
}
run_bench def1 ""
run_bench noshift1 HUMMING_DEBUG_DECODE_NO_SHIFT --no-check
run_bench def2 ""
run_bench noshift2 HUMMING_DEBUG_DECODE_NO_SHIFT --no-check
