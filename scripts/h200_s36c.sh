#!/usr/bin/env bash
# Session 36, call C: the int4 bench of record with the 25 ms warm-up (M = 1 / 16 / 64 / 256, upstream in the same
# run) -- meant for an H200 (the card); about 200 s of device time.  Carry .whl.
. scripts/h200_setup.sh
call_results c
grep -q H200 "$OUT/device.txt" || { echo "not an H200: the H100 table of call B stands; nothing run"; exit 0; }
int4_record 190
