#!/usr/bin/env bash
# Session 28, call A: every GPU suite on session 27's final tree (a024eda + this script), whose float-zero-point and
# 8-bit-sibling pick changes had only compiled (CPU) -- log in $OUT/gpu_tests.log; then the e2e fixture models.
. scripts/h200_setup.sh
gpu_suites 470
e2e_fixtures
