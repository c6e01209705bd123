#!/usr/bin/env bash
# Session 21, call C (carry .whl; ~6 minutes): the 8-token split-K end without a fence (partials with empty marks in
# their own region, gemm_wna16.cuh splitk_sum8_into_y) -- its GPU tests (region invariant, a region grown inside a
# capture) and the direct suite's wgmma / split cases -- then the int4 bench at M = 1 / 16: the default vs the fenced
# protocol (HUMMING_DEBUG_SPLITK8_FENCED) vs a timing-only decode without its shifts (HUMMING_DEBUG_DECODE_NO_SHIFT,
# wrong values), alternating.
. scripts/h200_setup.sh
call_results c
[ -n "${SKIP_TESTS:-}" ] || step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "splitk_8_token or wgmma or splits" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -6; pack
run_bench() {  # NAME DEFINES [bench args]
  HUMMING_DEBUG_DEFINES=$2 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 \
    --no-upstream --no-eager --cold none ${3:-} --json $R/bench_$1.json >$R/bench_$1.log 2>&1
  echo "-- $1 (${2:-defaults})"; grep "] ours" $R/bench_$1.log | sed "s/.*g128 //; s/ us\/GEMM.*//" | tr "\n" ";"; echo; pack
}
for i in 1 2; do
  run_bench marks$i ""
  run_bench fenced$i HUMMING_DEBUG_SPLITK8_FENCED
  run_bench noshift$i HUMMING_DEBUG_DECODE_NO_SHIFT --no-check
done
step 60 python3 -m pytest -q -m gpu tests/test_splitk_reducers_gpu.py tests/test_gemm_gpu.py -k "not overhead" >$R/gpu_tests2.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests2.log | tail -4; pack
