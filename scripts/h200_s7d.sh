#!/usr/bin/env bash
# Session 7, call D (carry .whl): the final tree -- split cap 32 at small M (4096x14336 M=1 fills the slots, so the
# early PDL release applies) and the 256-row M > 128 choice on wide layers.  The bench of the four issue formats
# against upstream, and the GPU tests call C's time limit cut off (everything after test_bulk_wgmma_int4_shapes).
. scripts/h200_setup.sh
step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json "$OUT/bench_int4.json" >"$OUT/bench_int4.log" 2>&1
grep -E "^\[bench\] (ours|upstream)|cold compile \(ours\):" "$OUT/bench_int4.log" | sed 's/, [0-9]* copies//' | cut -c9-110
step 170 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py -k "(bulk_wgmma_grid or (step_groups and not bulk) or decode or cp_async or not pipelines) and not overhead" \
  >"$OUT/gpu_tests.log" 2>&1; grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -6
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 62 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json "$OUT/bench_$f.json" \
    >"$OUT/bench_$f.log" 2>&1; grep -E "^\[bench\] ours" "$OUT/bench_$f.log" | sed 's/, eager.*//' | cut -c9-90
done
for f in int4 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do grep -A3 "^Summary" "$OUT/bench_$f.log" | tail -1; done
