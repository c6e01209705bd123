#!/usr/bin/env bash
# Session 55's first call: the bench of record for sessions 48-54's defaults (int4, upstream in the same run), the
# bench's own A/B of HUMMING_NARROW16_POLLED (0 = the 9-16-token narrow rule off) at 9 / 16 tokens, then the split-K
# GPU tests (polled end, reducers) under the final defaults.
. scripts/h200_setup.sh
call_results a
int4_record 200
for v in 0 default; do
  if [ $v = default ]; then unset HUMMING_NARROW16_POLLED; else export HUMMING_NARROW16_POLLED=$v; fi
  step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 9,16 \
    --no-upstream --no-eager --cold none --json "$R/ab_n16p$v.json" >"$R/ab_n16p$v.log" 2>&1
  echo "-- HUMMING_NARROW16_POLLED=$v"; grep "] ours" "$R/ab_n16p$v.log" | sed 's/.*int4-g128 //' | cut -c1-40; pack
done
unset HUMMING_NARROW16_POLLED
gpu_test splitk 150 tests/test_splitk_poll_gpu.py tests/test_splitk_reducers_gpu.py -k "not experiments"
