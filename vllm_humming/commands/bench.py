"""``vllm-humming bench``: time our GEMM kernels against cuBLAS bf16 and upstream humming (CUDA-graph replay).

See :mod:`vllm_humming.bench.harness` for the method.  Also runnable as ``python -m vllm_humming.bench``.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from ..bench.harness import DEFAULT_WARMUP_MS
from ..bench.formats import (DEFAULT_MS, DEFAULT_SHAPES, FORMAT_GROUPS, FORMATS, QUICK_MS, BenchArgError,
                             parse_formats, parse_ms, parse_shapes, shape_str)

_MB = 1 << 20


def _bytes(s: str) -> int:
    """``512M``, ``1G``, ``536870912`` -> bytes (K/M/G are powers of 1024)."""
    t = s.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    if t and t[-1] in "KMG":
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[t[-1]]
        t = t[:-1]
    try:
        v = float(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a byte count (e.g. 512M, 1G, 536870912)") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{s!r}: byte count must be >= 0")
    return int(v)


def _positive(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{s!r} must be >= 1")
    return v


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Time our quantized GEMM kernels against cuBLAS bf16 and the upstream humming-kernels wheel. "
                     "Each (format, N x K, M) cell: layer copies past --min-bytes, all called once in one CUDA graph, "
                     "median of --replays event-timed replays / copies = us per GEMM.")
    p.epilog = ("formats: " + ", ".join(FORMATS) + "; groups: " + ", ".join(FORMAT_GROUPS) +
                ". Example: vllm-humming bench --formats w4a16-int4-g128 --ms 1,16 --json results/bench.json")
    p.add_argument("--formats", default="all",
                   help="comma list of format names or groups (all, wna16, act); default: all")
    p.add_argument("--shapes", default=",".join(shape_str(s) for s in DEFAULT_SHAPES),
                   help="comma list of NxK weight shapes (N outputs, K inputs); default: %(default)s")
    p.add_argument("--ms", default=None,
                   help="comma list of M (tokens); default: " + ",".join(map(str, DEFAULT_MS)) +
                        " (--quick: " + ",".join(map(str, QUICK_MS)) + ")")
    p.add_argument("--replays", type=_positive, default=20,
                   help="timed graph replays per cell; the median is reported (default: 20)")
    p.add_argument("--warmup-ms", type=float, default=DEFAULT_WARMUP_MS,
                   help="device time of untimed graph replays before the timed ones (default: %(default)g, as "
                        "triton.testing.do_bench; the GPU's clock ramps up from idle after the host builds layers)")
    p.add_argument("--min-bytes", type=_bytes, default=512 * _MB,
                   help="layer copies are added until their weight bytes exceed this (default: 512M; keep it far "
                        "above the GPU's L2)")
    p.add_argument("--no-upstream", action="store_true", help="do not import or time upstream humming-kernels")
    p.add_argument("--no-eager", action="store_true", help="skip the eager (no graph) per-call timing")
    p.add_argument("--eager-calls", type=_positive, default=10,
                   help="back-to-back eager calls per sample (default: 10)")
    p.add_argument("--cold", choices=("ours", "all", "none"), default="ours",
                   help="cold-compile measurement, a fresh process per format with an empty HUMMING_CACHE_DIR: "
                        "ours (default), all (ours and upstream, ~15 s more per format), none")
    p.add_argument("--no-cold", action="store_true", help="same as --cold none")
    p.add_argument("--no-check", action="store_true",
                   help="skip the correctness check of our output against the reference before timing")
    p.add_argument("--cold-timeout", type=float, default=900.0, help="seconds allowed per cold compile (default 900)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights and inputs (default 0)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help="write every raw number, the environment and the command line to PATH (rewritten after "
                        "each format, so a cut-short run keeps what it measured)")
    p.add_argument("--report", metavar="JSON", nargs="+", default=None,
                   help="print the tables of saved --json results (several files are merged, later ones win per "
                        "cell; with --json PATH the merge is written there) and exit; needs no GPU")
    p.add_argument("--quick", action="store_true",
                   help="fewer M values (" + ",".join(map(str, QUICK_MS)) + ") and no cold compile; same method otherwise")


def build_config(args: argparse.Namespace):
    from ..bench.harness import BenchConfig

    formats = parse_formats(args.formats)
    shapes = parse_shapes(args.shapes)
    ms = parse_ms(args.ms) if args.ms else list(QUICK_MS if args.quick else DEFAULT_MS)
    return BenchConfig(formats=formats, shapes=shapes, ms=ms, replays=args.replays, min_bytes=args.min_bytes,
                       upstream=not args.no_upstream, eager=not args.no_eager, eager_calls=args.eager_calls,
                       cold=not (args.no_cold or args.quick or args.cold == "none"),
                       cold_upstream=args.cold == "all", check=not args.no_check, seed=args.seed,
                       cold_timeout=args.cold_timeout, warmup_ms=args.warmup_ms)


def report_only(paths: List[str], out_json: Optional[str]) -> int:
    import json

    from ..bench.report import format_report, merge_results, write_json

    docs = []
    for path in paths:
        try:
            with open(path) as f:
                docs.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            print(f"vllm-humming bench: cannot read results {path!r}: {e}", file=sys.stderr)
            return 2
    res = docs[0] if len(docs) == 1 else merge_results(docs, paths)
    print(format_report(res), flush=True)
    if out_json:
        write_json(res, out_json)
        print(f"\nwrote {out_json}", flush=True)
    return 0


def run(args: argparse.Namespace, argv: Optional[List[str]] = None) -> int:
    if getattr(args, "report", None):
        return report_only(args.report, args.json)
    try:
        from ..bench.harness import BenchError

        cfg = build_config(args)
        cfg.validate()
    except (BenchArgError, BenchError) as e:
        print(f"vllm-humming bench: {e}", file=sys.stderr)
        return 2

    import torch

    if not torch.cuda.is_available():
        print("vllm-humming bench: no CUDA device visible to torch; the bench times GPU kernels and needs one "
              f"(torch {torch.__version__}, CUDA build {torch.version.cuda})", file=sys.stderr)
        return 2

    from ..bench import cold as cold_mod
    from ..bench.harness import run_bench
    from ..bench.peers import load_upstream
    from ..bench.report import derive, format_report, new_results, write_json

    upstream, up_info = load_upstream(cfg.upstream)
    if cfg.upstream and upstream is None:
        print(f"[bench] upstream humming {up_info.get('reason')}", file=sys.stderr)
    elif upstream is not None and not up_info.get("version_matches"):
        print(f"[bench] note: upstream humming is {upstream.version}, the reference peer is 0.1.19", file=sys.stderr)

    argv = list(sys.argv) if argv is None else list(argv)
    results = new_results(cfg.settings(), argv, upstream=up_info)

    def checkpoint(res):
        if args.json:
            write_json(res, args.json)

    def cold_runner(impl, fmt, shape, m):
        return cold_mod.run_cold(impl, fmt, shape, m, timeout=cfg.cold_timeout, seed=cfg.seed)

    run_bench(cfg, results, upstream=upstream, cold_runner=cold_runner if cfg.cold else None,
              checkpoint=checkpoint)
    derived = derive(results)
    print(format_report(results, derived), flush=True)
    if args.json:
        write_json(results, args.json)
        print(f"\nwrote {args.json}", flush=True)
    return 1 if results.get("aborted") else 0
