#!/usr/bin/env bash
# Session 37, call E: the prefetch budget of the small layers' one-token choice (HUMMING_SMEM_PREFETCH_KB: 72 / 80 /
# 84 KB -- 12 / 12 / 14 of a 48-row block's 16 positions; 84 still fits twice in an SM), then the prefetch defaults'
# GPU test and the int4 bench of record, both with the fastest budget (the bench JSON names the kernels it timed).
# Carry .whl.
. scripts/h200_setup.sh
call_results e
PF=bt8_wn3_tm1_wk4_ak64_s4
SWEEP_TIMEOUT=45 sweep_case pf_budget $I4 1 6144x4096 ${PF}_pf72_x16_direct,${PF}_pf80_x16_direct,${PF}_pf84_x16_direct
KB=$(python3 -c "import json,re; r=json.load(open('$R/sweep_pf_budget.json'))[0]['ranking']; print(re.search(r'_pf(\d+)_', r[0][0]).group(1))" 2>/dev/null || echo 72)
export HUMMING_SMEM_PREFETCH_KB=$KB; echo "HUMMING_SMEM_PREFETCH_KB=$KB" | tee $R/pf_kb.txt
step 80 python3 -m pytest -q -m gpu tests/test_gemm_direct_gpu.py -k smem_prefetch_defaults >$R/test_pf.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/test_pf.log | tail -4; pack
int4_record 200
