#!/usr/bin/env bash
# Session 39, first call on whichever card comes: an H200 runs the bench of record and the sweeps
# (scripts/h200_s39a.sh); any other card every GPU suite (scripts/h200_next_a.sh).  Carry .whl and .shared_fixtures.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then bash scripts/h200_s39a.sh
else bash scripts/h200_next_a.sh; fi
