"""``vllm-humming compile-report``: JIT compile time per kernel and per layer, cold (empty cache) and warm.

Kernel specs come from ``vllm_humming.ops.gemm.layer_kernel_specs(desc_str, n, k, arch)`` (all kernels one layer
builds at load, e.g. one per M bucket) when that provider exists; otherwise -- or with ``--builtin`` -- from the JIT
self-test GEMM kernel (``kernels/include/humming/jit_selftest.cuh``) in its four M-bucket tile configs, one such
"layer" per requested shape.

Cold: a fresh temporary cache directory and an empty in-memory cache; each layer's kernels are built with
``compile_many`` (``--jobs`` threads), as a layer does at model load.  Warm: the same calls again with the in-memory
cache cleared, so every kernel is read back (and checksum-verified) from the disk cache.  Needs no GPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
import time
from typing import Callable, List, Optional, Tuple

DEFAULT_DESCS = "w4a16-int4-g128,mxfp4,fp8-block"
DEFAULT_SHAPES = "6144x4096,4096x4096,28672x4096,4096x14336"


def _provider() -> Optional[Callable]:
    try:
        mod = importlib.import_module("vllm_humming.ops.gemm")
    except ImportError:
        return None
    fn = getattr(mod, "layer_kernel_specs", None)
    return fn if callable(fn) else None


def _parse_shapes(s: str) -> List[Tuple[int, int]]:
    out = []
    for part in s.split(","):
        part = part.strip().lower()
        if not part:
            continue
        try:
            n, k = part.split("x")
            n, k = int(n), int(k)
        except ValueError:
            raise argparse.ArgumentTypeError(f"shape {part!r} must look like NxK, e.g. 4096x4096") from None
        if n < 1 or k < 1:
            raise argparse.ArgumentTypeError(f"shape {part!r}: N and K must be >= 1")
        out.append((n, k))
    if not out:
        raise argparse.ArgumentTypeError("no shapes given")
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = __doc__.split("\n\n")[0].strip("`").strip()
    p.add_argument("--arch", default=None,
                   help="target arch (sm_75, sm_80, sm_86, sm_89, sm_90a, sm_100a, sm_120a ...); default: this "
                        "machine's GPU, or sm_90a without one")
    p.add_argument("--jobs", type=int, default=None, help="compile threads per layer (default: CPU count)")
    p.add_argument("--descs", default=DEFAULT_DESCS,
                   help="comma list of weight descriptions / format names (default: %(default)s)")
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma list of NxK layer shapes (default: %(default)s)")
    p.add_argument("--builtin", action="store_true",
                   help="use the built-in self-test kernel even when vllm_humming.ops.gemm provides kernel specs")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the full report as JSON ('-' = stdout)")
    p.add_argument("--keep-cache", action="store_true", help="keep the temporary cold cache directory and print it")


def _collect(args, arch: str):
    """-> (source name, [(layer label, desc, n, k, specs | None, error | None)])."""
    shapes = _parse_shapes(args.shapes)
    provider = None if args.builtin else _provider()
    layers = []
    if provider is None:
        from ..jit.selftest import selftest_layer_specs

        # the self-test kernel does not depend on the layer shape: one representative layer of 4 M-bucket kernels
        try:
            specs, err = selftest_layer_specs(arch), None
        except Exception as e:  # noqa: BLE001 - reported per layer
            specs, err = None, f"{type(e).__name__}: {e}"
        layers.append(("jit_selftest (4 M-bucket tiles)", "jit_selftest", 0, 0, specs, err))
        return "builtin self-test kernel (kernels/include/humming/jit_selftest.cuh)", layers
    descs = [d.strip() for d in args.descs.split(",") if d.strip()]
    for d in descs:
        for n, k in shapes:
            try:
                specs, err = list(provider(d, n, k, arch)), None
            except Exception as e:  # noqa: BLE001 - an unsupported layer is reported, the rest still runs
                specs, err = None, f"{type(e).__name__}: {e}"
            layers.append((f"{d} {n}x{k}", d, n, k, specs, err))
    return "vllm_humming.ops.gemm.layer_kernel_specs", layers


def _pass(layers, cache_dir: str, jobs: Optional[int]):
    from ..jit import compile_many
    from ..jit.compiler import clear_memory_cache

    clear_memory_cache()
    out = []
    for label, _d, _n, _k, specs, err in layers:
        if specs is None:
            out.append({"layer": label, "error": err})
            continue
        t0 = time.perf_counter()
        try:
            arts = compile_many(specs, jobs=jobs, cache_dir=cache_dir, strict=False)
        except Exception as e:  # noqa: BLE001 - reported per layer
            out.append({"layer": label, "error": f"{type(e).__name__}: {e}"})
            continue
        wall = time.perf_counter() - t0
        kernels = [{"name": a.spec.name, "arch": a.spec.arch, "key": a.key, "from": a.source,
                    "seconds": round(a.compile_s, 5), "nvrtc_s": round(a.nvrtc_s, 4), "bytes": len(a.cubin)}
                   for a in arts]
        out.append({"layer": label, "wall_s": round(wall, 4), "kernels": kernels,
                    "nvrtc_compiles": sum(1 for a in arts if a.source == "nvrtc"),
                    "nvrtc_sum_s": round(sum(a.nvrtc_s for a in arts if a.source == "nvrtc"), 4)})
    return out


def run(args) -> int:
    from ..jit import current_arch, normalize_arch
    from ..jit.compiler import default_jobs
    from ..jit.errors import JitError
    from ..jit.nvrtc import nvrtc_version_string

    try:
        arch = normalize_arch(args.arch) if args.arch else (current_arch() or "sm_90a")
        if args.jobs is not None and args.jobs < 1:
            raise ValueError("--jobs must be >= 1")
        source, layers = _collect(args, arch)
        nvrtc = nvrtc_version_string()
    except (ValueError, argparse.ArgumentTypeError, JitError) as e:
        print(f"compile-report: {e}", file=sys.stderr)
        return 2
    jobs = args.jobs or default_jobs()
    tmp = tempfile.mkdtemp(prefix="humming-compile-report-")
    try:
        t0 = time.perf_counter()
        cold = _pass(layers, tmp, jobs)
        cold_total = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = _pass(layers, tmp, jobs)
        warm_total = time.perf_counter() - t0
    finally:
        if args.keep_cache:
            print(f"cold cache kept at {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    report = {"arch": arch, "nvrtc": nvrtc, "jobs": jobs, "kernel_source": source,
              "cold_total_s": round(cold_total, 4), "warm_total_s": round(warm_total, 4), "layers": []}
    for c, w in zip(cold, warm):
        report["layers"].append({"layer": c["layer"], "cold": c, "warm": w})

    # ---- text report (to stderr when the JSON goes to stdout)
    out = sys.stderr if args.json == "-" else sys.stdout

    def say(*a):
        print(*a, file=out)

    say(f"compile-report: arch {arch}, NVRTC {nvrtc}, {jobs} compile thread(s); kernels from {source}")
    for entry in report["layers"]:
        c, w = entry["cold"], entry["warm"]
        if "error" in c or "error" in w:
            say(f"\n[{entry['layer']}] ERROR: {(c.get('error') or w.get('error')).splitlines()[0]}")
            continue
        say(f"\n[{entry['layer']}] {len(c['kernels'])} kernel(s)")
        say(f"  {'kernel':<56} {'cold s':>8} {'nvrtc s':>8} {'warm ms':>8} {'KiB':>7}")
        for kc, kw in zip(c["kernels"], w["kernels"]):
            note = "" if kc["from"] == "nvrtc" else f" ({kc['from']})"
            say(f"  {kc['name'][:56]:<56} {kc['seconds']:>8.3f} {kc['nvrtc_s']:>8.3f} {kw['seconds'] * 1e3:>8.2f} "
                f"{kc['bytes'] / 1024:>7.1f}{note}")
        say(f"  layer total: cold {c['wall_s']:.3f} s wall ({c['nvrtc_compiles']} compiled, NVRTC sum "
            f"{c['nvrtc_sum_s']:.3f} s), warm {w['wall_s'] * 1e3:.1f} ms")
    n_err = sum(1 for e in report["layers"] if "error" in e["cold"] or "error" in e["warm"])
    say(f"\nall layers: cold {cold_total:.3f} s, warm {warm_total * 1e3:.1f} ms"
        + (f"; {n_err} layer(s) failed" if n_err else ""))
    if args.json:
        text = json.dumps(report, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 1 if n_err and n_err == len(report["layers"]) else 0
