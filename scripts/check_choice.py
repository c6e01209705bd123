"""Correctness of one execution choice against the fp32 reference, on the GPU (experiments: run it under the same
HUMMING_DEBUG_DEFINES as the sweep that timed the choice).

    python3 scripts/check_choice.py DESC CHOICE NxK[,NxK...] M[,M...]

Prints the relative error per case and exits non-zero if any is above 1e-2 or the output has NaNs (the output is
poisoned with NaN before every call)."""
import sys

import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

desc, choice = WeightDesc.parse(sys.argv[1]), KernelChoice.parse(sys.argv[2])
bad = 0
for shape in sys.argv[3].split(","):
    n, k = (int(v) for v in shape.split("x"))
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc)
    for m in (int(v) for v in sys.argv[4].split(",")):
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})
        for rep in range(3):   # repeated calls: the workspace / tickets must be left clean for the next one
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            y = layer(x, out=out)
            ref = reference_gemm(x.float(), qw)
            rel = ((y.float() - ref).norm() / ref.norm()).item()
            ok = rel < 1e-2 and not torch.isnan(y).any().item()
            bad += not ok
        print(f"{'OK ' if ok else 'BAD'} {choice.short()} {n}x{k} M={m} rel {rel:.2e} {layer.plan_info.get(m)}")
sys.exit(1 if bad else 0)
