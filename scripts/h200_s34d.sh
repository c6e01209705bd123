#!/usr/bin/env bash
# Session 34, call D: call C found the quantizer slow (the padding chunks past the row are zeros, and x / s with a zero
# dividend takes the GPU division's slow path); after the fix, the quantizer alone (scripts/exp_act_quant.py) and the
# W4A8 / W8A8 layers at M = 1 / 16 under four launch shapes
# (HUMMING_DEBUG_ACT_QUANT=THREADS,REG_STEPS,PDL[,LATE release]).  Carry .whl.
. scripts/h200_setup.sh
call_results d
act_quant_ab 256,8,1 256,8,0,1 512,2,1,1 128,4,1,1
