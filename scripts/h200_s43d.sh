#!/usr/bin/env bash
# Session 43, call D (any sm_90a card; carry .whl): the cold compile of the M=1 layer as the first step on a fresh
# machine (one kernel since this session), the int3 / MXFP4 prefetching wgmma decode's A/B at 1-2 tokens (the bucket
# 1-8 choice also serves them: no 1-2-token alternative for these codes), then the GEMM / direct / ops GPU suites on
# the final tree (call A ran the other suites).
. scripts/h200_setup.sh
call_results d
step 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1 --shapes 6144x4096 --no-upstream --no-eager \
  --json "$R/cold_m1_first.json" >"$R/cold_m1_first.log" 2>&1
grep -i "cold" "$R/cold_m1_first.log" | cut -c1-160 | tail -2; pack
SHP=1024x4096,2048x4096,4096x4096,4096x2048
for v in 1 0; do
  HUMMING_WG_PREFETCH=$v timeout 100 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 1,2 \
    --shapes $SHP --no-upstream --no-eager --cold none --json $R/ab12_wgpf$v.json >$R/ab12_wgpf$v.log 2>&1
  echo "-- HUMMING_WG_PREFETCH=$v"; grep "] ours" $R/ab12_wgpf$v.log | sed 's/.*ours //' | cut -c1-48 | tr '\n' ';'; echo
done
pack
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 380 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py \
  tests/test_ops_gpu.py -k "not overhead" >"$R/gpu_tests_gemm_direct_ops.log" 2>&1
grep -E "FAILED|passed|failed" "$R/gpu_tests_gemm_direct_ops.log" | cut -c1-200 | tail -12; pack
