#!/usr/bin/env bash
# Session 27, call E: every GPU suite on the session's final kernels and heuristics (incl. test_float_decode_defaults
# with its NVFP4 expectation fixed after call C) -- log in $OUT/gpu_tests.log.
. scripts/h200_setup.sh
gpu_suites 470
