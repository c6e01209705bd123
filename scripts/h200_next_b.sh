#!/usr/bin/env bash
# Next session, call B (after scripts/h200_next.sh; carry .whl and .shared_fixtures): the GPU suites session 13 did not reach on its final tree
# (2260ae4): the stream-K and remaining pipeline tests, the direct suite's cluster / refill tests, ops / prefill /
# dequant / JIT, and the fixture models end to end.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
step 150 python3 -m pytest -q -m gpu tests/test_ops_gpu.py tests/test_prefill_chunks.py tests/test_dequant_weight.py \
  tests/test_jit_gpu.py -k "not overhead" >$R/gpu_tests_ops.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_ops.log | tail -6; pack
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack
step 300 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_direct_gpu.py \
  -k "stream_k or wgmma or bulk or cluster or refill or ring_depth or large_activations or graph" >$R/gpu_tests_rest.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rest.log | tail -6; pack
