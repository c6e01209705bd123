"""Tuning sweep: time candidate KernelChoices for (description, N x K, M) on the current GPU.

    python -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --shapes 6144x4096 --ms 1,16,64

Same timing method as the bench (CUDA-graph replay over layer copies exceeding 512 MB, median of replays), so the
numbers are comparable.  It prints the heuristic's choice beside the best candidate: the heuristics in
heuristics.py are tuned from this output.  Every candidate runs its GEMM kernel at any M (a forced choice overrides
the prefill path); where the layer itself would take the prefill path (M >= its prefill_m) that path is timed as one
more row, ``expand+cublas``, and counts as the heuristic's pick.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys

import torch

from ..desc import WeightDesc
from ..ops.gemm import GemmLayer
from ..reference import quantize_weight
from .heuristics import KernelChoice, has_bulk, m_bucket


# The row of the layer's prefill path (expand the weight to bf16 / fp16, then cuBLAS) at M >= its prefill_m.
PREFILL_ROW = "expand+cublas"


# SMs held idle while replays are timed (``--reserve-sms``; tuning.sm_reserve)
RESERVED_SMS = 0


def time_graph(fns, replays=20):
    """us per call of one CUDA graph calling every fn once: the bench's method (vllm_humming.bench.harness: 25 ms of
    untimed replays first -- the SM clock ramps up from idle after the host-bound compile -- then back-to-back
    replays, one event pair each, the median / len(fns)).  With RESERVED_SMS, the replays run while that many SMs
    are held (tuning.sm_reserve): only the replay stream is synchronised then."""
    from ..bench.harness import DEFAULT_WARMUP_MS, time_replays
    from .sm_reserve import reserve_sms

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fns:
            f()
            f()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns:
            f()
    torch.cuda.synchronize()
    cur = torch.cuda.current_stream()
    with reserve_sms(RESERVED_SMS):
        ts = time_replays(g.replay, lambda: torch.cuda.Event(enable_timing=True), cur.synchronize, replays,
                          warmup=1, warmup_ms=DEFAULT_WARMUP_MS)
    return statistics.median(ts) * 1000.0 / len(fns)


def bulk_candidates(bucket: int):
    """Bulk-copy pipeline (sm_90+) search space for M <= 64: token tile = the bucket (8 for M <= 8), 4-8 math warps,
    1-4 atoms per stage, ring depth 2..12 with at most ~110 KB (two blocks per SM) or ~220 KB (one)."""
    if bucket > 64:
        return []
    bt = max(8, bucket)
    out = []
    for wn, tm, wk, ak in itertools.product((2, 4, 8), (1, 2), (1, 2), (1, 2, 4)):
        warps = wn * wk
        if ak % wk or warps < 4 or warps > 8 or (bt >= 32 and tm * bt > 64):
            continue
        base = KernelChoice(bt, wn, tm, wk, ak, 2, "bulk")
        stage = base.smem_bytes(4, 1, False) // 2
        for budget in (110 << 10, 220 << 10):
            st = min(12, max(2, budget // max(1, stage)))
            c = KernelChoice(bt, wn, tm, wk, ak, st, "bulk")
            if c not in out:
                out.append(c)
    return out


def candidates(bucket: int):
    """The search space per M bucket: token tiles up to the bucket (smaller tiles trade L2 re-reads of W for more
    blocks), 4..16 warps per block, K-warps dividing the stage's atom columns."""
    out = []
    bts = {8: [8], 16: [8, 16], 32: [16, 32], 64: [16, 32, 64]}.get(bucket, [64, 128])
    for bt, wn, tm, wk, ak, st in itertools.product(bts, (2, 4, 8), (1, 2), (1, 2, 4), (1, 2, 4), (3, 4)):
        warps = wn * wk
        if ak % wk or warps < 4 or warps > 16 or (bt >= 64 and tm * bt > 128) or (bt >= 128 and tm * wn > 8):
            continue
        if bucket <= 8 and (tm == 1 or wk == 4):   # M=1: tm=2, wk<=2 won every earlier sweep
            continue
        if bucket > 8 and (st == 3 or ak == 1 or wn == 2):   # stage depth and width mattered little beyond M=1
            continue
        out.append(KernelChoice(bt, wn, tm, wk, ak, st))
    return out


