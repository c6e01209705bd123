#!/usr/bin/env bash
# Session 34, call C: why call B's W4A8 / W8A8 layers got slower with the register-batched quantizer -- the quantizer
# alone (scripts/exp_act_quant.py) and the W4A8 int4 layer at M = 1 / 16 under six launch shapes
# (HUMMING_DEBUG_ACT_QUANT=THREADS,REG_STEPS,PDL[,LATE release]).  Carry .whl.
. scripts/h200_setup.sh
call_results c
timeout 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16 --no-upstream --no-eager --cold none \
  >"$R/ab_wna16.log" 2>&1
echo "-- the W4A16 GEMM alone"; grep "] ours" "$R/ab_wna16.log" | sed 's/.*ours //' | cut -c1-60 | tr '\n' ';'; echo
act_quant_ab 256,8,1 256,8,1,1 256,8,0 256,8,0,1 128,1,0,1 512,4,1,1
