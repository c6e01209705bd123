"""Experiment (H200): time kernel choices under environment variants (graph replay over > 512 MB of layer copies,
median of 20), e.g. programmatic dependent launch on/off or a register budget:

    python scripts/exp_variants.py --shapes 28672x4096 --ms 1 --choices bt8_wn4_tm2_wk1_ak1_s3 \
        --variants "HUMMING_PDL=1;HUMMING_PDL=0;HUMMING_DEBUG_MIN_BLOCKS=4"

A variant is a comma-separated list of KEY=VALUE set for the layers built under it ("" = the defaults).  "heur" as a
choice means the heuristic's pick for that M.
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
ap.add_argument("--shapes", default="6144x4096,28672x4096,4096x14336")
ap.add_argument("--ms", default="1")
ap.add_argument("--choices", default="heur")
ap.add_argument("--variants", default="HUMMING_PDL=1;HUMMING_PDL=0")
ap.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
args = ap.parse_args()
desc = WeightDesc.parse(args.desc)
variants = [v.strip() for v in args.variants.split(";")]
for shape in args.shapes.split(","):
    n, k = (int(v) for v in shape.split("x"))
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc)
    base = GemmLayer(qw, None, torch.bfloat16)
    wbytes = base.w.numel() * 4
    copies = max(1, -(-(512 << 20) // wbytes))
    for m in (int(v) for v in args.ms.split(",")):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for cs in args.choices.split(","):
            if cs != "heur" and KernelChoice.parse(cs).bt > max(8, m_bucket(m)):
                continue
            row = []
            for var in variants:
                saved = dict(os.environ)
                for kv in filter(None, var.split(",")):
                    key, val = kv.split("=", 1)
                    os.environ[key.strip()] = val.strip()
                try:
                    c = base._choice(m_bucket(m)) if cs == "heur" else KernelChoice.parse(cs)
                    first = base.clone(choices={m_bucket(m): c})
                    layers = [first] + [first.clone() for _ in range(copies - 1)]
                    t = time_graph([lambda L=L: L(x) for L in layers])
                    row.append(f"{var or 'default'}={t:.1f}us({wbytes / t / 1e6:.2f}TB/s)")
                    name = c.short()
                    del layers, first
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
            print(f"{shape} M={m} {name:30s} " + " ".join(row), flush=True)
