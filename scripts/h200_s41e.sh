#!/usr/bin/env bash
# Session 41, call E (any card): the direct-kernel GPU suite on this tree -- the prefetch decode now also at two
# tokens with 48 KB (test_smem_prefetch_defaults checks both budgets against the reference, graphs included) and the
# wgmma weight ring's test comparing bits only for equal splits; then, on an H200 only, call D's sweep of the
# 16-token wgmma tiles.  Carry .whl.
. scripts/h200_setup.sh
call_results e
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 260 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py >$R/test_direct.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_direct.log | cut -c1-200 | tail -8; pack
if grep -q H200 "$OUT/device.txt"; then
  R_E=$R; bash scripts/h200_s41d.sh; R=$R_E
fi
