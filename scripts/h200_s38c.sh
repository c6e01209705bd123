#!/usr/bin/env bash
# Session 38, call C: every GPU suite and the e2e fixture models on the tree with the pass reading x from global
# memory (63db10d).  Carry .whl and .shared_fixtures.
. scripts/h200_setup.sh
call_results c
gpu_suites 500
cp "$OUT/gpu_tests.log" $R/; pack
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack
