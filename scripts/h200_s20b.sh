#!/usr/bin/env bash
# Session 20, call B (carry .whl; ~7 minutes): the session's three default changes through their GPU tests -- the
# 256-token tiles' decoupled warpgroups (bit-identical to the block-barrier loop, every format at 257 tokens), 224-row
# decode blocks on wide int4 layers at M <= 8, split-K 256-token tiles on wide layers at 129-256 tokens (the plan's
# stream-K twin on wave cliffs) -- then two balance sweeps on 28672x4096 (M=1 variants of the 224-row block; M=16
# with 224- / 112-row mma.sync decode blocks against the cluster default).  The bench follows in call C.
. scripts/h200_setup.sh
call_results b
step 100 python3 scripts/prewarm_gemm.py --prefill-m 2048 bt8_wn7_tm2_wk2_ak256_s4_direct >$R/prewarm.log 2>&1; tail -1 $R/prewarm.log
step 300 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "wg_decoupled or wide_decode_224 or test_plan_alternatives or (test_large_m_default_choices and (129 or 1024))" \
  >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_tests.log | tail -8; pack
SWEEP_TIMEOUT=70 sweep_case m1_wide $I4 1 28672x4096 \
  bt8_wn7_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn7_tm2_wk2_ak256_s3_direct
SWEEP_TIMEOUT=70 sweep_case m16_wide $I4 16 28672x4096 \
  bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt16_wn7_tm2_wk2_ak256_s4_direct,bt16_wn7_tm1_wk2_ak256_s4_direct
