#!/usr/bin/env bash
# Call B of the next device session (after scripts/h200_s33a.sh): every GPU suite on this tree (session 31's plan
# refactor has not run on a GPU either), the fixture models, the MoE bench on MXFP4, and the int4 MoE bench on the torch
# routing ops (HUMMING_MOE_ROUTE_KERNELS=0) for the route kernels' A/B.  Carry .shared_fixtures.
. scripts/h200_setup.sh
call_results b
gpu_suites 390; cp "$OUT/gpu_tests.log" "$R/"; pack
e2e_fixtures; cp "$OUT"/e2e.* "$R/" 2>/dev/null; pack
step 50 python3 -m vllm_humming.bench.moe --desc "w:float4_e2m1,s:g32:float8_e8m0fnu" --layers 128:8:2048:768 \
  --json "$R/bench_moe_mxfp4.json" >"$R/bench_moe_mxfp4.log" 2>&1
tail -8 "$R/bench_moe_mxfp4.log" | cut -c1-150; pack
# The route kernels' share of a decode-sized MoE layer: the same bench on the torch routing ops (A/B with call A's)
HUMMING_MOE_ROUTE_KERNELS=0 step 45 python3 -m vllm_humming.bench.moe --layers 128:8:2048:768 --tokens 1,4,16,64 \
  --json "$R/bench_moe_int4_torchroute.json" >"$R/bench_moe_int4_torchroute.log" 2>&1
tail -6 "$R/bench_moe_int4_torchroute.log" | cut -c1-150; pack
