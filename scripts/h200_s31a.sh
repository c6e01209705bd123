#!/usr/bin/env bash
# Prepared in session 31 (no device was lent), call A of the next device session: every GPU suite and the fixture
# models on the tree that moved the launch plan into ops/plan.py (GemmLayer._plan binds plan.plan_launches), which
# no GPU has run -- with the split-plan tests that 65f7eff folded onto one helper.  Carry .shared_fixtures.
. scripts/h200_setup.sh
call_results a
gpu_suites 480; cp "$OUT/gpu_tests.log" "$R/"; pack
grep -E "dp_tail|sibling_head|plan_alternatives" "$R/gpu_tests.log" | grep -E "FAILED|ERROR" | head
e2e_fixtures; pack
