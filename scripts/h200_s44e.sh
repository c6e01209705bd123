#!/usr/bin/env bash
# Session 44, call E (any sm_90a card; carry .whl): x in two parts for the 9-16-token wgmma decode
# (HUMMING_DEBUG_WG_XHEAD=A: the first A atoms' x, then the rest, each on its own mbarrier; the main loop starts
# when the first part lands).  Call B bounded the gain: without any x copy the wide layer took 24.9 vs 26.8 us.
# First correctness (the direct wgmma GPU tests under the define), then the sweep A/B.
. scripts/h200_setup.sh
call_results e
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_XHEAD=2 step 200 python3 -m pytest -q --tb=short -rf $par -m gpu \
  tests/test_gemm_direct_gpu.py -k "wgmma" >$R/test_xhead2.log 2>&1
grep -E "FAILED|passed|failed|rror" $R/test_xhead2.log | cut -c1-300 | tail -6; pack
C=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
for d in none HUMMING_DEBUG_WG_XHEAD=2 HUMMING_DEBUG_WG_XHEAD=4 HUMMING_DEBUG_WG_XHEAD=8; do
  HUMMING_DEBUG_DEFINES=$([ $d = none ] || echo $d) SWEEP_TIMEOUT=120 sweep_case "xhead_${d#*=}" $I4 8,16 $SH $C
done
