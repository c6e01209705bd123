#!/usr/bin/env bash
# Session 42, call G (any sm_90a card): the prefetching wgmma decode as a default (wgmma_prefetch_decode_choice):
# its GPU tests, the bench's own A/B (HUMMING_WG_PREFETCH=1 / 0) on the small layers it serves at 3-16 tokens, and
# the 4096x4096 16-token candidates side by side.  Carry .whl.
. scripts/h200_setup.sh
call_results g
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_prefetch or smem_prefetch_defaults or wgmma_ring_depths" \
  >$R/test_wgmma_prefetch.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_wgmma_prefetch.log | cut -c1-300 | tail -8; pack
SHP=1024x4096,2048x4096,3072x4096,4096x4096,4096x2048,6144x4096
for v in 1 0; do
  HUMMING_WG_PREFETCH=$v timeout 120 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 3,4,8,12,16 --shapes $SHP \
    --no-upstream --no-eager --cold none --json $R/ab_wgpf$v.json >$R/ab_wgpf$v.log 2>&1
  echo "-- HUMMING_WG_PREFETCH=$v"; grep "] ours" $R/ab_wgpf$v.log | sed 's/.*int4-g128 //' | cut -c1-40 | tr '\n' ';'; echo
done
pack
SWEEP_TIMEOUT=80 sweep_case pf_4096 $I4 12,16 4096x4096 bt16_wn4_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_pf64_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
