"""ptxas's -v report (registers, spills, wgmma warnings) and NVRTC time of named choices for one format, on the CPU
machine (NVRTC only, no GPU) -- for a choice no layer's heuristics emit yet (scripts/ptxas_scan.py covers those).

    python scripts/ptxas_choice.py DESC CHOICE [CHOICE ...]      # e.g. w:uint4b8,s:g128:bfloat16 bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma

HUMMING_ACT_DTYPE=float16 compiles for fp16 activations (default bfloat16).
"""
import os
import re
import sys
import time

import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.jit.compiler import build_options
from vllm_humming.jit.nvrtc import run_nvrtc
from vllm_humming.ops.gemm import _spec, format_params
from vllm_humming.tuning.heuristics import KernelChoice

desc = sys.argv[1]
for c in sys.argv[2:]:
    spec = _spec(format_params(WeightDesc.parse(desc)), KernelChoice.parse(c), getattr(torch, os.environ.get("HUMMING_ACT_DTYPE", "bfloat16")), "sm_90a")
    _, opts = build_options(spec)
    t = time.time()
    r = run_nvrtc(spec.source, "k.cu", opts + ["--ptxas-options=-v"], "cubin")
    log = r.log if isinstance(r.log, str) else r.log.decode()
    print(desc, c, "ok" if r.ok else "FAIL", f"{time.time() - t:.2f}s")
    print("\n".join([ln for ln in log.splitlines() if re.search(r"registers|spill|warn|error|C75", ln)][-6:]))
