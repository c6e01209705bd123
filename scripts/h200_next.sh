#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl and .shared_fixtures): everything owed at the end
# of session 3 -- the full GPU suite and e2e fixtures at HEAD, the full bench (int4 all M; int3 / int8 / MXFP4 at
# M <= 1024), and the tensor-pipe vs issue picture of the M = 16 / 64 decode kernels (NOTES.md, next step 1).
. scripts/h200_setup.sh
step 200 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_ops_gpu.py -k "not overhead" \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
step 150 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -A5 "^Summary" "$OUT/bench_int4.log"
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 100 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,1024 --cold none --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_$f.log"
done
for m in 16 64; do
  step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,gpu__time_duration.sum \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 $m >"$OUT/ncu_m$m.txt" 2>&1
  grep -E "choice|pct|duration|wavefronts" "$OUT/ncu_m$m.txt" | head -12
done
if [ -d .shared_fixtures ]; then
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 90 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | tail -8
fi
