#!/usr/bin/env bash
# Next session, call B (carry .whl; ~8 minutes): NVRTC's --Ofast-compile levels (HUMMING_JIT_FAST_COMPILE) on the
# defaults at M = 1 / 16 / 64 / 256 -- same-run sweeps without / with each level -- and the bench's cold compile on a
# machine that has already run other steps; forced split counts for the narrow layer's two-atom tiles at 128 / 256
# tokens (6144x4096 runs 96 blocks of 128 rows on 132 SMs with one split: 27.9 us at M=256 against upstream 27.0, session 17).
. scripts/h200_setup.sh
call_results b
C=bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct
SWEEP_TIMEOUT=60 sweep_case fast_none $I4 1,16,64,256 "$SH" "$C"
for lvl in min mid; do
  HUMMING_JIT_FAST_COMPILE=$lvl SWEEP_TIMEOUT=90 sweep_case fast_$lvl $I4 1,16,64,256 "$SH" "$C"
done
# the narrow layers at 64 tokens (6144x4096 loses 6-9 % to upstream for int4 / int3 / MXFP4: 5 split-K slices of
# 128-row tiles write 7.5 MB of fp32 partials against 12.6 MB of weights): 64-row tiles (one warpgroup) need fewer
# slices to fill the SMs
N64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk1_ak2_s6_tma_wgmma,bt64_wn4_tm2_wk1_ak2_s4_tma_wgmma
for f in "i4 $I4" "mx mxfp4"; do
  set -- $f
  SWEEP_TIMEOUT=60 sweep_case "narrow64_$1" "$2" 64 6144x4096,4096x14336 "$N64" --splits 2,3,5
done
SWEEP_TIMEOUT=60 sweep_case narrow_splits $I4 128,256 6144x4096,4096x4096 bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma --splits 1,2,3,4
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1 --no-eager --json $R/bench_cold.json >$R/bench_cold.log 2>&1
grep -E "cold compile" $R/bench_cold.log | head -3; pack
