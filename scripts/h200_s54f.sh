#!/usr/bin/env bash
# Session 54's last call, short (the device budget left ~5 minutes): the split-K GPU tests under the final defaults,
# then the int4 bench at 16 / 64 tokens with upstream in the same run.
. scripts/h200_setup.sh
call_results f
gpu_test splitk 100 tests/test_splitk_poll_gpu.py tests/test_splitk_reducers_gpu.py -k "not experiments"
step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16,64 --cold none --no-eager \
  --json "$R/bench_int4_m16_64.json" >"$R/bench_int4_m16_64.log" 2>&1
grep -A3 "^Summary" "$R/bench_int4_m16_64.log"; grep -E "^(16|64) " "$R/bench_int4_m16_64.log"; pack
