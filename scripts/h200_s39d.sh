#!/usr/bin/env bash
# Session 39, call E (scripts/h200_s39c.sh cut to the device time left): M=16 sweeps of the wgmma weight ring (depths
# 4 / 6) vs the defaults on the wide and long layers, then the ring's GPU test.  Carry .whl.
. scripts/h200_setup.sh
call_results e
B16=bt16_wn8_tm2_wk1_ak256_s2
SWEEP_TIMEOUT=40 sweep_case ring_wide $I4 16 28672x4096 ${B16}_c2_direct_wgmma,${B16}_c2_pfr32_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma
SWEEP_TIMEOUT=35 sweep_case ring_long $I4 16 4096x14336 ${B16}_direct_wgmma,${B16}_pfr32_direct_wgmma,${B16}_pfr48_direct_wgmma
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 50 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "weight_ring" >$R/test_ring.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_ring.log | cut -c1-200 | tail -8; pack
