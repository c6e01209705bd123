#!/usr/bin/env bash
# Session 21, call B (carry .whl; ~8 minutes): the split-K / stream-K tickets' fences as fence.acq_rel.gpu
# (MEMBAR.ALL.GPU) instead of __threadfence()'s fence.sc (MEMBAR.SC.GPU) -- the GPU tests of every ticketed path,
# then the int4 bench at M = 1 / 16 / 64 / 256 with and without it (HUMMING_DEBUG_SC_FENCES = the old fences) and with
# the single acq_rel ticket atomic of the 8-token tiles (HUMMING_DEBUG_TICKET_ATOM_ACQREL), alternating, same call.
. scripts/h200_setup.sh
call_results b
step 150 python3 -m pytest -q -m gpu tests/test_splitk_reducers_gpu.py tests/test_gemm_gpu.py -k "not overhead" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -6; pack
run_bench() {  # NAME DEFINES
  HUMMING_DEBUG_DEFINES=$2 step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 \
    --no-upstream --no-eager --cold none --json $R/bench_$1.json >$R/bench_$1.log 2>&1
  echo "-- $1 (${2:-defaults})"; grep "] ours" $R/bench_$1.log | sed "s/.*g128 //; s/ us\/GEMM.*//" | tr "\n" ";"; echo; pack
}
run_bench acqrel1 ""
run_bench sc1 HUMMING_DEBUG_SC_FENCES
run_bench atom1 HUMMING_DEBUG_TICKET_ATOM_ACQREL
run_bench acqrel2 ""
run_bench sc2 HUMMING_DEBUG_SC_FENCES
run_bench atom2 HUMMING_DEBUG_TICKET_ATOM_ACQREL
