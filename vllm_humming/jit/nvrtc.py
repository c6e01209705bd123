"""Thin, checked wrapper over ``cuda.bindings.nvrtc``.

NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel (``cuda.bindings`` finds it through ``cuda.pathfinder``); no system
CUDA toolkit is needed and no GPU.  ``nvrtcCompileProgram`` runs with the GIL released (cuda-bindings wraps it in
``with nogil``), so a thread pool compiles several kernels in parallel.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from .errors import ArchError, JitError, JitSetupError

__all__ = ["nvrtc_version", "nvrtc_version_string", "supported_archs", "check_arch", "toolchain_fingerprint",
           "NvrtcResult", "run_nvrtc", "cuda_bindings_version"]


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - depends on the install
        raise JitSetupError("cuda-bindings is not installed: the JIT needs it to run NVRTC "
                            "(pip install 'vllm-humming[cuda]')") from e
    return nvrtc


def _check(res, what: str):
    nv = _nvrtc()
    err = res[0]
    if err != nv.nvrtcResult.NVRTC_SUCCESS:
        try:
            name = nv.nvrtcGetErrorString(err)[1].decode()
        except Exception:  # noqa: BLE001
            name = str(err)
        raise JitError(f"{what} failed: {name}")
    return res[1:] if len(res) > 2 else (res[1] if len(res) == 2 else None)


@functools.lru_cache(maxsize=None)
def nvrtc_version() -> Tuple[int, int]:
    try:
        major, minor = _check(_nvrtc().nvrtcVersion(), "nvrtcVersion")
    except RuntimeError as e:
        if isinstance(e, JitError):
            raise
        raise JitSetupError(f"cannot load NVRTC (install the 'nvidia-cuda-nvrtc' wheel): {e}") from e
    return int(major), int(minor)


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001
        return ""


@functools.lru_cache(maxsize=None)
def nvrtc_version_string() -> str:
    """``"13.0 (nvidia-cuda-nvrtc 13.0.88)"``-style description."""
    major, minor = nvrtc_version()
    s = f"{major}.{minor}"
    dist = _dist_version(f"nvidia-cuda-nvrtc-cu{major}") or _dist_version("nvidia-cuda-nvrtc")
    return f"{s} (nvidia-cuda-nvrtc {dist})" if dist else s


def cuda_bindings_version() -> str:
    try:
        from cuda.bindings import __version__

        return str(__version__)
    except Exception:  # noqa: BLE001
        return _dist_version("cuda-bindings") or "not installed"


@functools.lru_cache(maxsize=None)
def supported_archs() -> Tuple[int, ...]:
    """The SM numbers this NVRTC can target, e.g. (75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121)."""
    return tuple(int(a) for a in _check(_nvrtc().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs"))


def check_arch(arch: str) -> None:
    """Raise :class:`ArchError` naming the supported list when this NVRTC cannot target ``arch``."""
    from .spec import parse_arch

    num, _ = parse_arch(arch)
    sup = supported_archs()
    if num not in sup:
        raise ArchError(f"NVRTC {nvrtc_version_string()} cannot compile for {arch}: it supports "
                        f"{', '.join('sm_%d' % a for a in sup)} (arch-specific 'a' variants for sm_90 and newer)")


@functools.lru_cache(maxsize=None)
def toolchain_fingerprint() -> str:
    """Everything outside our header tree that changes what a compile produces: NVRTC version and library build,
    the CUDA runtime / CCCL header package versions.  Part of every cache key."""
    from .paths import nvrtc_library_path

    parts = [f"nvrtc={'.'.join(map(str, nvrtc_version()))}"]
    for dist in ("nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cuda-cccl"):
        parts.append(f"{dist}={_dist_version(dist)}")
    lib = nvrtc_library_path()
    if lib:
        try:
            st = os.stat(lib)
            parts.append(f"libnvrtc={os.path.basename(lib)}:{st.st_size}")
        except OSError:
            pass
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:16] + ":" + ";".join(parts)


@dataclass
class NvrtcResult:
    ok: bool
    binary: bytes
    log: str
    seconds: float
    result_name: str


def run_nvrtc(source: str, program_name: str, options: Sequence[str], output: str = "cubin") -> NvrtcResult:
    """Compile one program.  Returns the binary (cubin or PTX) and the log; never raises on a compile error (the
    caller formats it), raises :class:`JitError` only when NVRTC itself misbehaves."""
    nv = _nvrtc()
    prog = _check(nv.nvrtcCreateProgram(source.encode(), program_name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts: List[bytes] = [o.encode() for o in options]
        t0 = time.perf_counter()
        (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        dt = time.perf_counter() - t0
        n = _check(nv.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        buf = b" " * n
        _check(nv.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.rstrip(b"\x00").decode(errors="replace").strip()
        ok = err == nv.nvrtcResult.NVRTC_SUCCESS
        try:
            rname = nv.nvrtcGetErrorString(err)[1].decode()
        except Exception:  # noqa: BLE001
            rname = str(err)
        if not ok:
            return NvrtcResult(False, b"", log, dt, rname)
        if output == "ptx":
            n = _check(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            data = b" " * n
            _check(nv.nvrtcGetPTX(prog, data), "nvrtcGetPTX")
        else:
            n = _check(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            data = b" " * n
            _check(nv.nvrtcGetCUBIN(prog, data), "nvrtcGetCUBIN")
        return NvrtcResult(True, bytes(data), log, dt, rname)
    finally:
        nv.nvrtcDestroyProgram(prog)
