#!/usr/bin/env bash
# Next session, call B (carry .whl; ~5 minutes): where the stream-K grids lose at M = 256 / 512 (NOTES.md, session 14,
# next step 1) -- stream-K vs split-K 256-row tiles with all math removed (SKIP_MATH: ring restarts + the join alone)
# and with it, at the bench shapes; the rest of the direct suite (not reached in session 14).
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
export HUMMING_PREFILL_M=1000000
I4=w:uint4b8,s:g128:bfloat16
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma
SWEEP_TIMEOUT=70 sweep_case sk_math $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH SWEEP_TIMEOUT=70 sweep_case sk_nomath $I4 256,512 28672x4096,4096x14336,6144x4096 $CH
step 200 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py >$R/gpu_tests_direct.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_direct.log | tail -4; pack
