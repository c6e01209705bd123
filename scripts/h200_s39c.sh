#!/usr/bin/env bash
# Session 39, call C: the wgmma decode kernel's weight stream through a warp-private shared-memory ring
# (KernelChoice.pf_ring on wgmma, "_pfr<KB>"): the M=16 wgmma kernel ran at the same speed on the H100 and the H200
# (session 37 / 39 benches: 26.6 vs 27.1 us on 28672x4096) -- bound by the bytes it keeps in flight (two atoms per
# warp in registers), not by HBM.  (1) its GPU test (bit-identical to the register ring) and the direct wgmma suite;
# (2) sweeps at M = 12 / 16 on the three layers and M = 2 / 8 on the small one, ring depths 4-8 vs the defaults.
# Carry .whl.
. scripts/h200_setup.sh
call_results c
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 100 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "wgmma" >$R/test_ring.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_ring.log | cut -c1-200 | tail -8; pack
B16=bt16_wn8_tm2_wk1_ak256_s2
SWEEP_TIMEOUT=45 sweep_case ring_small $I4 12,16 6144x4096 ${B16}_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
SWEEP_TIMEOUT=45 sweep_case ring_wide $I4 12,16 28672x4096 ${B16}_c2_direct_wgmma,${B16}_c2_pfr32_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
SWEEP_TIMEOUT=45 sweep_case ring_long $I4 12,16 4096x14336 ${B16}_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma,${B16}_pfr64_direct_wgmma
B8=bt8_wn8_tm1_wk1_ak256_s4
SWEEP_TIMEOUT=45 sweep_case ring_small8 $I4 2,8 6144x4096 ${B8}_direct_wgmma,${B8}_pfr24_direct_wgmma,${B8}_pfr32_direct_wgmma,${B8}_pfr48_direct_wgmma
