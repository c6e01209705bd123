#!/usr/bin/env bash
# Session 10, call D (carry .whl .shared_fixtures): every GPU suite on the final kernels (the bulk producer's new x
# copy plan; the session-10 default choices), the fixture models end to end, and the choices each bench shape gets.
. scripts/h200_setup.sh
call_results d
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())" | tee $R/device_torch.txt
step 120 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1; grep -E "^FAILED|passed|failed" $R/gpu_tests_gemm.log | tail -4; pack
step 330 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_direct_gpu.py tests/test_ops_gpu.py \
  tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >$R/gpu_tests_other.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_other.log | tail -6; pack
HUMMING_FIXTURES=$PWD/.shared_fixtures step 45 python3 e2e/run_fixture_models.py --device cuda --json $R/e2e.json >$R/e2e.log 2>&1
grep -E "passed|FAIL" $R/e2e.log | cut -c1-100 | tail -3; pack
HUMMING_PRINT_CHOICE=1 step 40 python3 -c "
import torch
from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
for d in ('w:uint4b8,s:g128:bfloat16', 'w:uint3b4,s:g128:bfloat16', 'w:uint8b128,s:channel:bfloat16', 'w:float4_e2m1,s:g32:float8_e8m0fnu'):
  for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)):
    L = GemmLayer(quantize_weight(torch.randn(n, k, device='cuda') * 0.02, WeightDesc.parse(d)), None, torch.bfloat16)
    for m in (1, 16, 32, 64, 256): L(torch.randn(m, k, device='cuda', dtype=torch.bfloat16))
" >$R/choices.txt 2>&1; grep -c "humming" $R/choices.txt; pack
