#!/usr/bin/env bash
# Session 14, call A (carry .whl; ~6 minutes): (1) session 13's h200_next.sh -- the 256-row step-group wgmma kernels
# with their main loop rolled (HUMMING_DEBUG_WG_ROLLED) vs unrolled, same run, and their GPU tests under the macro;
# (2) where the wgmma kernels' time goes at M = 64 / 256: the defaults with the dequant removed (WG_SKIP_DEQUANT), the
# MMAs removed (WG_SKIP_MMA) or all math removed (SKIP_MATH: the copy pipeline, barriers and epilogue alone).
. scripts/h200_setup.sh
call_results a
export HUMMING_PREFILL_M=1000000
I4=w:uint4b8,s:g128:bfloat16
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
SWEEP_TIMEOUT=60 sweep_case unrolled $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED SWEEP_TIMEOUT=60 sweep_case rolled $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
C64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma
for mac in none HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA HUMMING_SKIP_MATH; do
  d=$mac; [ $mac = none ] && d=
  HUMMING_DEBUG_DEFINES=$d SWEEP_TIMEOUT=50 sweep_case "m256_$mac" $I4 256 28672x4096,4096x14336 $CH
  HUMMING_DEBUG_DEFINES=$d SWEEP_TIMEOUT=50 sweep_case "m64_$mac" $I4 64 6144x4096,4096x14336,28672x4096 $C64
done
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED step 150 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py \
  -k "(step_groups and not bulk) or (stream_k and tm2) or (large_m_default and (256 or 700))" >$R/gpu_tests_rolled.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_rolled.log | tail -5; pack
