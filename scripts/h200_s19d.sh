#!/usr/bin/env bash
# Session 19, call D (carry .whl; ~9 minutes): the 192-row sibling in the layer's plan -- its GPU tests (the plan
# test, every format's default choices at 1024 / 1500 tokens, which now run it on 6144x4096), then the int4 bench at
# every default M (the issue's table) and the int3 / MXFP4 bench at M = 256 / 1024 (session 18's rules and this one
# apply to them; unmeasured so far).
. scripts/h200_setup.sh
call_results d
step 240 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_plan_alternatives or (test_large_m_default_choices and (1024 or 1500))" \
  >$R/gpu_sibling.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_sibling.log | tail -6; pack
step 230 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
sed -n '/^== w4a16/,/^wrote/p' $R/bench_int4.log | cut -c1-150; pack
step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,1024 --cold none --no-eager \
  --json $R/bench_int3_mxfp4.json >$R/bench_int3_mxfp4.log 2>&1; grep -E "^(==|M  |1024|256 )" $R/bench_int3_mxfp4.log | cut -c1-150; pack
