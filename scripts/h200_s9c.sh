#!/usr/bin/env bash
# Session 9, call C (carry .whl .shared_fixtures): the final tree -- the GPU tests of the new default choices
# (every format x M through test_gemm_gpu.py, the wide-layer decode defaults, the fixture models end to end), then
# the bench: int4 at every M (cold compile, eager) and int3 / int8 / MXFP4 at M <= 64, ours vs upstream vs cuBLAS.
# Everything lands in $OUT/c_all.tgz; stdout gets the summaries.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/c && R=/tmp/c
pack() { tar czf "$OUT/c_all.tgz" -C /tmp c; }   # after every step: a command cut at its limit still returns the files
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())" | tee $R/device_torch.txt
step 80 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py >$R/gpu_tests_gemm.log 2>&1; grep -E "^FAILED|passed|failed" $R/gpu_tests_gemm.log | tail -4; pack
step 50 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "decode_default" >$R/gpu_tests_decode_default.log 2>&1
grep -E "^FAILED|passed|failed" $R/gpu_tests_decode_default.log | tail -3; pack
HUMMING_FIXTURES=$PWD/.shared_fixtures step 45 python3 e2e/run_fixture_models.py --device cuda --json $R/e2e.json >$R/e2e.log 2>&1
grep -E "passed|FAIL" $R/e2e.log | cut -c1-100 | tail -3; pack
HUMMING_PRINT_CHOICE=1 step 30 python3 -c "
import torch
from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)):
    L = GemmLayer(quantize_weight(torch.randn(n, k, device='cuda') * 0.02, WeightDesc.parse('w:uint4b8,s:g128:bfloat16')), None, torch.bfloat16)
    for m in (1, 16, 32, 64): L(torch.randn(m, k, device='cuda', dtype=torch.bfloat16))
" >$R/choices.txt 2>&1; grep "layer" $R/choices.txt | cut -c1-130; pack
step 220 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "^\[bench\] (ours|upstream)|cold compile \(ours\):|eager" $R/bench_int4.log | sed 's/, [0-9]* copies//' | cut -c9-110
grep -A3 "^Summary" $R/bench_int4.log | tail -2; pack
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 65 python3 -m vllm_humming.bench --formats $f --ms 1,16,64 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
