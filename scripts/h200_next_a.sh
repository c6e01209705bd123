#!/usr/bin/env bash
# Next session, call A: every GPU suite (verbose: names even when cut off) on session 38's final tree -- its fused
# pass over x with the scale copies' commit + wait has not run on a GPU -- and the e2e fixture models.  Any card.
# Carry .whl and .shared_fixtures.
. scripts/h200_setup.sh
call_results a
gpu_suites 520
cp "$OUT/gpu_tests.log" $R/; pack
e2e_fixtures; cp "$OUT"/e2e.* $R/ 2>/dev/null; pack
