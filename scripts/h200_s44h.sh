#!/usr/bin/env bash
# Session 44, call H (any sm_90a card; carry .whl): call G's three failures were a stale test expectation
# (test_wide_cluster_default_choices asserted the cluster choice for int3 on 16400x1088, where session 43's prefetch
# rule now comes first); the mended test, with the rest of its file's cluster / decode-default tests.
. scripts/h200_setup.sh
call_results h
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "wide_cluster or decode_default_choices or wide_decode_224" >$R/test_wide_cluster.log 2>&1
grep -E "FAILED|passed|failed|rror" $R/test_wide_cluster.log | cut -c1-300 | tail -6; pack