class _Labeled(str):
    """A candidate timed under a debug knob (``short@r32``): prints like a choice, never equals one."""

    def short(self) -> str:
        return str(self)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
    ap.add_argument("--shapes", default="6144x4096,28672x4096,4096x14336")
    ap.add_argument("--ms", default="1,16,64")
    ap.add_argument("--max-cands", type=int, default=400)
    ap.add_argument("--top", type=int, default=5, help="ranked candidates printed per case")
    ap.add_argument("--min-bytes", type=int, default=512 << 20)
    ap.add_argument("--json", default="")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"),
                    help="activation / output dtype of the layers and of the cuBLAS baseline")
    ap.add_argument("--pipeline", default="both", choices=("both", "cp_async", "bulk"))
    ap.add_argument("--choices", default="", help="explicit candidates (short names, comma-separated) instead of "
                    "the search space, e.g. bt8_wn4_tm2_wk1_ak2_s8_bulk")
    ap.add_argument("--split-ratios", default="", help="also time every candidate under these values of "
                    "HUMMING_DEBUG_SPLIT_RATIO (split-K traffic cap; smaller = more splits), e.g. 128,32,8")
    ap.add_argument("--splits", default="", help="also time every candidate with these forced split counts "
                    "(HUMMING_DEBUG_SPLITS; split-K choices only), e.g. 1,2,4,7")
    ap.add_argument("--reserve-sms", type=int, default=0,
                    help="hold this many SMs idle while timing and plan the layers for the rest (tuning.sm_reserve, "
                    "HUMMING_DEBUG_SMS): e.g. 40 on an H100 puts each of its 92 other SMs under an H200's load")
    args = ap.parse_args(argv)
    if args.reserve_sms < 0:
        ap.error(f"--reserve-sms must be >= 0, got {args.reserve_sms}")
    global RESERVED_SMS
    RESERVED_SMS = args.reserve_sms
    if args.reserve_sms:
        import os

        total = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        os.environ["HUMMING_DEBUG_SMS"] = str(total - args.reserve_sms)
        print(f"reserving {args.reserve_sms} of {total} SMs: plans and timings on {total - args.reserve_sms}",
              flush=True)
    # variants per candidate: the heuristic plan, then (env knob, value, label suffix) overrides
    variants = [None] + [("HUMMING_DEBUG_SPLIT_RATIO", r.strip(), f"@r{r.strip()}")
                         for r in args.split_ratios.split(",") if r.strip()] \
        + [("HUMMING_DEBUG_SPLITS", v.strip(), f"@x{v.strip()}") for v in args.splits.split(",") if v.strip()]
    desc = WeightDesc.parse(args.desc)
    dtype = getattr(torch, args.dtype)
    results = []
    for shape in args.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        w = torch.randn(n, k, device="cuda") * 0.05
        qw = quantize_weight(w, desc)
        base = GemmLayer(qw, None, dtype)
        wbytes = base.w.numel() * 4
        copies = max(1, -(-args.min_bytes // wbytes))
        ref_w = w.to(dtype)
        cub = [ref_w.clone() for _ in range(copies)]
        for m in (int(v) for v in args.ms.split(",")):
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            t_cublas = time_graph([lambda wc=wc: torch.nn.functional.linear(x, wc) for wc in cub])
            bucket = m_bucket(m)
            heur = base._choice(bucket)
            rows = []
            pool = (candidates(bucket) if args.pipeline != "bulk" else []) + \
                (bulk_candidates(bucket) if args.pipeline != "cp_async" and has_bulk(base.arch) else [])
            if args.choices:
                pool = [KernelChoice.parse(c) for c in args.choices.split(",")]
                pool = [c for c in pool if c.bt <= max(8, bucket)]
            cands = [heur] + [c for c in pool if c != heur and c.runs_shape(k)][: args.max_cands]
            from ..jit import compile_many
            from ..ops.gemm import _spec

            notes = {}
            ok = []
            for c in cands:   # drop candidates that exceed shared memory before compiling
                gps = 0 if not base.fp.group else (1 if base.fp.group >= c.block_k else c.block_k // base.fp.group)
                if c.smem_bytes(desc.bits, gps, base.fp.zero_mode != 0, base.fp.group) <= base.info.smem_per_block:
                    ok.append(c)
            cands = ok
            compile_many([_spec(base.fp, c, dtype, base.arch) for c in cands])
            import os

            for c, var in itertools.product(cands, variants):
                if var is not None and (c.bulk or c.stream_k):
                    continue                  # the split knobs do not apply to persistent grids
                old = os.environ.get(var[0]) if var else None
                try:
                    if var is not None:
                        os.environ[var[0]] = var[1]   # read when a layer plans an M
                    first = base.clone(choices={bucket: c})
                    layers = [first] + [first.clone() for _ in range(copies - 1)]
                    t = time_graph([lambda L=L: L(x) for L in layers])
                    info = first.plan_info.get(m, {})
                    notes[c.short() if var is None else f"{c.short()}{var[2]}"] = \
                        f"grid {info.get('grid')} regs {info.get('regs')} smem {info.get('smem')}"
                    rows.append((t, c if var is None else f"{c.short()}{var[2]}"))
                    del layers
                except Exception as e:  # noqa: BLE001 - a candidate that does not fit just drops out
                    print(f"  skip {c.short()}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
                finally:
                    if var is not None:
                        if old is None:
                            os.environ.pop(var[0], None)
                        else:
                            os.environ[var[0]] = old
            if base.uses_prefill_path(m):
                # the layer's own path at this M is expand + cuBLAS (forced choices, above, run the kernel at any M):
                # timed as its own row, and it is what the heuristics pick
                layers = [base.clone() for _ in range(copies)]
                rows.append((time_graph([lambda L=L: L(x) for L in layers]), PREFILL_ROW))
                notes[PREFILL_ROW] = f"prefill path from M={base.prefill_m} (HUMMING_PREFILL_M)"
                del layers
                heur = _Labeled(PREFILL_ROW)
            else:
                # the layer's own plan may launch another kernel than the bucket's base choice (the one-token prefetch
                # grid, a wave-cliff twin, a tail split: ops.plan): then that plan is timed as its own row, labelled
                # with what it launched, and it is the heuristic's pick
                layers = [base.clone() for _ in range(copies)]
                t_plan = time_graph([lambda L=L: L(x) for L in layers])
                launched = layers[0].plan_info.get(m, {}).get("choice", heur.short())
                if launched != heur.short():
                    label = f"plan:{launched}"
                    info = layers[0].plan_info.get(m, {})
                    rows.append((t_plan, label))
                    notes[label] = f"grid {info.get('grid')} regs {info.get('regs')} smem {info.get('smem')}"
                    heur = _Labeled(label)
                del layers
            rows.sort(key=lambda r: r[0])
            rows = [(t, c if isinstance(c, KernelChoice) else _Labeled(c)) for t, c in rows]
            th = next(t for t, c in rows if c == heur) if any(c == heur for _, c in rows) else float("nan")
            best_t, best_c = rows[0]
            print(f"{shape} M={m}: cublas {t_cublas:.1f}us | heuristic {heur.short()} {th:.1f}us "
                  f"({t_cublas / th:.2f}x) | best {best_c.short()} {best_t:.1f}us ({t_cublas / best_t:.2f}x) "
                  f"{wbytes / best_t / 1e6:.2f}TB/s", flush=True)
            for t, c in rows[: args.top]:
                print(f"      {c.short():36s} {t:8.1f}us  {notes.get(c.short(), '')}")
            results.append({"shape": shape, "m": m, "cublas_us": t_cublas, "heuristic": heur.short(), "heuristic_us": th,
                            "ranking": [(c.short(), t) for t, c in rows]})
        del cub
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
