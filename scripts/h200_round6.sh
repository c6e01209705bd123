#!/usr/bin/env bash
# Round 6: the warp-level stream-K decode kernel -- correctness, sweep, bench vs cuBLAS + upstream.  carry: .whl
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 HUMMING_CACHE_DIR=/tmp/humming-cache
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-deps --no-build-isolation -e . >$OUT/install.log 2>&1 || { tail $OUT/install.log; exit 1; }
timeout 100 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "stream" >$OUT/gpu_tests.log 2>&1
grep -E "^FAILED|^E  |passed|failed|rror" $OUT/gpu_tests.log | head -12
timeout 70 python3 -m vllm_humming.tuning.sweep --ms 1 --choices bt8_wn4_tm1_wk1_ak1_s8_stream,bt8_wn8_tm1_wk1_ak1_s8_stream,bt8_wn4_tm1_wk1_ak1_s4_stream,bt8_wn8_tm1_wk1_ak1_s4_stream,bt8_wn4_tm1_wk1_ak1_s12_stream \
  --json $OUT/sweep_stream_m1.json 2>&1 | tee $OUT/sweep.log | grep -v "^      "
timeout 50 python3 -m vllm_humming.tuning.sweep --ms 16 --choices bt16_wn4_tm1_wk1_ak1_s6_stream,bt16_wn8_tm1_wk1_ak1_s4_stream,bt16_wn4_tm1_wk1_ak1_s4_stream \
  --json $OUT/sweep_stream_m16.json 2>&1 | tee -a $OUT/sweep.log | grep -v "^      "
HUMMING_PIPELINE=stream timeout 90 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --cold none \
  --json $OUT/bench_stream.json >$OUT/bench_stream.log 2>&1; grep -A4 "^Summary" $OUT/bench_stream.log; grep "ours.*M=1:" $OUT/bench_stream.log
