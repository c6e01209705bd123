#!/usr/bin/env bash
# Session 51, call B.  On an H200: the bench of record on this tree (session 48's one-token tiles have never been
# through it), the GPU test of those tiles' defaults, then session 48's one-token H200 sweeps (h200_s48b.sh: whether
# the tiles extend to 2-8 tokens) as time allows.  On any other card: every GPU suite (8 xdist workers; 505 s on an
# H100 in session 43), which includes test_one_token_tiles_defaults (never run on a GPU).
. scripts/h200_setup.sh
call_results b
if grep -q H200 "$OUT/device.txt"; then
  int4_record 240
  step 120 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k "one_token_tiles" >"$R/gpu_one_token.log" 2>&1
  tail -3 "$R/gpu_one_token.log" | cut -c1-200; pack
  bash scripts/h200_s48b.sh   # (its results go to the same /tmp/b and $OUT/b_all.tgz)
else
  gpu_suites 560; cp "$OUT/gpu_tests.log" "$R/"; pack
fi
