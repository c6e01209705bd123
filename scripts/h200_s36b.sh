#!/usr/bin/env bash
# Session 36, call B: the bench with the time-based warm-up (25 ms of untimed replays, --warmup-ms) -- the int4 bench
# of record (M = 1 / 16 / 64 / 256, upstream in the same run); the wide layer's M=1 / 2 cells with 100 replays under
# --warmup-ms 0 / 25 / 200 (the slow first replays of call A), nvidia-smi sampling clocks / power / throttle reasons
# every 100 ms meanwhile; then the GPU suites call A's 290 s limit cut at 94 %.  Carry .whl.
. scripts/h200_setup.sh
call_results b
int4_record 180
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 >"$R/smi_trace.csv" 2>&1 &
SMI=$!
for w in 0 25 200; do
  step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 28672x4096 --ms 1,2 --cold none --no-eager \
    --no-upstream --replays 100 --warmup-ms $w --json "$R/bench_wide_w$w.json" >"$R/bench_wide_w$w.log" 2>&1
  echo "-- warmup $w ms"; grep -E "\] ours .* M=" "$R/bench_wide_w$w.log" | cut -c1-90
done
kill $SMI 2>/dev/null; pack
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 300 python3 -m pytest -q $par -m gpu tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py tests/test_moe_gpu.py \
  tests/test_act_quant_gpu.py -k "not overhead" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -6; pack
