#!/usr/bin/env bash
# Session 42, call F (any sm_90a card): the direct wgmma decode with the shared-memory prefetch before the grid wait
# ("_pf<KB>" on a wgmma choice, new): its GPU test, then sweeps against the defaults at 12 / 16 tokens (and the
# 8-token choice at 4 / 8) on the small layers, where one block per SM leaves room for the next launch.  Carry .whl.
. scripts/h200_setup.sh
call_results f
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_prefetch" \
  >$R/test_wgmma_prefetch.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_wgmma_prefetch.log | cut -c1-300 | tail -8; pack
B=bt16_wn8_tm2_wk1_ak256_s2
SWEEP_TIMEOUT=150 sweep_case pf_m16 $I4 12,16 6144x4096,4096x4096,2048x4096,4096x14336 \
  ${B}_direct_wgmma,${B}_pf40_direct_wgmma,${B}_pf56_direct_wgmma,${B}_pf72_direct_wgmma,${B}_pf80_direct_wgmma,bt16_wn4_tm2_wk1_ak256_s2_pf40_direct_wgmma
B8=bt8_wn8_tm1_wk1_ak256_s4
SWEEP_TIMEOUT=100 sweep_case pf_m8 $I4 4,8 6144x4096,4096x4096 ${B8}_direct_wgmma,${B8}_pf32_direct_wgmma,${B8}_pf48_direct_wgmma,${B8}_pf64_direct_wgmma
