#!/usr/bin/env bash
# Next session, call B (carry .whl; ~6 minutes): NVRTC's --Ofast-compile levels (HUMMING_JIT_FAST_COMPILE) on the
# defaults at M = 1 / 16 / 64 / 256 -- same-run sweeps without / with each level -- and the bench's cold compile on a
# machine that has already run other steps.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
SH=6144x4096,28672x4096,4096x14336
I4=w:uint4b8,s:g128:bfloat16
C=bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn4_tm2_wk2_ak256_s4_direct
SWEEP_TIMEOUT=60 sweep_case fast_none $I4 1,16,64,256 "$SH" "$C"
for lvl in min mid; do
  HUMMING_JIT_FAST_COMPILE=$lvl SWEEP_TIMEOUT=90 sweep_case fast_$lvl $I4 1,16,64,256 "$SH" "$C"
done
step 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1 --no-eager --json $R/bench_cold.json >$R/bench_cold.log 2>&1
grep -E "cold compile" $R/bench_cold.log | head -3; pack
