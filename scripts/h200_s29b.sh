#!/usr/bin/env bash
# Session 29, call B: the exponent fold (float formats' group scales carry 2^kExpAdjust: one multiply per operand
# pair; dequant.cuh) and run_segment always inlined (gemm_wna16.cuh) -- every GPU suite, incl. the new
# test_float_group_scales_past_the_exponent_fold (scales whose fold leaves 2^k to the epilogue), and the e2e models.
. scripts/h200_setup.sh
call_results b
gpu_suites 480; cp "$OUT/gpu_tests.log" "$R/"; e2e_fixtures; cp "$OUT"/e2e.* "$R/" 2>/dev/null; pack
