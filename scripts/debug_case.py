"""Run one GEMM case in isolation (for bisecting kernel faults): desc, N, K, M, choice fields."""
import sys, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

desc, n, k, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ch = KernelChoice(*[int(v) for v in sys.argv[5].split(",")]) if len(sys.argv) > 5 else None
qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc))
L = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): ch} if ch else None)
x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
y = L(x)
torch.cuda.synchronize()
ref = reference_gemm(x.float(), qw)
print("OK", desc, n, k, m, L.plan_info[m]["choice"], "rel", ((y.float() - ref).norm() / ref.norm()).item())
