#!/usr/bin/env bash
# Session 34, call A: every GPU suite on this tree (incl. the act-quant suite with its CPU reference and the new
# register-batched quantize kernel, and the MoE suite), then the fixture models.  Carry .whl and .shared_fixtures.
. scripts/h200_setup.sh
call_results a
gpu_suites 500; cp "$OUT/gpu_tests.log" "$R/"; pack
e2e_fixtures; cp "$OUT"/e2e.* "$R/" 2>/dev/null; pack
