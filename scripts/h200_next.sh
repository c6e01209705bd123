#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl and .shared_fixtures).  Session 7 ran the GPU suites
# in two parts on two commits (results/h200-2026-11-30-s7/README); this runs all of them on one tree, the e2e
# fixtures, then the stall profile of the warp-specialized M=256 kernel (NOTES.md, session 7, next steps 3).
# Kernel work next: NOTES.md, session 7, "Next, ranked" (a persistent decode grid first).
. scripts/h200_setup.sh
# Bench cold compile on a fresh machine (first command) and again after the suites: session 7 measured 1.83 s as the
# first command (NVRTC 1.48 s) against 0.26-0.38 s (NVRTC ~0.1 s) in every earlier session, where the bench ran later.
step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 6144x4096 --ms 1 --no-upstream --no-eager \
  2>&1 | grep "cold compile (ours):"
gpu_suites 420   # (session 7's full run needed more than 260 s)
e2e_fixtures
step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 6144x4096 --ms 1 --no-upstream --no-eager \
  2>&1 | grep "cold compile (ours):"
export HUMMING_PREFILL_M=1000000
for c in bt128_wn8_tm2_wk1_ak1_s6_bulk_wgmma bt128_wn8_tm2_wk1_ak1_s4_wgmma; do
  step 90 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section WarpStateStats --section SpeedOfLight --page raw \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 $c >"$OUT/ncu_stalls_$c.txt" 2>&1
  echo "-- stalls $c"; grep -E "issue_stalled|gpu__time_duration.sum" "$OUT/ncu_stalls_$c.txt" \
    | awk '{print $1, $NF}' | sort -k2 -g -r | grep -v "_not_issued" | head -14
done
