#!/usr/bin/env bash
# Session 22, call E (carry .whl; ~7 minutes): the windows experiment's GPU test (opt-in, HUMMING_WG_WINDOWS) on the
# final tree, then the other WnA16 formats at M <= 64 against upstream humming in the same run (the default
# kernels are byte-identical to 4695432's: SASS compared on the CPU machine).
. scripts/h200_setup.sh
call_results e
step 100 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -4; tail -c 300 $R/gpu_tests.log; echo; pack
step 330 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w8a16-int8-channel,w4a16-mxfp4 --ms 1,16,64 --no-eager \
  --cold none --json $R/bench_w3_w8_mxfp4.json >$R/bench_w3_w8_mxfp4.log 2>&1
sed -n '/^Summary/,$p' $R/bench_w3_w8_mxfp4.log | cut -c1-150; pack
