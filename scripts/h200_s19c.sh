#!/usr/bin/env bash
# (Never ran as a whole -- no machine was lent for ~45 minutes; its M=1 sweep (without the M=16 one) and its ncu step
# ran inline on the warm machine after call D: results/README.md, h200-2026-12-02-s19 c_* / e_*.)
# Session 19, call C (carry .whl; ~8 minutes): (1) GPU tests of the 192-row sibling in the layer's plan (the plan test,
# every format's default choices at 1024 / 1500 tokens, which now run it on 6144x4096); (2) decode blocks that cover
# a whole K range with many K-warps (in-block reduction, no split-K workspace / tickets): one atom row (16 weight
# rows) x 8 or 16 K-warps, forced to 1 split and planned -- against the defaults, M = 1 and 16.
. scripts/h200_setup.sh
call_results c
step 240 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_plan_alternatives or (test_large_m_default_choices and (1024 or 1500))" \
  >$R/gpu_sibling.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_sibling.log | tail -6; pack
SWEEP_TIMEOUT=120 sweep_case m1_kwarps $I4 1 $SH \
  bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn1_tm1_wk8_ak256_s4_direct,bt8_wn1_tm1_wk16_ak256_s4_direct,bt8_wn2_tm1_wk8_ak256_s4_direct,bt8_wn1_tm2_wk8_ak256_s4_direct,bt8_wn2_tm2_wk4_ak256_s4_direct,bt8_wn4_tm1_wk4_ak256_s4_direct \
  --splits 1
SWEEP_TIMEOUT=120 sweep_case m16_kwarps $I4 16 $SH \
  bt16_wn1_tm1_wk8_ak256_s4_direct,bt16_wn2_tm1_wk8_ak256_s4_direct,bt16_wn1_tm1_wk16_ak256_s4_direct,bt16_wn2_tm1_wk4_ak256_s4_direct \
  --splits 1
# (3) where the 256-token tile's tensor pipe idles (71.6 % busy in call A): stall reasons per SASS instruction
ncu_case bt256_m1024_w28672 $I4 28672 4096 1024 bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma
