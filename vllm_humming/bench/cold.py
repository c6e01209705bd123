"""Cold compile time: the first prepare + call of a layer in a FRESH process with an EMPTY kernel cache.

The parent (:func:`run_cold`) starts ``python -m vllm_humming.bench.cold --impl ours|upstream --format F --shape NxK
--m M`` with ``HUMMING_CACHE_DIR`` set to a new temporary directory (both our JIT and upstream humming read that
variable), and reads one JSON line back.  A separate process is the only honest way to be cold: both JITs keep
in-process caches, and upstream reads its cache directory once per process.

In the child, imports, CUDA initialisation, the random weight and its quantization happen BEFORE the clock starts;
the clock covers ``prepare_linear`` + the first ``humming_linear`` + synchronize (ours), or ``transform()`` + the
first forward + synchronize (upstream), i.e. what a user waits for the first time a layer runs.  When our JIT
exposes counters (``vllm_humming.jit.compiler.stats()``: ``nvrtc_compiles``, ``nvrtc_seconds``, cache hits; or a
``compile_stats()`` in ``vllm_humming.jit`` / ``vllm_humming.ops.gemm``), the child also reports their delta over the
timed region: how many kernels NVRTC compiled and the seconds spent inside NVRTC.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, Optional

from .formats import FORMATS, BenchFormat, parse_shapes, shape_str

__all__ = ["run_cold", "parse_child_output", "MARKER", "main"]

MARKER = "HUMMING_BENCH_COLD "
# (module, function) returning a dict of numeric counters; the first one found is used
HOOKS = (("vllm_humming.jit.compiler", "stats"), ("vllm_humming.jit", "compile_stats"),
         ("vllm_humming.ops.gemm", "compile_stats"))
KERNEL_COUNT_KEYS = ("nvrtc_compiles", "kernels", "compiled", "num_kernels")
COMPILE_SECONDS_KEYS = ("nvrtc_seconds", "seconds", "compile_seconds")


def parse_child_output(stdout: str, returncode: int, stderr: str = "") -> Dict[str, Any]:
    """The last MARKER line of the child's stdout as a dict; an error dict when there is none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                return json.loads(line[len(MARKER):])
            except json.JSONDecodeError as e:
                return {"status": "error", "reason": f"unreadable cold-compile result: {e}"}
    tail = (stderr or stdout).strip().splitlines()[-3:]
    return {"status": "error", "reason": f"cold-compile process exited with code {returncode} and no result"
                                         + (": " + " | ".join(tail) if tail else "")}


def run_cold(impl: str, fmt: BenchFormat, shape, m: int, timeout: float = 900.0, seed: int = 0,
             runner: Callable[..., Any] = subprocess.run, python: Optional[str] = None) -> Dict[str, Any]:
    """Measure one cold compile in a child process with a fresh, empty HUMMING_CACHE_DIR (removed afterwards)."""
    cache_dir = tempfile.mkdtemp(prefix="humming-bench-cold-")
    env = dict(os.environ)
    env["HUMMING_CACHE_DIR"] = cache_dir
    env["PYTHONUNBUFFERED"] = "1"
    # the child must import this same vllm_humming, whatever the parent's working directory
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [python or sys.executable, "-m", "vllm_humming.bench.cold", "--impl", impl, "--format", fmt.name,
           "--shape", shape_str(shape), "--m", str(m), "--seed", str(seed)]
    try:
        proc = runner(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        out = parse_child_output(proc.stdout or "", proc.returncode, proc.stderr or "")
    except subprocess.TimeoutExpired:
        out = {"status": "error", "reason": f"cold compile did not finish within {timeout:.0f} s"}
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    out.setdefault("impl", impl)
    out.setdefault("shape", shape_str(shape))
    out.setdefault("m", m)
    return out


# ------------------------------------------------------------------------------------------------ child side
def _find_hook() -> Optional[Callable[[], Dict[str, Any]]]:
    import importlib

    for name, attr in HOOKS:
        try:
            mod = importlib.import_module(name)
        except Exception:
            continue
        fn = getattr(mod, attr, None)
        if callable(fn):
            return fn
    return None


def _hook_delta(before: Optional[Dict], after: Optional[Dict]) -> Optional[Dict[str, float]]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    out = {}
    for k, v in after.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            b = before.get(k, 0)
            out[k] = v - (b if isinstance(b, (int, float)) else 0)
    return out


def summarize_hook(delta: Dict[str, float]) -> Dict[str, Any]:
    """``kernels`` (NVRTC compiles) and ``compile_seconds`` (time inside the compiler) from a counter delta."""
    out: Dict[str, Any] = {}
    for key in KERNEL_COUNT_KEYS:
        if key in delta:
            out["kernels"] = int(delta[key])
            break
    for key in COMPILE_SECONDS_KEYS:
        if key in delta:
            out["compile_seconds"] = float(delta[key])
            break
    return out


def _child(impl: str, fmt: BenchFormat, shape, m: int, seed: int) -> Dict[str, Any]:
    import torch

    from .harness import classify_exception, exc_text, quantize_on_device, random_input, random_weight

    res: Dict[str, Any] = {"impl": impl, "format": fmt.name, "shape": shape_str(shape), "m": m,
                           "cache_dir": os.environ.get("HUMMING_CACHE_DIR")}
    if not torch.cuda.is_available():
        return dict(res, status="unavailable", reason="no CUDA device")
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    w = random_weight(shape, seed)
    x = random_input(m, shape[1], seed)
    if impl == "ours":
        from ..ops import humming_linear, prepare_linear

        try:
            from ..ops import gemm  # noqa: F401  (import cost is not compile cost)
        except Exception:
            pass
        hook = _find_hook()
        try:
            qw = quantize_on_device(w, fmt.weight_desc, name=f"cold.{fmt.name}")
            torch.cuda.synchronize()
            before = hook() if hook else None
            t0 = time.perf_counter()
            pl = prepare_linear(qw, fmt.act_desc, out_dtype=torch.bfloat16)
            humming_linear(x, pl)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
            after = hook() if hook else None
        except Exception as e:
            return dict(res, status=classify_exception(e), reason=exc_text(e))
        if pl.backend != "kernel":
            return dict(res, status="fallback", reason=pl.fallback_reason, seconds=seconds)
        res.update(status="ok", seconds=seconds, what="prepare_linear + first humming_linear + synchronize")
        delta = _hook_delta(before, after)
        if delta is not None:
            res["hook"] = delta
            res.update(summarize_hook(delta))
        return res

    if impl == "upstream":
        from .peers import UpstreamHumming

        adapter, reason = UpstreamHumming.load()
        if adapter is None:
            return dict(res, status="unavailable", reason=reason)
        res["version"] = adapter.version
        try:
            wcfg, icfg = adapter.configs_for(fmt)
            kwargs = dict(shape_n=shape[0], shape_k=shape[1], weight_config=wcfg, torch_dtype=torch.bfloat16)
            if icfg is not None:
                kwargs["input_config"] = icfg
            layer = adapter.layer_cls(**kwargs).to(w.device)
            layer.load_from_unquantized(w)          # upstream's quantizer: not part of the timed region
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            layer.transform()
            layer(x)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
        except Exception as e:
            status = classify_exception(e)
            if isinstance(e, AssertionError):
                status = "unsupported"
            return dict(res, status=status, reason=exc_text(e))
        res.update(status="ok", seconds=seconds, what="transform() + first forward + synchronize",
                   kernels=adapter.num_kernels(layer))
        return res
    return dict(res, status="error", reason=f"unknown impl {impl!r} (ours, upstream)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m vllm_humming.bench.cold",
                                description="one cold-compile measurement (run by vllm-humming bench)")
    p.add_argument("--impl", required=True, choices=("ours", "upstream"))
    p.add_argument("--format", required=True, choices=sorted(FORMATS))
    p.add_argument("--shape", required=True)
    p.add_argument("--m", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    shape = parse_shapes(a.shape)[0]
    try:
        res = _child(a.impl, FORMATS[a.format], shape, a.m, a.seed)
    except Exception as e:  # report, never hang the parent
        res = {"impl": a.impl, "format": a.format, "status": "error", "reason": f"{type(e).__name__}: {e}"}
    print(MARKER + json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
