"""How many thread block clusters of a cluster-reduced GEMM can be resident at once (cuOccupancyMaxActiveClusters),
next to the clusters its launch needs: a launch that needs more runs in waves."""
import sys

import torch
from cuda.bindings import driver as d

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

desc = WeightDesc.parse(sys.argv[1])
n, k = (int(v) for v in sys.argv[2].split("x"))
m = int(sys.argv[3])
qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc)
for name in sys.argv[4].split(","):
    ch = KernelChoice.parse(name)
    layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): ch})
    layer(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    info = layer.plan_info[m]
    fn = layer._buckets[m_bucket(m)].fn
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = info["grid"]
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = ch.threads, 1, 1
    cfg.sharedMemBytes = info["smem"]
    cfg.numAttrs = 0
    err, nclu = d.cuOccupancyMaxActiveClusters(fn._handle, cfg)
    g = info["grid"]
    need = g[0] * g[1] * g[2] // max(1, ch.cluster)
    print(f"{name} {n}x{k} M={m}: grid {g} smem {info['smem']} regs {info['regs']}: clusters needed {need}, "
          f"max active {nclu if err == d.CUresult.CUDA_SUCCESS else err}")
