#!/usr/bin/env bash
# Next session, call C (carry .whl; ~5 minutes): the 128-row x 128-token two-atom tile (the narrow K <= 4096 default
# at 65-256 tokens for codes of <= 4 bits) without its register cap.  min_blocks sizes a 2-blocks-per-SM budget (128
# registers), but its 124 KB of shared memory leave room for one block per SM: under the cap ptxas spills 24-56 bytes
# and, for int3, injects warpgroup.arrive (C7519); uncapped it takes 149-162 registers and spills nothing
# (results/cpu-2026-12-02-s16/).  HUMMING_DEBUG_MIN_BLOCKS=1 lifts the cap for every kernel of the process, so each
# sweep below pairs with the same sweep without it.  If the uncapped tile wins, cap min_blocks by the blocks the
# shared memory admits (ops/gemm.py, where the format's smem_bytes is known) and run its GPU tests.
. scripts/h200_setup.sh
call_results c
C=bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma
for f in "i4 $I4" "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4"; do
  set -- $f
  SWEEP_TIMEOUT=50 sweep_case "cap_$1" "$2" 128,256 6144x4096,4096x4096 "$C"
  HUMMING_DEBUG_MIN_BLOCKS=1 SWEEP_TIMEOUT=50 sweep_case "nocap_$1" "$2" 128,256 6144x4096,4096x4096 "$C"
done
