#!/usr/bin/env bash
# Next session, call A (carry .whl; ~9 minutes): where the M=1024 gap to upstream is (28672x4096: ours ~372 us on the
# 256-token split-K tile, upstream ~313) -- ncu on both, with the tensor-pipe and stall sections; the int3 / MXFP4
# bench at M = 256 / 1024 on session 18's rules (its step did not finish in call D); the small layer's prefill path at
# M=1024 (6144x4096: expansion 82-87 us in earlier runs vs 87.6-92.9 on the stream-K twin); NVRTC alone on the M=1
# kernel in fresh processes (the bench's cold compile read 1.84 s in session 18, 0.24 s in session 17).
. scripts/h200_setup.sh
call_results a
ncu_case bt256_m1024_w28672 $I4 28672 4096 1024 bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma
ncu_upstream up_m1024_w28672 w4a16-int4-g128 28672 4096 1024
step 200 python3 -m vllm_humming.bench --formats w3a16-int3-g128,w4a16-mxfp4 --ms 256,1024 --cold none --no-eager \
  --json $R/bench_int3_mxfp4.json >$R/bench_int3_mxfp4.log 2>&1; grep -A6 "^Summary" $R/bench_int3_mxfp4.log; pack
for pm in 1024 2048; do
  HUMMING_PREFILL_M=$pm step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1024 --shapes 6144x4096 \
    --cold none --no-eager >$R/bench_small_prefill_$pm.log 2>&1; grep -E "^1024 " $R/bench_small_prefill_$pm.log | tail -1
done; pack
for i in 1 2 3; do
  step 60 python3 -c "
import time, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.jit.compiler import build_options
from vllm_humming.jit.nvrtc import run_nvrtc
from vllm_humming.ops.gemm import _spec, format_params
from vllm_humming.tuning.heuristics import KernelChoice
spec = _spec(format_params(WeightDesc.parse('w:uint4b8,s:g128:bfloat16')), KernelChoice.parse('bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma'), torch.bfloat16, 'sm_90a')
_, opts = build_options(spec); t = time.time(); r = run_nvrtc(spec.source, 'k.cu', opts, 'cubin')
print('nvrtc M=1 kernel', round(time.time() - t, 3), 's ok', r.ok)" 2>&1 | tail -1
done | tee $R/nvrtc_cold.txt; pack
