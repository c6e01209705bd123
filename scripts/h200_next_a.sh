#!/usr/bin/env bash
# (Session 41 removed the wgmma weight ring: the ring steps below no longer run -- kept as the record of session 40's call A.)
# Next session, call A (any card): the wgmma decode kernel's weight ring (session 39, KernelChoice.pf_ring on wgmma,
# "_pfr<KB>": never run on a GPU) -- (1) its GPU test (bit-identical to the register ring) and the direct wgmma
# suite; (2) at M = 12 / 16 ring depths 4 / 6 / 8 against the defaults on the three int4 layers; (3) what bounds the
# M=16 default (timing-only, wrong results): no dequant (HUMMING_DEBUG_WG_SKIP_DEQUANT), no MMAs
# (HUMMING_DEBUG_WG_SKIP_MMA).  The M=16 kernel ran equally fast on the H100 and the H200 (sessions 37 / 39: not
# HBM-bound); the ring tests "bytes in flight", the bounds "ALU / tensor issue".  Carry .whl.
. scripts/h200_setup.sh
call_results a
# on an H200 the int4 bench of record first (the issue's measure; the last one was session 37's)
grep -q H200 "$OUT/device.txt" && int4_record 190
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 150 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "wgmma" >$R/test_ring.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_ring.log | cut -c1-200 | tail -8; pack
# the bench's own A/B through the tuning knob (HUMMING_WG_RING_KB: the plan's 9-16-token int4 choices take the ring)
ab_int4 default; ab_int4 ring32 HUMMING_WG_RING_KB=32; ab_int4 ring48 HUMMING_WG_RING_KB=48; pack
B16=bt16_wn8_tm2_wk1_ak256_s2
SWEEP_TIMEOUT=60 sweep_case ring_wide $I4 12,16 28672x4096 ${B16}_c2_direct_wgmma,${B16}_c2_pfr32_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
SWEEP_TIMEOUT=60 sweep_case ring_long $I4 12,16 4096x14336 ${B16}_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
SWEEP_TIMEOUT=60 sweep_case ring_small $I4 12,16 6144x4096 ${B16}_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
for v in HUMMING_DEBUG_WG_SKIP_DEQUANT HUMMING_DEBUG_WG_SKIP_MMA; do
  export HUMMING_DEBUG_DEFINES=$v
  SWEEP_TIMEOUT=60 sweep_case bound_$v $I4 16 $SH ${B16}_direct_wgmma,${B16}_c2_direct_wgmma
done
unset HUMMING_DEBUG_DEFINES
B8=bt8_wn8_tm1_wk1_ak256_s4   # the 2-8-token wgmma decode (6144x4096): 4 atoms of one tile per warp in flight
SWEEP_TIMEOUT=50 sweep_case ring_small8 $I4 4,8 6144x4096 ${B8}_direct_wgmma,${B8}_pfr24_direct_wgmma,${B8}_pfr32_direct_wgmma
ncu_case ncu_m16_wide $I4 28672 4096 16 bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma   # stalls of the M=16 default (if time is left)
