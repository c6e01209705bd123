#!/usr/bin/env bash
# Session 41, call E (any card): the direct-kernel GPU tests this session touched -- the prefetch decode now also at
# two tokens with 48 KB (test_smem_prefetch_defaults checks both budgets against the reference, graphs included), the
# wgmma weight ring's test comparing bits only for equal splits, the x16 / pass tests beside them; then, on an H200
# only, call D's sweep of the 16-token wgmma tiles; then the rest of the direct suite if time is left.  Carry .whl.
. scripts/h200_setup.sh
call_results e
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 150 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py \
  -k "smem_prefetch or weight_ring or x16 or pass or prefetch" >$R/test_touched.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_touched.log | cut -c1-200 | tail -8; pack
if grep -q H200 "$OUT/device.txt"; then
  R_E=$R; bash scripts/h200_s41d.sh; R=$R_E
fi
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py \
  -k "not (smem_prefetch or weight_ring or x16 or pass or prefetch)" >$R/test_rest.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_rest.log | cut -c1-200 | tail -8; pack
