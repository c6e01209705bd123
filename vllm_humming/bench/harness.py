"""The measurement: cold-L2 CUDA-graph replay of many layer copies, plus eager per-call time.

Method (the numbers the project is judged by), for one implementation, one weight shape N x K and one M:

1. quantize ONE random bf16 [N, K] matrix to the format (ours: :func:`vllm_humming.reference.quantize_weight`; the
   upstream peer quantizes the same bf16 matrix with its own loader; cuBLAS keeps it bf16);
2. make ``c`` copies of the layer, the smallest number whose weight bytes together exceed ``min_bytes`` (512 MB by
   default, far above the H200's ~60 MB L2), so every call streams its weight from HBM;
3. x = a random bf16 [M, K] matrix (never zeros), shared by the copies;
4. warm up (every copy called twice on a side stream: this also JIT-compiles), then capture ONE CUDA graph that
   calls every copy once;
5. warm up the graph for at least ``warmup_ms`` of device time (25 ms by default, triton.testing.do_bench's
   convention): the first milliseconds after a layer is built run slower on the H100 / H200 (session 36 found the
   large layers' first M=1 replays 11-14 % slower for 1-4 ms, then steady -- with 3 warm-up replays the median of
   20 sometimes landed in that phase);
6. replay it ``replays`` times (20 by default) back to back, each replay timed with its own pair of CUDA events;
   us per GEMM = median replay time / c.

TB/s is the weight bytes of one copy (packed codes + scales + zero points + second-level scales, bias excluded) per
that time.  Eager time is host + device per call of ONE layer called back to back without a graph (``calls`` calls
between two synchronizations, median over ``replays`` such runs); it shows launch overhead.

Everything that touches CUDA goes through a timer object (:class:`CudaTimer`), so the bookkeeping here is tested on
CPU with a fake timer.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .formats import BenchFormat, shape_str

__all__ = ["BenchConfig", "BenchError", "FatalBenchError", "Case", "CudaTimer", "copies_for", "tensor_bytes",
           "weight_bytes", "median", "geomean", "time_replays", "eager_samples_us", "build_ours", "build_cublas",
           "measure_case", "run_bench", "replicate", "random_weight", "random_input", "CHECK_TOL"]

MB = 1 << 20
DEFAULT_MIN_BYTES = 512 * MB
# device time of graph replays run untimed before the timed ones (triton.testing.do_bench's default warm-up)
DEFAULT_WARMUP_MS = 25.0

# relative Frobenius error of our kernel vs the plain-torch reference on the same quantized weight
CHECK_TOL = {"bf16": 2e-2, "quantized": 5e-2}


class BenchError(RuntimeError):
    """The bench cannot run as asked (no GPU, bad option); the message says why."""


class FatalBenchError(BenchError):
    """CUDA is unusable after an error (sticky fault): stop, keep what was measured (``record``: the failed cell)."""

    def __init__(self, msg: str, record: Optional[Dict[str, Any]] = None):
        super().__init__(msg)
        self.record = record


# ------------------------------------------------------------------------------------------------ small math
def copies_for(bytes_per_copy: int, min_bytes: int) -> int:
    """Smallest number of copies whose weight bytes together EXCEED ``min_bytes`` (at least 1)."""
    if bytes_per_copy <= 0:
        raise BenchError(f"a layer copy must hold weight bytes, got {bytes_per_copy}")
    if min_bytes < 0:
        raise BenchError(f"--min-bytes must be >= 0, got {min_bytes}")
    return min_bytes // bytes_per_copy + 1


def tensor_bytes(t) -> int:
    return 0 if t is None else int(t.numel()) * int(t.element_size())


def weight_bytes(qw) -> int:
    """Bytes of a canonical :class:`QuantizedWeight` a GEMM reads: codes + scales + zero points + scale2."""
    return sum(tensor_bytes(t) for t in (qw.qweight, qw.scale, qw.zero, qw.scale2))


def median(xs: Sequence[float]) -> float:
    if not xs:
        raise BenchError("median of no samples")
    return float(statistics.median(xs))


def geomean(xs: Sequence[float]) -> Optional[float]:
    xs = [float(x) for x in xs if x is not None]
    if not xs or any(x <= 0 for x in xs):
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def tbps(nbytes: int, us: float) -> Optional[float]:
    return None if not us or us <= 0 else nbytes / (us * 1e-6) / 1e12


# ------------------------------------------------------------------------------------------------ timing primitives
def time_replays(replay: Callable[[], None], new_event: Callable[[], Any], synchronize: Callable[[], None],
                 replays: int, warmup: int = 0, warmup_ms: float = 0.0, max_warmup: int = 2000) -> List[float]:
    """Run ``warmup`` untimed replays, then more until about ``warmup_ms`` of device time has passed (the count
    estimated from three replays timed together, at most ``max_warmup``), then ``replays`` timed replays back to
    back; one event pair per timed replay; ms each."""
    if replays < 1:
        raise BenchError(f"replays must be >= 1, got {replays}")
    for _ in range(warmup):
        replay()
    if warmup_ms > 0:
        start, end = new_event(), new_event()
        start.record()
        for _ in range(3):
            replay()
        end.record()
        synchronize()
        est = max(float(start.elapsed_time(end)) / 3, 1e-6)
        for _ in range(min(max_warmup, max(0, math.ceil((warmup_ms - 3 * est) / est)))):
            replay()
    pairs = []
    for _ in range(replays):
        start, end = new_event(), new_event()
        start.record()
        replay()
        end.record()
        pairs.append((start, end))
    synchronize()
    return [float(s.elapsed_time(e)) for s, e in pairs]


def eager_samples_us(call: Callable[[], Any], synchronize: Callable[[], None], clock: Callable[[], float],
                     reps: int, calls: int, warmup: int = 3) -> List[float]:
    """Host + device time per call: ``calls`` back-to-back calls between synchronizations, ``reps`` samples (us)."""
    if reps < 1 or calls < 1:
        raise BenchError(f"eager timing needs reps >= 1 and calls >= 1, got {reps}, {calls}")
    for _ in range(warmup):
        call()
    synchronize()
    out = []
    for _ in range(reps):
        t0 = clock()
        for _ in range(calls):
            call()
        synchronize()
        out.append((clock() - t0) * 1e6 / calls)
    return out


class CudaTimer:
    """The real timer: CUDA-graph capture + event-timed replays, and eager wall-clock timing."""

    def __init__(self, warmup_calls: int = 2, warmup_replays: int = 3, eager_warmup: int = 3,
                 warmup_ms: float = DEFAULT_WARMUP_MS):
        import torch

        self.torch = torch
        self.warmup_calls = warmup_calls
        self.warmup_replays = warmup_replays
        self.warmup_ms = warmup_ms
        self.eager_warmup = eager_warmup

    def graph_replays_ms(self, fn: Callable[[], None], replays: int) -> List[float]:
        torch = self.torch
        # torch requires warm-up on a side stream before capture (lazy init, cuBLAS workspaces, our JIT compiles)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(self.warmup_calls):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        torch.cuda.synchronize()
        try:
            return time_replays(graph.replay, lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                                replays, self.warmup_replays, self.warmup_ms)
        finally:
            del graph

    def eager_us(self, call: Callable[[], Any], reps: int, calls: int) -> List[float]:
        return eager_samples_us(call, self.torch.cuda.synchronize, time.perf_counter, reps, calls, self.eager_warmup)

    def healthy(self) -> Optional[str]:
        """None if CUDA still works after an exception, else the error text (sticky errors poison the context)."""
        try:
            self.torch.cuda.synchronize()
            self.torch.empty(1, device="cuda").add_(1)
            self.torch.cuda.synchronize()
            return None
        except Exception as e:  # pragma: no cover - needs a broken GPU context
            return f"{type(e).__name__}: {e}"

    def free(self):
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


# ------------------------------------------------------------------------------------------------ cases
@dataclass
class Case:
    """One implementation of one (format, shape), replicated past ``min_bytes``; ``copies`` are callables f(x)."""

    impl: str                                  # "ours" | "cublas" | "upstream"
    fmt: Optional[str]                         # format name (None for cuBLAS)
    shape: Tuple[int, int]
    status: str = "ok"                         # ok | fallback | unsupported | unavailable | error
    reason: str = ""
    bytes_per_copy: int = 0
    copies: List[Callable] = field(default_factory=list, repr=False)
    info: Dict[str, Any] = field(default_factory=dict)
    # ours: the first copy's M -> launch plan (ops.gemm.GemmLayer.plan_info: kernel choice, grid, splits), so every
    # record names the kernel it timed
    plans: Optional[Dict[int, dict]] = field(default=None, repr=False)

    def record(self) -> Dict[str, Any]:
        return {"format": self.fmt, "impl": self.impl, "shape": shape_str(self.shape), "status": self.status,
                "reason": self.reason, "bytes_per_copy": self.bytes_per_copy, "copies": len(self.copies),
                "info": self.info}

    def release(self):
        self.copies.clear()


def replicate(make_one: Callable[[], Any], first: Any, bytes_per_copy: int, min_bytes: int) -> List[Any]:
    """``first`` plus fresh copies from ``make_one`` until the copies' weight bytes exceed ``min_bytes``."""
    n = copies_for(bytes_per_copy, min_bytes)
    return [first] + [make_one() for _ in range(n - 1)]


def classify_exception(e: BaseException) -> str:
    from ..desc import DescError

    if isinstance(e, (DescError, NotImplementedError)):
        return "unsupported"
    return "error"


def exc_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) <= 500 else text[:497] + "..."


def random_weight(shape: Tuple[int, int], seed: int, device="cuda"):
    """The ONE random bf16 [N, K] matrix a (shape) is benchmarked with; the same for every implementation."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed * 1_000_003 + shape[0] * 7 + shape[1])
    w = torch.randn(shape, generator=g, device=device, dtype=torch.float32) * 0.02
    return w.to(torch.bfloat16)


def random_input(m: int, k: int, seed: int, device="cuda"):
    """Random bf16 [M, K] activations with no exact zeros (a zero input would flatter some kernels)."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed * 7_919 + m * 31 + k)
    x = torch.randn((m, k), generator=g, device=device, dtype=torch.float32).to(torch.bfloat16)
    return torch.where(x == 0, torch.full_like(x, 1e-3), x)


def _clone_qw(qw):
    from ..qweight import QuantizedWeight

    c = lambda t: None if t is None else t.clone()
    return QuantizedWeight(qw.desc, qw.shape, c(qw.qweight), c(qw.scale), c(qw.zero), c(qw.scale2), c(qw.k_perm),
                           c(qw.bias), qw.name)


def quantize_on_device(w, desc, name: str):
    """Quantize the bf16 matrix where it lives (GPU); fall back to CPU then move, if the device path fails."""
    from ..reference import quantize_weight

    try:
        return quantize_weight(w, desc, name=name)
    except Exception:
        if w.device.type == "cpu":
            raise
        return quantize_weight(w.cpu(), desc, name=name).to(w.device)


def build_ours(fmt: BenchFormat, w, min_bytes: int) -> Tuple[Case, Any]:
    """Our prepared layers: quantize ``w`` once, then one ``prepare_linear`` per copy (each on its own tensors).

    Returns (case, qw) -- ``qw`` is the canonical weight (kept for the correctness check).  A layer whose
    ``backend`` is not "kernel" is reported as "fallback" and not timed.
    """
    import torch

    n, k = w.shape
    case = Case("ours", fmt.name, (n, k))
    try:
        from ..ops import humming_linear, prepare_linear

        desc, act = fmt.weight_desc, fmt.act_desc
        qw = quantize_on_device(w, desc, name=f"bench.{fmt.name}.{n}x{k}")
        case.bytes_per_copy = weight_bytes(qw)

        def make_one():
            return prepare_linear(_clone_qw(qw), act, out_dtype=torch.bfloat16)

        first = make_one()
        case.info["backend"] = first.backend
        if first.backend != "kernel":
            case.status, case.reason = "fallback", first.fallback_reason or "prepare_linear chose the torch fallback"
            return case, qw
        layers = replicate(make_one, first, case.bytes_per_copy, min_bytes)
        kernel = getattr(first, "kernel", None)
        for attr in ("describe", "kernel_info"):
            fn = getattr(kernel, attr, None)
            if callable(fn):
                try:
                    case.info["kernel"] = fn()
                except Exception:
                    pass
                break
        case.copies = [(lambda x, pl=pl: humming_linear(x, pl)) for pl in layers]
        case.plans = getattr(kernel, "plan_info", None)
        return case, qw
    except Exception as e:
        case.status, case.reason = classify_exception(e), exc_text(e)
        case.copies = []
        return case, None


def build_cublas(w, min_bytes: int) -> Case:
    """cuBLAS bf16: copies of the bf16 weight, called with ``torch.nn.functional.linear``."""
    import torch

    n, k = w.shape
    case = Case("cublas", None, (n, k))
    case.bytes_per_copy = tensor_bytes(w)
    ws = replicate(lambda: w.clone(), w.clone(), case.bytes_per_copy, min_bytes)
    case.copies = [(lambda x, wi=wi: torch.nn.functional.linear(x, wi)) for wi in ws]
    return case


def check_ours(case: Case, qw, act, x) -> Dict[str, Any]:
    """Relative Frobenius error of our first copy vs the plain-torch reference on the same quantized weight."""
    from ..reference import reference_gemm

    y = case.copies[0](x).float()
    try:
        ref = reference_gemm(x, qw, act).float()
    except Exception:  # the plain-torch reference may not run on this device for every dtype: use the CPU
        ref = reference_gemm(x.cpu(), qw.to("cpu"), act).float().to(y.device)
    rel = float((y - ref).norm() / ref.norm().clamp_min(1e-30))
    tol = CHECK_TOL["quantized" if act.quantized else "bf16"]
    return {"m": int(x.shape[0]), "rel_err": rel, "tol": tol, "ok": bool(rel <= tol and math.isfinite(rel))}


# ------------------------------------------------------------------------------------------------ one measurement
def measure_case(case: Case, x, m: int, timer, replays: int, eager: bool, eager_calls: int) -> Dict[str, Any]:
    """Time ``case`` at this M; never raises for a kernel failure (status "error"), only for a dead GPU."""
    rec: Dict[str, Any] = {"format": case.fmt, "impl": case.impl, "shape": shape_str(case.shape), "m": int(m),
                           "status": case.status, "reason": case.reason, "bytes_per_copy": case.bytes_per_copy,
                           "copies": len(case.copies)}
    if case.status != "ok":
        return rec
    copies = case.copies

    def call_all():
        for c in copies:
            c(x)

    try:
        samples = timer.graph_replays_ms(call_all, replays)
        us = median(samples) * 1e3 / len(copies)
        rec.update(us=us, tbps=tbps(case.bytes_per_copy, us), replay_ms=samples)
        plan = (case.plans or {}).get(int(m))
        if plan:
            rec["kernel"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in plan.items()}
    except Exception as e:
        rec.update(status=classify_exception(e), reason=exc_text(e))
        _raise_if_dead(timer, e, rec)
        return rec
    if eager:
        try:
            first = copies[0]
            samples = timer.eager_us(lambda: first(x), replays, eager_calls)
            rec.update(eager_us=median(samples), eager_us_samples=samples)
        except Exception as e:
            rec.update(eager_error=exc_text(e))
            _raise_if_dead(timer, e, rec)
    return rec


def _raise_if_dead(timer, e: BaseException, record: Optional[Dict[str, Any]] = None):
    health = getattr(timer, "healthy", None)
    bad = health() if callable(health) else None
    if bad:
        raise FatalBenchError(f"CUDA context unusable after {exc_text(e)} ({bad}); stopping", record) from e


# ------------------------------------------------------------------------------------------------ the whole run
@dataclass
class BenchConfig:
    formats: List[BenchFormat]
    shapes: List[Tuple[int, int]]
    ms: List[int]
    replays: int = 20
    min_bytes: int = DEFAULT_MIN_BYTES
    upstream: bool = True
    eager: bool = True
    eager_calls: int = 10
    cold: bool = True
    cold_upstream: bool = False
    check: bool = True
    seed: int = 0
    cold_timeout: float = 900.0
    warmup_ms: float = DEFAULT_WARMUP_MS

    def validate(self):
        if self.replays < 1:
            raise BenchError(f"--replays must be >= 1, got {self.replays}")
        if self.min_bytes < 0:
            raise BenchError(f"--min-bytes must be >= 0, got {self.min_bytes}")
        if self.warmup_ms < 0:
            raise BenchError(f"--warmup-ms must be >= 0, got {self.warmup_ms}")
        if self.eager_calls < 1:
            raise BenchError(f"--eager-calls must be >= 1, got {self.eager_calls}")
        if not self.formats or not self.shapes or not self.ms:
            raise BenchError("nothing to measure: formats, shapes and ms must be non-empty")

    def settings(self) -> Dict[str, Any]:
        return {"formats": [f.name for f in self.formats], "shapes": [shape_str(s) for s in self.shapes],
                "ms": list(self.ms), "replays": self.replays, "warmup_ms": self.warmup_ms, "min_bytes": self.min_bytes,
                "upstream": self.upstream, "eager": self.eager, "eager_calls": self.eager_calls, "cold": self.cold,
                "cold_upstream": self.cold_upstream,
                "check": self.check, "seed": self.seed, "statistic": "median"}


def _log_default(msg: str):
    print(msg, file=sys.stderr, flush=True)


def run_bench(cfg: BenchConfig, results: Dict[str, Any], *, timer=None, upstream=None, cold_runner=None,
              log: Callable[[str], None] = _log_default, checkpoint: Optional[Callable[[Dict], None]] = None,
              make_weight: Callable = random_weight, make_input: Callable = random_input,
              ours_builder: Callable = build_ours, cublas_builder: Callable = build_cublas,
              free: Optional[Callable[[], None]] = None) -> Dict[str, Any]:
    """Fill ``results`` (see :func:`vllm_humming.bench.report.new_results`) in place and return it.

    ``upstream`` is an adapter with ``build_case(fmt, w, min_bytes) -> Case`` (or None: upstream not measured);
    ``cold_runner(impl, fmt, shape, m) -> dict`` measures cold compile (or None).  Partial results are kept when
    a FatalBenchError stops the run (``results["aborted"]``); ``checkpoint(results)`` runs after the cuBLAS pass
    and after each format.
    """
    cfg.validate()
    timer = timer if timer is not None else CudaTimer(warmup_ms=cfg.warmup_ms)
    free = free or getattr(timer, "free", None) or (lambda: None)
    records: List[Dict] = results.setdefault("records", [])
    cases: List[Dict] = results.setdefault("cases", [])
    cold: Dict[str, Dict] = results.setdefault("cold_compile", {})

    def measure_all(case: Case, label: str):
        for m in cfg.ms:
            x = make_input(m, case.shape[1], cfg.seed)
            try:
                rec = measure_case(case, x, m, timer, cfg.replays, cfg.eager, cfg.eager_calls)
            except FatalBenchError as e:
                if e.record is not None:
                    records.append(e.record)
                raise
            records.append(rec)
            log(_progress_line(label, rec))
            del x

    try:
        # 1) cuBLAS bf16 baseline, once per shape (it does not depend on the format)
        for shape in cfg.shapes:
            w = make_weight(shape, cfg.seed)
            try:
                case = cublas_builder(w, cfg.min_bytes)
            except Exception as e:
                case = Case("cublas", None, shape, status="error", reason=exc_text(e))
                _raise_if_dead(timer, e)
            cases.append(case.record())
            measure_all(case, f"cuBLAS bf16 {shape_str(shape)}")
            case.release()
            del w
            free()
        if checkpoint:
            checkpoint(results)

        # 2) per format: ours and the upstream peer on the same bf16 matrix
        for fmt in cfg.formats:
            if cfg.cold and cold_runner is not None:
                entry = cold.setdefault(fmt.name, {})
                both = cfg.cold_upstream and cfg.upstream and upstream is not None
                for impl in ("ours", "upstream") if both else ("ours",):
                    log(f"[bench] {fmt.name}: cold compile ({impl}) in a fresh process, empty HUMMING_CACHE_DIR")
                    entry[impl] = cold_runner(impl, fmt, cfg.shapes[0], cfg.ms[0])
                    log(f"[bench] {fmt.name}: cold compile ({impl}): {_cold_text(entry[impl])}")
            for shape in cfg.shapes:
                w = make_weight(shape, cfg.seed)
                case, qw = ours_builder(fmt, w, cfg.min_bytes)
                if case.status == "error":
                    _raise_if_dead(timer, RuntimeError(case.reason), None)
                if case.status == "ok" and cfg.check:
                    try:
                        x = make_input(cfg.ms[0], shape[1], cfg.seed)
                        case.info["check"] = check_ours(case, qw, fmt.act_desc, x)
                        if not case.info["check"]["ok"]:
                            log(f"[bench] WARNING {fmt.name} {shape_str(shape)}: our output differs from the "
                                f"reference (rel err {case.info['check']['rel_err']:.3g} > "
                                f"{case.info['check']['tol']}); timings kept, marked '!'")
                        del x
                    except Exception as e:
                        case.info["check"] = {"error": exc_text(e), "ok": False}
                        _raise_if_dead(timer, e)
                del qw
                cases.append(case.record())
                measure_all(case, f"ours {fmt.name} {shape_str(shape)}")
                case.release()
                free()
                if cfg.upstream:
                    if upstream is None:
                        why = str(results.get("meta", {}).get("upstream", {}).get("reason", "not loaded"))
                        ucase = Case("upstream", fmt.name, shape, status="unavailable",
                                     reason=why.removeprefix("unavailable: "))
                    else:
                        ucase = upstream.build_case(fmt, w, cfg.min_bytes)
                        if ucase.status in ("error", "unsupported"):
                            _raise_if_dead(timer, RuntimeError(ucase.reason), None)
                    cases.append(ucase.record())
                    measure_all(ucase, f"upstream {fmt.name} {shape_str(shape)}")
                    ucase.release()
                    free()
                del w
            if checkpoint:
                checkpoint(results)
    except FatalBenchError as e:
        results["aborted"] = str(e)
        log(f"[bench] ABORTED: {e}")
    except KeyboardInterrupt:
        results["aborted"] = "interrupted (Ctrl-C)"
        log("[bench] interrupted; writing what was measured")
    except Exception as e:  # a bug in the harness itself: keep the partial results and the traceback
        results["aborted"] = exc_text(e)
        results["traceback"] = traceback.format_exc()
        log(f"[bench] ABORTED by an unexpected error: {exc_text(e)}")
    return results


def _cold_text(d: Dict[str, Any]) -> str:
    if not d:
        return "-"
    if d.get("status") != "ok":
        return f"{d.get('status')}: {d.get('reason', '')}"
    s = f"{d['seconds']:.2f} s"
    if d.get("kernels") is not None:
        s += f", {d['kernels']} kernels"
    return s


def _progress_line(label: str, rec: Dict[str, Any]) -> str:
    head = f"[bench] {label} M={rec['m']}: "
    if rec["status"] != "ok":
        return head + f"{rec['status']} {rec.get('reason', '')}".rstrip()
    s = f"{rec['us']:.2f} us/GEMM, {rec['tbps']:.2f} TB/s, {rec['copies']} copies"
    if "eager_us" in rec:
        s += f", eager {rec['eager_us']:.1f} us/call"
    return head + s
