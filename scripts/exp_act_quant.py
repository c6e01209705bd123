"""The activation quantizer alone on the GPU: CUDA-graph replay of 100 back-to-back quantize calls, µs per call, for
per-token fp8 / int8 and g128 int4 descriptions at K = 4096 / 14336 and M = 1 / 16 / 256.  The launch shape comes from
HUMMING_DEBUG_ACT_QUANT (see vllm_humming.ops.act_quant)."""
import os

import torch

from vllm_humming.desc import ActDesc
from vllm_humming.ops.act_quant import ActQuantizer

ACTS = ["a:float8_e4m3fn,s:token:float32,dynamic", "a:int8,s:token:float32,dynamic", "a:int4,s:g128:bfloat16,dynamic"]
dev = torch.device("cuda")
tag = os.environ.get("HUMMING_DEBUG_ACT_QUANT", "default")
for a in ACTS:
    q = ActQuantizer(ActDesc.parse(a), torch.bfloat16, dev, name="exp")
    cells = []
    for k in (4096, 14336):
        for m in (1, 16, 256):
            x = torch.randn(m, k, dtype=torch.bfloat16, device=dev)
            outs = [torch.empty(m, k, dtype=torch.bfloat16, device=dev) for _ in range(100)]
            q(x, outs[0])
            torch.cuda.synchronize()
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=s):
                    for o in outs:
                        q._quantize(x, o)
            g.replay(); torch.cuda.synchronize()
            ts = []
            for _ in range(20):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1000 / len(outs))
            ts.sort()
            cells.append(f"K={k} M={m}: {ts[len(ts) // 2]:.2f}")
    print(f"[{tag}] {a}: " + "; ".join(cells), flush=True)
