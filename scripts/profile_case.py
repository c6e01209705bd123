"""Warm up one GEMM case, then launch it once more for an external profiler (ncu --launch-skip)."""
import sys, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

desc, n, k, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ch = KernelChoice.parse(sys.argv[5]) if len(sys.argv) > 5 else None
qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc))
L = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): ch} if ch else None)
x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    L(x)
torch.cuda.synchronize()
L(x)          # the profiled launch
torch.cuda.synchronize()
print("choice", L.plan_info[m]["choice"])   # (what the plan launched: at 1-2 tokens maybe an alternative)
