"""Fill the JIT cache for a GPU test run in one parallel batch (device calls: the suites otherwise compile their
kernels one test at a time).  Every kernel the layers of FORMATS x SHAPES may launch below the prefill threshold
(bf16 and fp16 outputs), plus the explicit choices given on the command line for every format.

    python3 scripts/prewarm_gemm.py [--prefill-m 1073741824] [CHOICE ...]
"""
import argparse
import time

import torch

from vllm_humming.jit import compile_many
from vllm_humming.ops.gemm import _spec, format_params, layer_kernel_specs
from vllm_humming.desc import WeightDesc
from vllm_humming.tuning.heuristics import KernelChoice

FORMATS = ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int", "w:uint3b4,s:g128:bfloat16",
           "w:uint8b128,s:channel:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu",
           "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:uint4,s:g32:float16,zp:float",
           "w:uint2b2,s:g256:bfloat16"]
SHAPES = [(16400, 4096), (16390, 1088), (4100, 8192), (4000, 14336), (6000, 4096), (4000, 1088), (6144, 4096),
          (9000, 4032), (12290, 1088), (6150, 192), (1000, 2112)]

ap = argparse.ArgumentParser()
ap.add_argument("--prefill-m", type=int, default=1 << 30)
ap.add_argument("choices", nargs="*")
a = ap.parse_args()
arch = "sm_%d%d" % torch.cuda.get_device_capability()
arch += "a" if arch == "sm_90" else ""
specs = []
for d in FORMATS:
    dt = torch.float16 if "float16" in d else torch.bfloat16
    for n, k in SHAPES:
        specs += layer_kernel_specs(d, n, k, arch, dt, prefill_m=a.prefill_m)
    specs += [_spec(format_params(WeightDesc.parse(d)), KernelChoice.parse(c), dt, arch, d) for c in a.choices]
t = time.time()
compile_many(specs)
print(f"prewarm: {len(set(specs))} kernels in {time.time() - t:.1f} s")
