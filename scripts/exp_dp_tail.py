"""Experiment (GPU): a split-K grid whose last wave is partly idle, run as two launches -- whole waves of tiles, then
the remaining rows as a split-K grid that fills one wave -- emulated with two layers (the head rows, the tail rows)
called back to back, against the whole layer.  Same timing method as the bench (CUDA-graph replays over > 512 MB).

    python scripts/exp_dp_tail.py --n 28672 --k 4096 --ms 448,512 --head-rows 25344 --tail-splits 1,2,3
"""
import argparse
import os

import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.sweep import time_graph


def layers_of(n, k, desc, copies, choices=None):
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc)
    base = GemmLayer(qw, None, torch.bfloat16, choices=choices)
    return [base] + [base.clone() for _ in range(copies - 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
    ap.add_argument("--n", type=int, default=28672)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--ms", default="448,512")
    ap.add_argument("--head-rows", type=int, default=25344)
    ap.add_argument("--tail-splits", default="1,2,3")
    ap.add_argument("--choice", default="", help="a kernel choice (short name) forced for every M's bucket")
    ap.add_argument("--whole-plan", default="1", help="HUMMING_DP_TAIL for the whole layer (0: one grid)")
    a = ap.parse_args()
    os.environ["HUMMING_DP_TAIL"] = "0"       # the head and tail layers are timed as single grids
    desc = WeightDesc.parse(a.desc)
    ms = [int(v) for v in a.ms.split(",")]
    choices = None
    if a.choice:
        from vllm_humming.tuning.heuristics import KernelChoice, m_bucket
        choices = {m_bucket(m): KernelChoice.parse(a.choice) for m in ms}
    copies = max(1, -(-(512 << 20) // (a.n * a.k // 2)))
    full = layers_of(a.n, a.k, desc, copies, choices)
    head = layers_of(a.head_rows, a.k, desc, copies, choices)
    tails = {}
    for s in a.tail_splits.split(","):
        tails[s] = layers_of(a.n - a.head_rows, a.k, desc, copies, choices)
    for m in ms:
        x = torch.randn(m, a.k, device="cuda", dtype=torch.bfloat16)
        os.environ["HUMMING_DP_TAIL"] = a.whole_plan
        for L in full:
            L(x)                           # plans M (with or without the split tail)
        os.environ["HUMMING_DP_TAIL"] = "0"
        t_full = time_graph([lambda L=L: L(x) for L in full])
        t_head = time_graph([lambda L=L: L(x) for L in head])
        line = [f"{a.n}x{a.k} M={m}: whole {t_full:.1f} {full[0].plan_info.get(m, {}).get('grid')} | head "
                f"{a.head_rows} rows {t_head:.1f} {head[0].plan_info.get(m, {}).get('grid')}"]
        for s, tl in tails.items():
            os.environ["HUMMING_DEBUG_SPLITS"] = s
            for L in tl:
                L(x)                       # plans M under the forced split count
            os.environ.pop("HUMMING_DEBUG_SPLITS")
            t_tail = time_graph([lambda L=L: L(x) for L in tl])
            fns = []
            for h, t in zip(head, tl):
                fns += [lambda h=h: h(x), lambda t=t: t(x)]
            t_pair = time_graph(fns) * 2   # time_graph divides by the number of calls: two per layer
            line.append(f"tail x{s} {t_tail:.1f} {tl[0].plan_info.get(m, {}).get('grid')} head+tail {t_pair:.1f} "
                        f"({t_pair / t_full:.3f} of whole)")
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()
