#!/usr/bin/env bash
# Session 44, call G (carry .whl): on an H200, the bench of record on this tree (scripts/h200_s42d.sh: int4 with
# eager / cold compile, the other formats, the prefetch A/B); on any other card every GPU suite once on the final
# tree (session 43's final-pass mends -- the planner's one swap site, the shared test helper -- never ran on a GPU).
. scripts/h200_setup.sh
if grep -q H200 "$OUT/device.txt"; then exec bash scripts/h200_s42d.sh; fi
call_results g
gpu_suites 560
cp "$OUT/gpu_tests.log" $R/; pack; rm -f "$OUT/gpu_tests.log"
