"""Resident blocks per SM of one GEMM case's launches, as the driver computes them (experiments).

    python3 scripts/probe_occupancy.py DESC N K MS CHOICE

Builds the layer with CHOICE forced for every M of MS (comma list), launches it once per M, and prints the layer's
plan (grid, splits, shared memory) beside cuOccupancyMaxActiveBlocksPerMultiprocessor for the launch's dynamic
shared memory -- whether two blocks (this launch's and the next PDL launch's) can share an SM."""
import sys

import torch
from cuda.bindings import driver as d

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

desc, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ms = [int(v) for v in sys.argv[4].split(",")]
ch = KernelChoice.parse(sys.argv[5])
qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc))
L = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): ch for m in ms})
for m in ms:
    L(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    torch.cuda.synchronize()
    info = L.plan_info[m]
    bk = L._buckets[m_bucket(m)]
    fn = bk.fn
    err, func = d.cuKernelGetFunction(fn._kernel)
    smem = int(info.get("smem", 0) or 0)
    err2, blocks = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, ch.threads, smem)
    print(f"M={m} {ch.short()} plan={info} driver_blocks_per_sm={blocks} ({err}, {err2})", flush=True)
