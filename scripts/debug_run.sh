#!/usr/bin/env bash
# bisect kernel faults case by case, each in its own process (a fault kills the CUDA context)
export CUDA_LAUNCH_BLOCKING=1 HUMMING_CACHE_DIR=/tmp/humming-cache PYTHONUNBUFFERED=1
SAN=""; command -v compute-sanitizer >/dev/null && SAN="compute-sanitizer --print-limit 3"
while read -r args; do
  [ -z "$args" ] && continue
  out=$(timeout 120 python3 scripts/debug_case.py $args 2>&1); rc=$?
  if [ $rc -eq 0 ]; then echo "$out" | tail -1; else
    echo "FAIL rc=$rc: $args"; echo "$out" | grep -E "Error|error" | head -3
    if [ -n "$SAN" ]; then timeout 200 $SAN python3 scripts/debug_case.py $args 2>&1 | grep -vE "^\s*$" | head -30; fi
  fi
done
