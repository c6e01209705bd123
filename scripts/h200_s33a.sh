#!/usr/bin/env bash
# Prepared in sessions 32-33 (no device was lent), call A of the next device session.  Nothing below has run on a GPU:
# the quantized-activation kernels (ops/act_quant.py, session 33) and the expert-indexed MoE kernels (ops/moe_gemm.py,
# HUMMING_MOE_KERNELS, session 32) -- their correctness suites first, then the activation-quantized formats in the
# bench (cuBLAS bf16 and upstream's W4A8 / W8A8 in the same run), then the MoE bench (int4; bf16 torch._grouped_mm).
# Call B (scripts/h200_s33b.sh): every other GPU suite and the fixture models.
. scripts/h200_setup.sh
call_results a
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 170 python3 -m pytest -q $par -m gpu tests/test_act_quant_gpu.py >"$R/act_quant_gpu_tests.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$R/act_quant_gpu_tests.log" | cut -c1-160 | tail -12; pack
step 150 python3 -m pytest -q $par -m gpu tests/test_moe_gpu.py >"$R/moe_gpu_tests.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$R/moe_gpu_tests.log" | cut -c1-160 | tail -12; pack
step 140 python3 -m vllm_humming.bench --formats act --ms 1,16,64,256,1024 --cold none \
  --json "$R/bench_act.json" >"$R/bench_act.log" 2>&1
grep "] ours\|] upstream\|] cublas" "$R/bench_act.log" | cut -c1-100 | tail -40; pack
step 100 python3 -m vllm_humming.bench.moe --json "$R/bench_moe_int4.json" >"$R/bench_moe_int4.log" 2>&1
tail -22 "$R/bench_moe_int4.log" | cut -c1-150; pack
