#!/usr/bin/env bash
# Session 12, call F (carry .whl, .shared_fixtures): cold NVRTC time of the 256-row stream-K default against its
# split-K twin in both orders (call E timed it at 2.75 s, last in its list); the layer / ops GPU suites and the
# fixture models end to end on the final defaults.
. scripts/h200_setup.sh
call_results f
step 60 python3 - >$R/compile_defaults.txt 2>&1 <<'PY'
import os, tempfile, time, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.jit import compile_kernel
from vllm_humming.ops.gemm import _spec, format_params
from vllm_humming.tuning.heuristics import KernelChoice
fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
for c in ("bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma", "bt128_wn8_tm2_wk1_ak1_s4_wgmma", "bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma",
          "bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma", "bt128_wn8_tm2_wk1_ak1_s4_wgmma"):
    os.environ["HUMMING_CACHE_DIR"] = tempfile.mkdtemp()
    t = time.perf_counter(); a = compile_kernel(_spec(fp, KernelChoice.parse(c), torch.bfloat16, "sm_90a"))
    print(f"{c}: cold compile {time.perf_counter() - t:.2f} s (nvrtc {a.compile_s:.2f} s)")
PY
cat $R/compile_defaults.txt | tail -5; pack
step 240 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_ops_gpu.py -k "not overhead" >$R/gpu_tests.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests.log | tail -6; pack
OUT=$R e2e_fixtures; pack
