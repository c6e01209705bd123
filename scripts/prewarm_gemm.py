"""Fill the JIT cache for a GPU test run in one parallel batch (device calls: the suites otherwise compile their
kernels one test at a time).  Every kernel the layers of FORMATS x SHAPES may launch below the prefill threshold
(bf16 and fp16 outputs), plus the explicit choices given on the command line for every format.

    python3 scripts/prewarm_gemm.py [--prefill-m 1073741824] [--only] [CHOICE ...]

--only: just the named choices (every format, bf16 / fp16 as the suite runs them), not the layers' defaults.
"""
import argparse
import importlib.util
import time
from pathlib import Path

import torch

from vllm_humming.jit import compile_many
from vllm_humming.ops.gemm import _spec, format_params, layer_kernel_specs
from vllm_humming.desc import WeightDesc
from vllm_humming.tuning.heuristics import KernelChoice

# the pipelines suite's format list (one source of truth: the suite the cache is filled for)
_suite = importlib.util.spec_from_file_location(
    "pipelines_suite", Path(__file__).resolve().parents[1] / "tests" / "test_gemm_pipelines_gpu.py")
_mod = importlib.util.module_from_spec(_suite)
_suite.loader.exec_module(_mod)
FORMATS = _mod.FORMATS
SHAPES = [(16400, 4096), (16390, 1088), (4100, 8192), (4000, 14336), (6000, 4096), (4000, 1088), (6144, 4096),
          (9000, 4032), (12290, 1088), (6150, 192), (1000, 2112)]

ap = argparse.ArgumentParser()
ap.add_argument("--prefill-m", type=int, default=1 << 30)
ap.add_argument("--only", action="store_true", help="only the named choices")
ap.add_argument("choices", nargs="*")
a = ap.parse_args()
arch = "sm_%d%d" % torch.cuda.get_device_capability()
arch += "a" if arch == "sm_90" else ""
specs = []
for d in FORMATS:
    dt = torch.float16 if "float16" in d else torch.bfloat16
    for n, k in ([] if a.only else SHAPES):
        specs += layer_kernel_specs(d, n, k, arch, dt, prefill_m=a.prefill_m)
    specs += [_spec(format_params(WeightDesc.parse(d)), KernelChoice.parse(c), dt, arch, d) for c in a.choices]
t = time.time()
compile_many(specs)
print(f"prewarm: {len(set(specs))} kernels in {time.time() - t:.1f} s")
