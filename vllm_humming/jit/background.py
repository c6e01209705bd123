"""Background compilation: kernels compiled on a worker thread while the process does other work, so the calls that
need them later find them in the cache.

    fut = compile_in_background(specs)    # a Future of compile_many's result, or None when there is nothing to do

With it on, the vLLM integration starts one per linear layer as soon as the layer's weights are prepared
(``ops.linear.compile_in_background``), so that every M bucket's kernel of every distinct layer shape compiles while
vLLM loads the rest of the model, runs its profiling pass and sets up the KV cache, instead of one at a time inside
CUDA-graph capture.  Each kernel is compiled once: specs already submitted in this process are skipped, and the disk
cache's per-key file locks make a call that needs a kernel still being compiled here wait for it (or another
process's compile) instead of compiling it a second time.

* Opt-in: ``HUMMING_JIT_BACKGROUND=1`` turns it on (``0``, the default, or empty: off).  Measured so far (session 44,
  call M, H100 host, scripts/exp_background.py: Llama-3-8B's four linear shapes, int4 g128, every layer called at
  1-512 tokens right after preparing them, fresh caches): with 8 background threads the calls ended after 4.99 s
  against 2.49 s for plain lazy compiles -- the batch compiles every bucket's kernels (27, where those calls needed
  19) and parallel NVRTC compiles did not overlap.  With one thread and the model-loading time it is meant to hide,
  it has not been measured yet; until it has, the default stays off.
* Never in strict mode (``HUMMING_JIT_STRICT=1``): there every kernel must already be cached and a miss is an error at
  the call that needs it.
* ``HUMMING_JIT_BACKGROUND_JOBS=N``: compile threads of the background batch (default 1).  One, because NVRTC
  compiles in parallel threads slowed each other down on the H100 host (16 cores, session 44, call M: the four
  Llama-3-8B layer shapes' 27 kernels took 24.6 s of NVRTC across 8 threads, ~0.9 s each, where one at a time the
  calls' 19 took 2.0 s, ~0.1 s each), and the foreground keeps the other cores.
* A failure here is only logged (``HUMMING_JIT_VERBOSE=1``): the call that needs the kernel compiles it again and
  raises the full error (source lines, options, spec) where it can name the layer.
* A forked child starts with no pool and an empty record of submissions (its parent's thread does not exist there).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import List, Optional, Sequence

from .compiler import _log, compile_many, strict_mode
from .spec import KernelSpec

__all__ = ["compile_in_background", "background_enabled", "background_jobs", "wait_background"]

_lock = threading.Lock()
_pool: Optional[ThreadPoolExecutor] = None
_submitted: set = set()
_futures: List[Future] = []


def background_enabled() -> bool:
    """HUMMING_JIT_BACKGROUND=1 (default off) and not strict mode."""
    v = os.environ.get("HUMMING_JIT_BACKGROUND", "").strip()
    if v not in ("", "0", "1"):
        raise ValueError(f"HUMMING_JIT_BACKGROUND must be 0 or 1, got {v!r}")
    return v == "1" and not strict_mode()


def background_jobs() -> int:
    env = os.environ.get("HUMMING_JIT_BACKGROUND_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"HUMMING_JIT_BACKGROUND_JOBS={env!r} is not an integer") from None
    return 1


def _run(specs: List[KernelSpec], jobs: int):
    try:
        return compile_many(specs, jobs=jobs)
    except Exception as e:  # noqa: BLE001 - the foreground call that needs the kernel raises it with context
        _log(f"background compile of {len(specs)} kernel(s) failed ({type(e).__name__}); the calls that need them "
             "will compile and report it")
        return None


def compile_in_background(specs: Sequence[KernelSpec]) -> Optional[Future]:
    """Submit the specs not yet submitted in this process to the background compile thread; returns the Future of
    their ``compile_many`` (its result: the artifacts, or None after a failure), or None when background compilation is
    off or every spec was already submitted."""
    global _pool
    specs = list(specs) if not isinstance(specs, KernelSpec) else [specs]
    bad = [s for s in specs if not isinstance(s, KernelSpec)]
    if bad:   # (here, not on the worker thread, where the error would only be logged)
        raise TypeError(f"compile_in_background takes KernelSpecs, got {type(bad[0]).__name__}: {bad[0]!r:.80}")
    if not background_enabled():
        return None
    with _lock:
        new = [s for s in dict.fromkeys(specs) if s not in _submitted]
        if not new:
            return None
        _submitted.update(new)
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="humming-jit-bg")
        fut = _pool.submit(_run, new, background_jobs())
        _futures.append(fut)
    return fut


def wait_background(timeout: Optional[float] = None) -> None:
    """Block until every background compile submitted so far has finished (tests, tools)."""
    with _lock:
        futs = list(_futures)
    for f in futs:
        f.result(timeout=timeout)
    with _lock:
        _futures[:] = [f for f in _futures if not f.done()]


def _reset_after_fork() -> None:
    global _pool, _lock
    _lock = threading.Lock()
    _pool = None
    _submitted.clear()
    _futures.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
