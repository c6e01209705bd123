"""``python -m vllm_humming.bench.moe``: time whole MoE layers on the expert-indexed kernels (ops/moe_gemm.py).

For each layer shape (experts, top-k, hidden, intermediate) and token count: the layer's experts quantized to the
description, C calls with C different random routings captured in one CUDA graph (so the experts one call touches are
not the ones the call before left in the 60 MB L2: C * touched bytes >= --min-mb), median of --replays replays, per
call.  Compared in the same run with the same routings on bf16 experts through ``torch._grouped_mm`` (sorted, unpadded
token groups; the dense grouped GEMM torch ships for sm_90), where torch has it.  Reports us per layer call, TB/s of
the touched experts' weight bytes, x bf16 grouped, eager us per call (routing + both GEMMs from Python) and the
layer's cold compile.

    python -m vllm_humming.bench.moe [--desc D] [--layers E:K:H:I,...] [--tokens 1,4,16,64,256,1024] [--json F]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Dict, List, Optional

import torch

from ..desc import WeightDesc
from ..moe.fallback import activation_fn
from .harness import CudaTimer, median

# Qwen3-30B-A3B, DeepSeek-V2-Lite, Mixtral-8x7B (experts:topk:hidden:intermediate)
DEFAULT_LAYERS = "128:8:2048:768,64:6:2048:1408,8:2:4096:14336"
DEFAULT_TOKENS = "1,4,16,64,256,1024"


def _routings(t, topk, experts, calls, gen_seed):
    g = torch.Generator(device="cuda").manual_seed(gen_seed)
    out = []
    for _ in range(calls):
        ids = torch.argsort(torch.rand(t, experts, device="cuda", generator=g), dim=1)[:, :topk].to(torch.int32)
        wts = torch.softmax(torch.randn(t, topk, device="cuda", generator=g), -1)
        out.append((ids.contiguous(), wts))
    return out


def _touched_bytes(ids_list, bytes_per_expert):
    return sum(int(torch.unique(ids).numel()) * bytes_per_expert for ids, _ in ids_list) / len(ids_list)


def _grouped_bf16(x, ids, wts, w13t, w2t, experts):
    """bf16 MoE through torch._grouped_mm: tokens sorted by expert (no padding), offsets = cumulative counts."""
    t, topk = ids.shape
    flat = ids.reshape(-1).long()
    order = torch.sort(flat, stable=True).indices
    counts = torch.zeros(experts, dtype=torch.int32, device=x.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat, dtype=torch.int32))
    offs = torch.cumsum(counts, 0, dtype=torch.int32)
    xs = x.index_select(0, order // topk)
    h = torch._grouped_mm(xs, w13t, offs=offs)
    a = activation_fn("silu", h.float()).to(x.dtype)
    o = torch._grouped_mm(a, w2t, offs=offs).float() * wts.reshape(-1)[order].unsqueeze(1)
    out = torch.zeros(t, o.shape[1], dtype=torch.float32, device=x.device)
    out.index_add_(0, order // topk, o)
    return out.to(x.dtype)


def run(desc_str: str, layers: List[tuple], tokens: List[int], replays: int, min_mb: int, log=print) -> Dict:
    from ..jit import compiler
    from ..ops.moe_gemm import FusedMoeGemm
    from ..reference import quantize_weight

    desc = WeightDesc.parse(desc_str)
    timer = CudaTimer()
    dt = torch.bfloat16
    results = {"desc": desc_str, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "method": f"CUDA graph of C calls with C random routings (C * touched bytes >= {min_mb} MB), median "
                         f"of {replays} replays, per call", "records": []}
    for (experts, topk, hidden, inter) in layers:
        torch.manual_seed(experts * 7 + hidden)
        q13, q2, w13t, w2t = [], [], [], []
        for e in range(experts):
            a = torch.randn(2 * inter, hidden, device="cuda") * 0.05
            b = torch.randn(hidden, inter, device="cuda") * 0.05
            q13.append(quantize_weight(a, desc, name=f"e{e}.w13"))
            q2.append(quantize_weight(b, desc, name=f"e{e}.w2"))
            w13t.append(a.to(dt))
            w2t.append(b.to(dt))
        # [E, K, N] views of [E, N, K] storage (K-major per expert): the second operand of _grouped_mm
        w13t = torch.stack(w13t).transpose(-2, -1)
        w2t = torch.stack(w2t).transpose(-2, -1)
        qbytes = sum(q.qweight.numel() * 4 + (q.scale.numel() * q.scale.element_size() if q.scale is not None else 0)
                     + (q.zero.numel() * q.zero.element_size() if q.zero is not None else 0) for q in q13[:1] + q2[:1])
        name = f"E{experts}_top{topk}_H{hidden}_I{inter}"
        c0 = compiler.stats().get("nvrtc_compiles", 0)
        t0 = time.perf_counter()
        moe = FusedMoeGemm(q13, q2, dt, name=name)
        del q13, q2
        build_s = time.perf_counter() - t0
        for t in tokens:
            rec = {"layer": name, "tokens": t, "experts": experts, "topk": topk, "hidden": hidden, "inter": inter}
            x = torch.randn(t, hidden, device="cuda").to(dt)
            probe = _routings(t, topk, experts, 4, 1)
            touched = _touched_bytes([(i, w) for i, w in probe], qbytes)
            calls = max(2, min(64, math.ceil(min_mb * 2 ** 20 / max(touched, 1))))
            routes = _routings(t, topk, experts, calls, 2 + t)
            t1 = time.perf_counter()
            moe(x, routes[0][1], routes[0][0])            # compile (cold) + plan
            torch.cuda.synchronize()
            rec["first_call_s"] = round(time.perf_counter() - t1, 3)
            rec["calls_per_graph"] = calls
            rec["touched_mb"] = round(_touched_bytes(routes, qbytes) / 1e6, 2)
            try:
                ms = timer.graph_replays_ms(lambda: [moe(x, w, i) for i, w in routes], replays)
                us = median(ms) * 1000 / calls
                rec["ours_us"] = round(us, 2)
                rec["ours_tbps"] = round(rec["touched_mb"] * 1e6 / (us * 1e-6) / 1e12, 2)
                rec["plan"] = {k: v for k, v in moe.w13.plan_info.get((t, topk), {}).items() if k in ("choice", "grid",
                                                                                                     "splits", "rows")}
                eager = timer.eager_us(lambda: moe(x, routes[0][1], routes[0][0]), 5, 20)
                rec["ours_eager_us"] = round(median(eager), 2)
            except Exception as e:  # noqa: BLE001 - a failed case is reported, the others still run
                rec["ours_error"] = f"{type(e).__name__}: {e}"[:300]
            if hasattr(torch, "_grouped_mm"):
                try:
                    ms = timer.graph_replays_ms(lambda: [_grouped_bf16(x, i, w, w13t, w2t, experts)
                                                         for i, w in routes], replays)
                    rec["bf16_grouped_us"] = round(median(ms) * 1000 / calls, 2)
                except Exception as e:  # noqa: BLE001
                    rec["bf16_grouped_error"] = f"{type(e).__name__}: {e}"[:300]
            if "ours_us" in rec and "bf16_grouped_us" in rec:
                rec["x_bf16_grouped"] = round(rec["bf16_grouped_us"] / rec["ours_us"], 2)
            results["records"].append(rec)
            log(f"[moe-bench] {name} T={t}: " + ", ".join(f"{k}={v}" for k, v in rec.items()
                                                          if k not in ("layer", "tokens", "experts", "topk",
                                                                       "hidden", "inter")))
        results.setdefault("build_s", {})[name] = round(build_s, 2)
        results.setdefault("kernels_compiled", {})[name] = compiler.stats().get("nvrtc_compiles", 0) - c0
        moe = w13t = w2t = None      # (free this layer before the next one)
        torch.cuda.empty_cache()
    return results


def table(res: Dict) -> str:
    lines = [f"MoE layers, {res['desc']}, {res['device']}, torch {res['torch']}", res["method"], "",
             "layer                      | T    | ours us | TB/s | bf16 grouped us | x bf16 | eager us | plan (w13)",
             "---------------------------+------+---------+------+-----------------+--------+----------+-----------"]
    for r in res["records"]:
        plan = r.get("plan", {})
        lines.append(f"{r['layer']:<27}| {r['tokens']:<5}| {r.get('ours_us', 'err')!s:>7} | "
                     f"{r.get('ours_tbps', '-')!s:>4} | {r.get('bf16_grouped_us', '-')!s:>15} | "
                     f"{r.get('x_bf16_grouped', '-')!s:>6} | {r.get('ours_eager_us', '-')!s:>8} | "
                     f"{plan.get('choice', '')} {plan.get('grid', '')}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vllm_humming.bench.moe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
    ap.add_argument("--layers", default=DEFAULT_LAYERS, help="comma list of experts:topk:hidden:intermediate")
    ap.add_argument("--tokens", default=DEFAULT_TOKENS)
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--min-mb", type=int, default=512)
    ap.add_argument("--json", default="")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.moe needs a CUDA GPU", file=sys.stderr)
        return 2
    layers = [tuple(int(v) for v in s.split(":")) for s in a.layers.split(",") if s]
    tokens = [int(v) for v in a.tokens.split(",") if v]
    res = run(a.desc, layers, tokens, a.replays, a.min_mb)
    print(table(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
