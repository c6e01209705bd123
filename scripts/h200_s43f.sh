#!/usr/bin/env bash
# Session 43, call F (any sm_90a card; carry .whl): the prefetching wgmma decode as the default of int8 / fp8 channel
# and NVFP4 small layers too -- the prefetch GPU tests (the plans' own choices vs the reference), then the bench's own
# A/B (HUMMING_WG_PREFETCH=1 / 0) at 1 / 2 / 8 / 16 tokens on the small layers.
. scripts/h200_setup.sh
call_results f
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "prefetch" \
  >$R/test_prefetch.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_prefetch.log | cut -c1-300 | tail -8; pack
SHP=1024x4096,2048x4096,4096x4096,4096x2048
for v in 1 0; do
  HUMMING_WG_PREFETCH=$v timeout 150 python3 -m vllm_humming.bench --formats w8a16-int8-channel,w4a16-nvfp4,w8a16-fp8-channel \
    --ms 1,2,8,16 --shapes $SHP --no-upstream --no-eager --cold none --json $R/ab_wgpf$v.json >$R/ab_wgpf$v.log 2>&1
  echo "-- HUMMING_WG_PREFETCH=$v"; grep "] ours" $R/ab_wgpf$v.log | sed 's/.*ours //;s/w8a16-//;s/w4a16-//' | cut -c1-40 | tr '\n' ';'; echo
done
pack
