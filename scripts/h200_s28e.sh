#!/usr/bin/env bash
# Session 28, call E: every GPU suite on the session's final heuristics (FLOAT_ZERO_TMA; the 256-token tile at
# 385-512 tokens on wide layers too) and the e2e fixture models -- log in $OUT/gpu_tests.log.
. scripts/h200_setup.sh
gpu_suites 470
e2e_fixtures
