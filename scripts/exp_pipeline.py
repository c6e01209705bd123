"""Experiment (H200): how fast does each mainloop stream weights with and without its math?

    python scripts/exp_pipeline.py [--shapes 28672x4096,6144x4096] [--ms 1]

Times (graph replay over > 512 MB of copies, median of 20) each choice in CHOICES under each macro set in VARIANTS
(HUMMING_DEBUG_DEFINES; HUMMING_SKIP_MATH skips the math so the result is wrong -- timing only).
"""
import argparse
import os

import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket
from vllm_humming.tuning.sweep import time_graph

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="28672x4096,6144x4096")
ap.add_argument("--ms", default="1")
ap.add_argument("--choices", default="bt8_wn4_tm2_wk1_ak1_s3,bt8_wn4_tm2_wk1_ak2_s8_bulk,bt8_wn8_tm2_wk1_ak2_s5_bulk")
ap.add_argument("--variants", default=",HUMMING_SKIP_MATH,HUMMING_NO_L2_HINT")
ap.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
args = ap.parse_args()
desc = WeightDesc.parse(args.desc)
for shape in args.shapes.split(","):
    n, k = (int(v) for v in shape.split("x"))
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc)
    base = GemmLayer(qw, None, torch.bfloat16)
    wbytes = base.w.numel() * 4
    copies = max(1, -(-(512 << 20) // wbytes))
    for m in (int(v) for v in args.ms.split(",")):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for cs in args.choices.split(","):
            c = KernelChoice.parse(cs)
            row = []
            for var in args.variants.split(","):
                os.environ["HUMMING_DEBUG_DEFINES"] = var.replace("+", ",")
                first = base.clone(choices={m_bucket(m): c})
                layers = [first] + [first.clone() for _ in range(copies - 1)]
                t = time_graph([lambda L=L: L(x) for L in layers])
                row.append(f"{var or 'normal'}={t:.1f}us({wbytes / t / 1e6:.2f}TB/s)")
                del layers, first
            print(f"{shape} M={m} {cs:32s} " + " ".join(row), flush=True)
os.environ.pop("HUMMING_DEBUG_DEFINES", None)
