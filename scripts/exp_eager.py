"""Experiment (GPU): where the host time of one eager GEMM call goes.

    python scripts/exp_eager.py

Each line is the host time per call of N back-to-back calls (timed before the final synchronize; the GPU work per
call is shorter than the host work, so the launch queue never fills and the number is pure host cost).
"""
import time

import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.jit.launch import _current_raw_stream
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight


def host_us(fn, n=3000, reps=5):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        best.append((t1 - t0) * 1e6 / n)
    best.sort()
    return best[len(best) // 2]


def main():
    n, k = 6144, 4096
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    L = GemmLayer(qw, None, torch.bfloat16)
    x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
    y = L(x)
    bound = L._plan(1)[0]
    xp, yp = x.data_ptr(), y.data_ptr()
    wb = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)

    def empty():
        pass

    rows = [
        ("python call of an empty function", empty),
        ("x.new_empty((1, n))", lambda: x.new_empty((1, n))),
        ("torch.empty((1, n), device, dtype)", lambda: torch.empty((1, n), device=x.device, dtype=x.dtype)),
        ("_current_raw_stream()", lambda: _current_raw_stream(0)),
        ("x.device != L.device", lambda: x.device != L.device),
        ("bound launch (2 pointers + stream)", lambda: bound(xp, yp)),
        ("x.data_ptr()", lambda: x.data_ptr()),
        ("GemmLayer(x)  [ours, full call]", lambda: L(x)),
        ("GemmLayer(x, out=y)", lambda: L(x, out=y)),
        ("torch.mm(x, W^T) bf16 [cuBLAS]", lambda: torch.mm(x, wb.t())),
        ("torch.nn.functional.linear bf16", lambda: torch.nn.functional.linear(x, wb)),
        ("y.add_(1) [a trivial torch kernel]", lambda: y.add_(1)),
    ]
    for name, fn in rows:
        print(f"{name:40s} {host_us(fn):6.2f} us/call", flush=True)


if __name__ == "__main__":
    main()
