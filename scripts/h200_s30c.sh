#!/usr/bin/env bash
# Session 30, call C (the tree of the whole-waves + split-tail plan, the row-tile-offset 256-token kernels and the
# NVFP4 33-64-token rules): every GPU suite (8 xdist workers) and the e2e fixture models.
. scripts/h200_setup.sh
call_results c
gpu_suites 470; pack
e2e_fixtures; pack
