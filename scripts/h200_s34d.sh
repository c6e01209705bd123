#!/usr/bin/env bash
# Session 34, call D: call C found the quantizer slow (the padding chunks past the row are zeros, and x / s with a zero
# dividend takes the GPU division's slow path); after the fix, the quantizer alone (scripts/exp_act_quant.py) and the
# W4A8 / W8A8 layers at M = 1 / 16 under four launch shapes
# (HUMMING_DEBUG_ACT_QUANT=THREADS,REG_STEPS,PDL[,LATE release]).  Carry .whl.
. scripts/h200_setup.sh
call_results d
for cfg in 256,8,1 256,8,0,1 512,2,1,1 128,4,1,1; do
  HUMMING_DEBUG_ACT_QUANT=$cfg step 60 python3 scripts/exp_act_quant.py 2>&1 | tee -a "$R/exp_act_quant.log" | cut -c1-250
  HUMMING_DEBUG_ACT_QUANT=$cfg timeout 60 python3 -m vllm_humming.bench --formats w4a8-int4-g128-fp8,w8a8-int8 --ms 1,16 \
    --no-upstream --no-eager --cold none >"$R/ab_$cfg.log" 2>&1
  echo "-- layer $cfg"; grep "] ours" "$R/ab_$cfg.log" | sed 's/.*ours //' | cut -c1-60 | tr '\n' ';'; echo
  pack
done
