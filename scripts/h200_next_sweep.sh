#!/usr/bin/env bash
# Second device call of the next session (carry .whl): 256-row wgmma blocks (half the activation re-reads, NOTES.md
# session 4) against the current picks at M = 64 / 256, now that the split-K reduction is cheap; the kernel at every M.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
step 250 python3 -m vllm_humming.tuning.sweep --ms 64,256 --json "$OUT/sweep_wide.json" --choices \
bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak1_s6_wgmma,bt64_wn4_tm2_wk1_ak1_s6_wgmma,\
bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm2_wk1_ak1_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt256_wn8_tm1_wk1_ak1_s3_wgmma \
  >"$OUT/sweep_wide.log" 2>&1; grep -A4 "M=" "$OUT/sweep_wide.log" | cut -c1-160
