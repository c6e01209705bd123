#!/usr/bin/env bash
# Next session, call A (carry .whl; ~3 minutes): the step-group wgmma kernels (256-row tiles, the defaults at 129-1023
# tokens) with their main loop rolled (HUMMING_DEBUG_WG_ROLLED: one stage copy instead of three, NVRTC ~1.4 -> ~0.8 s
# on the CPU machine) vs the default loop unrolled by two, same run; then their GPU tests under the macro.  If the
# rolled loop is no slower, make it the default (gemm_wna16.cuh, kRolledWgmma) -- the 256-row kernels are the ones
# over the one-second compile aim.  Then scripts/h200_next_b.sh.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/a && R=/tmp/a
pack() { tar czf "$OUT/a_all.tgz" -C /tmp a; }
I4=w:uint4b8,s:g128:bfloat16
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
SWEEP_TIMEOUT=60 sweep_case unrolled $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED SWEEP_TIMEOUT=60 sweep_case rolled $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED step 120 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "(step_groups and not bulk) or (stream_k and tm2) or (large_m_default and (256 or 700))" >$R/gpu_tests_rolled.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rolled.log | tail -5; pack
