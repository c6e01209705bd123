#!/usr/bin/env bash
# Session 4, final device call C (carry .whl): the wgmma epilogue staged through shared memory (smaller kernels) --
# wgmma GPU tests and the int4 bench at M = 64 / 256.
. scripts/h200_setup.sh
step 100 python3 -m pytest -q -x -m gpu tests/test_gemm_pipelines_gpu.py -k "wgmma" >"$OUT/wgmma_tests.log" 2>&1
grep -E "^FAILED|passed|failed|Error" "$OUT/wgmma_tests.log" | tail -4
step 80 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 64,256 --cold none --no-eager --json "$OUT/bench_int4_m64_m256.json" \
  >"$OUT/bench_int4_m64_m256.log" 2>&1; grep -A4 "^Summary" "$OUT/bench_int4_m64_m256.log"; grep -E "ours|cold" "$OUT/bench_int4_m64_m256.log" | head -10
HUMMING_CACHE_DIR=$(mktemp -d) step 60 python3 - <<'PY'
import time, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.jit import compile_kernel
from vllm_humming.ops.gemm import _spec, format_params
from vllm_humming.tuning.heuristics import choose_kernel
fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
for b in (8, 16, 64, 128):
    c = choose_kernel("sm_90a", b, 4, 128)
    t = time.time(); compile_kernel(_spec(fp, c, torch.bfloat16, "sm_90a")); print(f"cold NVRTC M<={b} {c.short()}: {time.time() - t:.2f} s")
PY
