"""compile_kernel / compile_many: NVRTC compilation behind a content-addressed, multi-process-safe disk cache.

Environment:
  HUMMING_CACHE_DIR       cache root (default ``~/.cache/vllm-humming/jit``, honouring ``$XDG_CACHE_HOME``)
  HUMMING_JIT_STRICT=1    any cache miss raises :class:`CacheMissError` naming the kernel, arch and key
                          (use it in serving after a warm-up run to guarantee nothing compiles on the hot path)
  HUMMING_JIT_VERBOSE=1   print compile / cache events and times to stderr
  HUMMING_JIT_JOBS=N      default parallelism of :func:`compile_many` (default: number of CPUs)
  HUMMING_JIT_LINEINFO=1  add ``-lineinfo`` (source-line info for profilers; part of the key)
  HUMMING_JIT_FAST_COMPILE=min|mid|max
                          experiment: NVRTC's ``--Ofast-compile`` level (fewer device-code optimizations; part of the
                          key).  On the CPU machine (noisy timings) ``min`` compiles the int4 M=1 decode kernel in
                          ~0.5 instead of 1.1-1.5 s and ``mid`` the 256-row two-atom kernel in 0.8-1.0 instead of
                          3-4.6 s -- but the machine code differs: NVVM leaves lambdas as calls, around which ptxas
                          serializes the wgmma instructions (C7509) and spills (NOTES.md, sessions 16 and 31).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import paths
from .cache import DiskCache, compute_key, scan_headers
from .errors import CacheMissError, CompileError
from .nvrtc import check_arch, nvrtc_version_string, run_nvrtc, toolchain_fingerprint
from .spec import CompiledKernel, KernelSpec, parse_arch

__all__ = ["compile_kernel", "compile_many", "kernel_key", "build_options", "strict_mode", "verbose_mode",
           "clear_memory_cache", "stats", "reset_stats", "default_jobs"]

BASE_OPTIONS = ("-std=c++17", "-default-device", "-DNDEBUG", "-DHUMMING_JIT=1")
FAST_COMPILE_LEVELS = ("min", "mid", "max")

_mem: Dict[Tuple[str, str], CompiledKernel] = {}
_mem_lock = threading.Lock()
_key_locks: Dict[str, threading.Lock] = {}
_stats = {"nvrtc_compiles": 0, "nvrtc_seconds": 0.0, "disk_hits": 0, "memory_hits": 0, "corrupt_rebuilt": 0,
          "compile_errors": 0, "cache_write_errors": 0}
_stats_lock = threading.Lock()
_warned_unwritable = set()


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def strict_mode() -> bool:
    return _env_flag("HUMMING_JIT_STRICT")


def verbose_mode() -> bool:
    return _env_flag("HUMMING_JIT_VERBOSE")


def default_jobs() -> int:
    env = os.environ.get("HUMMING_JIT_JOBS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"HUMMING_JIT_JOBS={env!r} is not an integer") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _log(msg: str) -> None:
    if verbose_mode():
        print(f"[humming-jit] {msg}", file=sys.stderr, flush=True)


def _bump(**kw) -> None:
    with _stats_lock:
        for k, v in kw.items():
            _stats[k] += v


def stats() -> dict:
    """Counters of this process: NVRTC compiles (and seconds), disk / memory hits, corrupt entries rebuilt ..."""
    with _stats_lock:
        return dict(_stats)


def reset_stats() -> None:
    with _stats_lock:
        for k in _stats:
            _stats[k] = 0.0 if isinstance(_stats[k], float) else 0


def clear_memory_cache() -> None:
    """Forget the in-process cache (the disk cache is untouched)."""
    with _mem_lock:
        _mem.clear()


def build_options(spec: KernelSpec) -> Tuple[List[str], List[str]]:
    """-> (options that enter the cache key, full NVRTC option list including include paths)."""
    num, suffix = parse_arch(spec.arch)
    arch_flag = f"--gpu-architecture={'compute' if spec.output == 'ptx' else 'sm'}_{num}{suffix}"
    base = list(BASE_OPTIONS) + [arch_flag]
    if _env_flag("HUMMING_JIT_LINEINFO"):
        base.append("-lineinfo")
    fast = os.environ.get("HUMMING_JIT_FAST_COMPILE", "").strip()
    if fast and fast != "0":
        if fast not in FAST_COMPILE_LEVELS:
            raise ValueError(f"HUMMING_JIT_FAST_COMPILE must be one of {FAST_COMPILE_LEVELS} (or unset / 0), got {fast!r}")
        base.append(f"--Ofast-compile={fast}")
    key_opts = base + list(spec.options)
    inc = [f"--include-path={d}" for d in spec.include_dirs]
    inc.append(f"--include-path={paths.include_dir()}")
    inc += [f"--include-path={d}" for d in paths.cuda_include_dirs()]
    return key_opts, base + inc + list(spec.options)


def _header_roots(spec: KernelSpec) -> List[Path]:
    return [Path(d) for d in spec.include_dirs] + [paths.include_dir()]


def kernel_key(spec: KernelSpec) -> str:
    """The cache key of ``spec`` (see :mod:`vllm_humming.jit.cache`)."""
    return _key_and_options(spec)[0]


def _key_and_options(spec: KernelSpec):
    key_opts, full_opts = build_options(spec)
    headers = scan_headers(spec.source, _header_roots(spec))
    key = compute_key(name=spec.name, output=spec.output, arch=spec.arch, options=key_opts,
                      toolchain=toolchain_fingerprint(), source=spec.source, headers=headers)
    return key, key_opts, full_opts, headers


# ----------------------------------------------------------------------------------------------------------------
# compile errors

_LOC_RE = re.compile(r"^(?P<file>[^\n()]+?)\((?P<line>\d+)\): (?P<kind>catastrophic error|error|warning)[^:\n]*: "
                     r"(?P<msg>.*)$", re.MULTILINE)


def _context(lines: Sequence[str], lineno: int, radius: int = 3) -> str:
    lo, hi = max(1, lineno - radius), min(len(lines), lineno + radius)
    width = len(str(hi))
    out = []
    for i in range(lo, hi + 1):
        mark = ">" if i == lineno else " "
        out.append(f"  {mark} {i:>{width}} | {lines[i - 1]}")
    return "\n".join(out)


def _format_compile_error(spec: KernelSpec, key: str, full_opts: Sequence[str], log: str, result_name: str,
                          program_name: str) -> CompileError:
    src_lines = spec.source.splitlines()
    locs, blocks, seen = [], [], set()
    for m in _LOC_RE.finditer(log):
        f, ln, kind, msg = m.group("file").strip(), int(m.group("line")), m.group("kind"), m.group("msg")
        if kind == "warning":
            continue
        locs.append((f, ln, kind, msg))
        if (f, ln) in seen or len(blocks) >= 6:
            continue
        seen.add((f, ln))
        if f == program_name:
            lines, shown = src_lines, f"{program_name} (generated source)"
        else:
            try:
                lines, shown = Path(f).read_text(errors="replace").splitlines(), f
            except OSError:
                continue
        if 1 <= ln <= len(lines):
            blocks.append(f"{shown}:{ln}: {kind}: {msg}\n{_context(lines, ln)}")
    cfg = dict(spec.config) if spec.config else None
    parts = [f"NVRTC failed to compile kernel {spec.name!r} for {spec.arch} ({result_name}; NVRTC "
             f"{nvrtc_version_string()}; key {key[:16]})",
             f"  spec: {spec.describe(config=False)}"]
    if cfg:
        parts.append(f"  config: {cfg}")
    parts.append(f"  options: {' '.join(full_opts)}")
    parts.append("--- NVRTC log ---")
    parts.append(log if log else "(empty log)")
    if blocks:
        parts.append("--- failing source lines ---")
        parts.extend(blocks)
    return CompileError("\n".join(parts), spec=spec, log=log, key=key, options=full_opts, locations=locs)


# ----------------------------------------------------------------------------------------------------------------


def _key_lock(key: str) -> threading.Lock:
    with _mem_lock:
        lk = _key_locks.get(key)
        if lk is None:
            lk = _key_locks[key] = threading.Lock()
        return lk


def _from_disk(spec, key, data, meta, t0) -> CompiledKernel:
    return CompiledKernel(cubin=data, key=key, compile_s=time.perf_counter() - t0, cached=True,
                          log=meta.get("log", ""), spec=spec, nvrtc_s=float(meta.get("nvrtc_s", 0.0)), source="disk")


def compile_kernel(spec: KernelSpec, *, cache_dir=None, strict: Optional[bool] = None) -> CompiledKernel:
    """Compile ``spec`` (or fetch it from the memory / disk cache).

    Raises :class:`CompileError` (NVRTC log + failing source lines + spec), :class:`CacheMissError` in strict mode,
    :class:`ArchError` for an arch NVRTC cannot target, :class:`JitSetupError` when NVRTC / headers are missing.
    """
    if not isinstance(spec, KernelSpec):
        raise TypeError(f"compile_kernel expects a KernelSpec, got {type(spec).__name__}")
    t0 = time.perf_counter()
    root = Path(cache_dir) if cache_dir is not None else paths.cache_dir()
    key, key_opts, full_opts, headers = _key_and_options(spec)
    mkey = (str(root), key)
    with _mem_lock:
        art = _mem.get(mkey)
    if art is not None:
        _bump(memory_hits=1)
        return replace(art, spec=spec, cached=True, compile_s=time.perf_counter() - t0, source="memory")

    disk = DiskCache(root)
    data, meta, status = disk.get(key)
    if status == "hit":
        art = _from_disk(spec, key, data, meta, t0)
        _bump(disk_hits=1)
        _log(f"disk hit   {spec.name} [{spec.arch}] {key[:12]} ({art.compile_s * 1e3:.1f} ms)")
        with _mem_lock:
            _mem[mkey] = art
        return art

    if strict if strict is not None else strict_mode():
        raise CacheMissError(
            f"HUMMING_JIT_STRICT=1: kernel {spec.name!r} for {spec.arch} (key {key}) is not in the JIT cache "
            f"{root} ({status}); run once without HUMMING_JIT_STRICT (same arch, options and headers) to build it.\n"
            f"  spec: {spec.describe()}", spec=spec, key=key)

    check_arch(spec.arch)
    with _key_lock(key):
        try:
            flock = disk.lock(key)
            flock.acquire()
        except OSError as e:
            flock = None
            if str(root) not in _warned_unwritable:
                _warned_unwritable.add(str(root))
                print(f"[humming-jit] warning: JIT cache {root} is not writable ({e}); compiling without a cache",
                      file=sys.stderr, flush=True)
        try:
            if flock is not None:
                data, meta, status = disk.get(key)  # another process may have built it while we waited
                if status == "hit":
                    art = _from_disk(spec, key, data, meta, t0)
                    _bump(disk_hits=1)
                    _log(f"disk hit   {spec.name} [{spec.arch}] {key[:12]} after waiting for another compile "
                         f"({art.compile_s:.3f} s)")
                    with _mem_lock:
                        _mem[mkey] = art
                    return art
            if status.startswith("corrupt"):
                _bump(corrupt_rebuilt=1)
                _log(f"rebuilding {spec.name} [{spec.arch}] {key[:12]}: cache entry {status}")
            program_name = f"{spec.name}.cu"
            res = run_nvrtc(spec.source, program_name, full_opts, spec.output)
            if not res.ok:
                _bump(compile_errors=1)
                _log(f"FAILED     {spec.name} [{spec.arch}] after {res.seconds:.3f} s")
                raise _format_compile_error(spec, key, full_opts, res.log, res.result_name, program_name)
            binary = res.binary
            if spec.output == "ptx":
                binary = binary.rstrip(b"\x00") + b"\x00"  # keep exactly one NUL: cuModuleLoadData wants a C string
            _bump(nvrtc_compiles=1, nvrtc_seconds=res.seconds)
            if flock is not None:
                meta = {"name": spec.name, "arch": spec.arch, "output": spec.output, "options": key_opts,
                        "nvrtc": nvrtc_version_string(), "nvrtc_s": round(res.seconds, 4), "log": res.log,
                        "headers": dict(headers), "config": dict(spec.config) if spec.config else None}
                try:
                    disk.put(key, binary, meta, source=spec.source)
                except OSError as e:
                    _bump(cache_write_errors=1)
                    print(f"[humming-jit] warning: could not write cache entry {key[:12]} under {root}: {e}",
                          file=sys.stderr, flush=True)
        finally:
            if flock is not None:
                flock.release()
    art = CompiledKernel(cubin=binary, key=key, compile_s=time.perf_counter() - t0, cached=False, log=res.log,
                         spec=spec, nvrtc_s=res.seconds, source="nvrtc")
    _log(f"compiled   {spec.name} [{spec.arch}] {key[:12]} in {res.seconds:.3f} s (NVRTC), "
         f"{len(binary)} bytes")
    with _mem_lock:
        _mem[mkey] = art
    return art


def compile_many(specs: Sequence[KernelSpec], *, jobs: Optional[int] = None, cache_dir=None,
                 strict: Optional[bool] = None) -> List[CompiledKernel]:
    """Compile several kernels concurrently (thread pool: NVRTC runs with the GIL released); results keep the input
    order.  Identical specs are compiled once.  If any kernel fails, every other one still finishes (and is cached)
    and the first failure (input order) is raised, its message listing the others."""
    specs = list(specs)
    if not specs:
        return []
    uniq = list(dict.fromkeys(specs))
    jobs = default_jobs() if jobs is None else max(1, int(jobs))
    jobs = min(jobs, len(uniq))

    def one(s):
        try:
            return compile_kernel(s, cache_dir=cache_dir, strict=strict), None
        except Exception as e:  # noqa: BLE001 - re-raised below in input order
            return None, e

    t0 = time.perf_counter()
    if jobs == 1:
        results = [one(s) for s in uniq]
    else:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="humming-jit") as ex:
            results = list(ex.map(one, uniq))
    errors = [(s, e) for s, (_, e) in zip(uniq, results) if e is not None]
    if errors:
        s0, e0 = errors[0]
        if len(errors) > 1:
            others = ", ".join(f"{s.name} [{s.arch}]" for s, _ in errors[1:])
            try:
                e0.add_note(f"({len(errors) - 1} other kernel(s) also failed: {others})")
            except AttributeError:  # pragma: no cover - Python 3.10
                pass
        raise e0
    by_spec = {s: a for s, (a, _) in zip(uniq, results)}
    n_new = sum(1 for a, _ in results if a is not None and not a.cached)
    _log(f"compile_many: {len(specs)} kernels ({len(uniq)} distinct, {n_new} compiled) in "
         f"{time.perf_counter() - t0:.3f} s with {jobs} thread(s)")
    return [by_spec[s] for s in specs]
