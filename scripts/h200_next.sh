#!/usr/bin/env bash
# Next session, call A (carry .whl; ~8 minutes): the GPU suites sessions 14-15 did not re-run on their final trees --
# the two-atom stage tests session 15's last call cut (M = 257), the rest of the pipelines suite (stream-K / bulk /
# wgmma / default choices / graphs) and test_gemm_gpu.py.  The fixture models passed in session 15 (call G).  After
# it, scripts/h200_next_b.sh (the sweeps for session 14's next steps).
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/a && R=/tmp/a
pack() { tar czf "$OUT/a_all.tgz" -C /tmp a; }
step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k two_atom >$R/gpu_tests_two_atom.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_two_atom.log | tail -6; pack
step 280 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "stream_k or bulk or wgmma or default_choices or graph" >$R/gpu_tests_pipelines.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_pipelines.log | tail -6; pack
step 150 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_gemm.log | tail -4; pack
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack   # (carry .shared_fixtures to run it)
