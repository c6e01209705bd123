"""``vllm-humming plan``: the launch plan a GEMM layer makes for each M -- kernel, grid, K splits, split plans,
shared memory, registers, resident blocks and waves -- computed without a GPU.

The kernels a plan asks for are compiled with NVRTC for ``--arch`` (through the JIT cache) and their registers and
static shared memory read from the cubins, so the plan is the one ``GemmLayer`` makes on such a GPU with the same
NVRTC (what ``HUMMING_PRINT_CHOICE=1`` prints there, plus the waves).  The SM count defaults to the arch's table
entry (132 for sm_90a, an H200 / H100 SXM); pass ``--sms`` for another part.  HUMMING_* experiment variables apply
as on the GPU.
"""

from __future__ import annotations

import argparse
import json
import sys

from .compile_report import _parse_shapes

DEFAULT_SHAPES = "6144x4096,28672x4096,4096x14336"
DEFAULT_MS = "1,16,64,256,512,1024"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = __doc__.split("\n\n")[0].strip("`").strip()
    p.add_argument("--desc", default="w4a16-int4-g128",
                   help="weight description or bench format name (default: %(default)s)")
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma list of NxK layer shapes (default: %(default)s)")
    p.add_argument("--ms", default=DEFAULT_MS,
                   help="comma list of token counts, or 'all': every M up to the prefill threshold, consecutive M "
                        "with the same plan printed as one range (default: %(default)s)")
    p.add_argument("--arch", default="sm_90a", help="target arch (default: %(default)s)")
    p.add_argument("--sms", type=_sm_count, default=0, help="SM count (default: the arch's, 132 for sm_90a)")
    p.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"), help="activation dtype")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the plans as JSON ('-' = stdout)")


def _sm_count(v: str) -> int:
    if not v.strip().isdigit() or not 1 <= int(v) <= 1024:
        raise argparse.ArgumentTypeError(f"--sms must be an SM count from 1 to 1024, got {v!r}")
    return int(v)


def _weight_desc(name: str) -> str:
    """A bench format name (w4a16-int4-g128 ...) -> its weight description; anything else is taken as one."""
    from ..bench.formats import FORMATS

    table = FORMATS if isinstance(FORMATS, dict) else {f.name: f for f in FORMATS}
    f = table.get(name)
    return f.weight if f is not None else name


def layer_plans(desc: str, n: int, k: int, ms, arch: str, sms: int = 0, dtype=None, cache_dir=None):
    """[(m, plan info dict or None for the prefill path, [per-launch dicts], one-line description)] for one layer, and
    its planner.  ``ms`` None: every M below the layer's prefill threshold."""
    import torch

    from ..ops.gemm import OfflinePlanner
    from ..ops.plan import describe
    from ..tuning.heuristics import m_bucket

    planner = OfflinePlanner(_weight_desc(desc), n, k, arch, sms, dtype or torch.bfloat16, cache_dir=cache_dir)
    info = planner.info
    out = []
    for m in (range(1, planner.prefill_m) if ms is None else ms):
        lp = planner.plan(m)
        if lp is None:
            out.append((m, None, [], "expand + cuBLAS"))
            continue
        launches = []
        for pl in lp.launches:
            fit = planner.fit(m_bucket(m), pl.tag)
            resident = max(1, min(fit.blocks_by_regs, info.smem_per_sm // (pl.smem + 1024)))
            blocks = pl.grid[0] * pl.grid[1] * pl.grid[2]
            launches.append({"choice": pl.choice.short(), "grid": list(pl.grid), "atoms_per_split": pl.atoms_per_split,
                             "smem": pl.smem, "regs": fit.regs, "blocks_per_sm": resident, "blocks": blocks,
                             "waves": round(blocks / (info.sms * resident), 3), "workspace_bytes": 4 * pl.ws_numel,
                             "flags": pl.flags})
        out.append((m, dict(lp.info), launches, describe(lp)))
    return out, planner


def run(args) -> int:
    import torch

    from ..bench.formats import BenchArgError, parse_ms
    from ..desc import DescError

    collapse = args.ms.strip() == "all"
    try:
        shapes = _parse_shapes(args.shapes)
        ms = None if collapse else parse_ms(args.ms)
    except (argparse.ArgumentTypeError, BenchArgError) as e:
        print(f"vllm-humming plan: {e}", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    report = {"desc": args.desc, "arch": args.arch, "dtype": args.dtype, "layers": []}
    for n, k in shapes:
        try:
            plans, planner = layer_plans(args.desc, n, k, ms, args.arch, args.sms, dtype)
        except (DescError, ValueError) as e:
            print(f"vllm-humming plan: {args.desc} {n}x{k}: {e}", file=sys.stderr)
            return 2
        print(f"[{args.desc} {n}x{k}] {args.arch}, {planner.info.sms} SMs, {args.dtype}; prefill (expand + cuBLAS) "
              f"from M={planner.prefill_m}")
        layer = {"n": n, "k": k, "sms": planner.info.sms, "prefill_m": planner.prefill_m, "plans": []}
        lines = []    # (m, text)
        for m, info, launches, text in plans:
            if info is None:
                lines.append((m, text))
                layer["plans"].append({"m": m, "prefill": True})
                continue
            waves = " + ".join(f"{x['blocks']} blocks / {x['blocks_per_sm']} per SM = {x['waves']:.2f} waves"
                               for x in launches)
            lines.append((m, f"{text}\n         {waves}; smem {launches[0]['smem']} B, {launches[0]['regs']} regs"))
            layer["plans"].append({"m": m, "info": info, "launches": launches})
        i = 0
        while i < len(lines):
            j = i
            while collapse and j + 1 < len(lines) and lines[j + 1][1] == lines[i][1]:
                j += 1
            label = f"M={lines[i][0]}" if j == i else f"M={lines[i][0]}-{lines[j][0]}"
            print(f"  {label}: {lines[i][1]}")
            i = j + 1
        report["layers"].append(layer)
    if args.json:
        text = json.dumps(report, indent=1, default=list)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0
