#!/usr/bin/env bash
# Session 43, call C (any sm_90a card; carry .whl): the prefetching wgmma decode as the int3 / MXFP4 default on small
# layers -- its GPU test (the plans' own choices against the reference), the prefetch GPU tests, then the bench's own
# A/B (HUMMING_WG_PREFETCH=1 / 0) at 3 / 8 / 16 tokens on the small layers.
. scripts/h200_setup.sh
call_results c
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 240 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "prefetch" \
  >$R/test_prefetch.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_prefetch.log | cut -c1-300 | tail -8; pack
SHP=1024x4096,2048x4096,4096x4096,4096x2048
for v in 1 0; do
  HUMMING_WG_PREFETCH=$v timeout 150 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 3,8,16 \
    --shapes $SHP --no-upstream --no-eager --cold none --json $R/ab_wgpf$v.json >$R/ab_wgpf$v.log 2>&1
  echo "-- HUMMING_WG_PREFETCH=$v"; grep "] ours" $R/ab_wgpf$v.log | sed 's/.*ours //' | cut -c1-60 | tr '\n' ';'; echo
done
pack
