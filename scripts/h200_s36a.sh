#!/usr/bin/env bash
# Session 36, call A: 2ff7b85's tree -- the int4 bench of record (M = 1 / 16 / 64 / 256, upstream in the same run),
# the GPU suites session 35 did not run on this tree (pipelines, prefill chunks, dequant, JIT, reducers, MoE,
# act-quant), the fixture models, then two A/B sweeps: the x16 twin on the wide layer at 1-2 tokens, and the
# one-split prefetch choice without x16 at 2-4 tokens on the small layer.  Carry .whl and .shared_fixtures.
. scripts/h200_setup.sh
call_results a
int4_record 170
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 290 python3 -m pytest -q $par -m gpu tests/test_gemm_pipelines_gpu.py tests/test_prefill_chunks.py \
  tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py tests/test_moe_gpu.py \
  tests/test_act_quant_gpu.py -k "not overhead" >"$R/gpu_tests.log" 2>&1
grep -E "^FAILED|passed|failed" "$R/gpu_tests.log" | tail -6; pack
e2e_fixtures; cp "$OUT"/e2e.* "$R/" 2>/dev/null; pack
SWEEP_TIMEOUT=45 sweep_case wide_x16 $I4 1,2 28672x4096 bt8_wn14_tm1_wk2_ak256_s4_direct,bt8_wn14_tm1_wk2_ak256_s4_x16_direct
SWEEP_TIMEOUT=45 sweep_case small_pf $I4 1,2,4 6144x4096 \
  bt8_wn3_tm1_wk4_ak64_s4_pf72_direct,bt8_wn3_tm1_wk4_ak64_s4_pf72_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
