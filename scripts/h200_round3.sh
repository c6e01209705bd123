#!/usr/bin/env bash
# Round 3: GPU tests of everything new (pipelines, prefill bands, launch paths), prefill band-size sweep, eager
# launch-path comparison.  carry: .whl
. scripts/h200_setup.sh
echo "== gpu tests"
timeout 260 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_ops_gpu.py -s -k "not overhead" >$OUT/gpu_tests.log 2>&1
grep -E "^FAILED|^ERROR|passed|failed" $OUT/gpu_tests.log | head -20
timeout 60 python3 -m pytest -q -s tests/test_jit_gpu.py -k "overhead" 2>&1 | grep -iE "us|µs|passed|failed" | head -12
for mb in 0 8 16 32; do
  echo "== prefill band ${mb} MB"
  HUMMING_PREFILL_CHUNK_MB=$mb timeout 70 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 256,1024,4096 \
    --cold none --no-eager --no-upstream --no-check --json $OUT/prefill_$mb.json 2>&1 | grep -A4 "^Summary" | tail -2
done
for lp in bindings ctypes; do
  echo "== eager, launch path $lp"
  HUMMING_LAUNCH_PATH=$lp timeout 70 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --shapes 6144x4096 \
    --cold none --no-upstream --no-check 2>&1 | grep -iE "eager|^ *[0-9]+ *\|" | head -8
done
