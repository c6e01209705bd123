"""Where things live: our CUDA header tree, the CUDA/CCCL headers NVRTC needs, the NVRTC library, the JIT cache.

Nothing here needs a GPU or a system CUDA toolkit: the CUDA headers and NVRTC come from the ``nvidia-cuda-runtime``,
``nvidia-cuda-cccl`` and ``nvidia-cuda-nvrtc`` wheels, located through ``cuda.pathfinder`` (with a fallback that
looks through ``site-packages/nvidia/*/include`` and then ``$CUDA_HOME``/``$CUDA_PATH``).

Environment:
  HUMMING_KERNELS_DIR   override the kernels root (the folder holding ``include/humming/*.cuh``)
  HUMMING_CACHE_DIR     override the JIT cache directory (default ``$XDG_CACHE_HOME/vllm-humming/jit``,
                        i.e. ``~/.cache/vllm-humming/jit``)
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import List, Optional

import vllm_humming

from .errors import JitSetupError

__all__ = ["kernels_dir", "include_dir", "cuda_include_dirs", "cache_dir", "nvrtc_library_path", "JitSetupError"]


def kernels_dir() -> Path:
    """The kernels root: ``<repo>/kernels`` in a checkout / editable install, else the installed ``vllm_humming/_kernels``.

    ``$HUMMING_KERNELS_DIR`` overrides both.  The folder holds ``include/humming/*.cuh``.
    """
    return _kernels_dir_cached(os.environ.get("HUMMING_KERNELS_DIR") or "")


@functools.lru_cache(maxsize=8)
def _kernels_dir_cached(env: str) -> Path:
    if env:
        p = Path(env).expanduser().resolve()
        if not (p / "include").is_dir():
            raise JitSetupError(f"HUMMING_KERNELS_DIR={env!r} has no include/ folder (expected include/humming/*.cuh)")
        return p
    pkg = Path(vllm_humming.__file__).resolve().parent
    for cand in (pkg.parent / "kernels", pkg / "_kernels"):
        if (cand / "include" / "humming").is_dir():
            return cand
    raise JitSetupError(
        f"cannot find the humming CUDA header tree: looked for {pkg.parent / 'kernels'}/include/humming (checkout) "
        f"and {pkg / '_kernels'}/include/humming (installed package data); set HUMMING_KERNELS_DIR to override")


def include_dir() -> Path:
    """The include root passed to NVRTC (``-I``): sources write ``#include "humming/xxx.cuh"`` relative to it."""
    return kernels_dir() / "include"


def _site_nvidia_include_dirs() -> List[Path]:
    out = []
    for sp in sys.path:
        base = Path(sp) / "nvidia"
        if base.is_dir():
            for sub in sorted(base.iterdir()):
                inc = sub / "include"
                if (inc / "cuda_runtime.h").is_file() or (inc / "cuda_fp16.h").is_file():
                    out.append(inc)
    return out


@functools.lru_cache(maxsize=None)
def _cuda_include_dirs_cached() -> tuple:
    dirs: List[Path] = []
    cudart: Optional[Path] = None
    cccl: Optional[Path] = None
    try:
        import cuda.pathfinder as pf

        try:
            d = pf.find_nvidia_header_directory("cudart")
            cudart = Path(d) if d else None
        except Exception:  # noqa: BLE001 - any pathfinder failure -> fallback below
            cudart = None
        try:
            d = pf.find_nvidia_header_directory("cccl")
            cccl = Path(d) if d else None
        except Exception:  # noqa: BLE001
            cccl = None
    except ImportError:
        pass
    if cudart is None:
        cands = _site_nvidia_include_dirs()
        for env in ("CUDA_HOME", "CUDA_PATH"):
            if os.environ.get(env):
                cands.append(Path(os.environ[env]) / "include")
        for c in cands:
            if (c / "cuda_fp16.h").is_file():
                cudart = c
                break
    if cudart is None:
        raise JitSetupError(
            "cannot find the CUDA headers (cuda_fp16.h, cuda_bf16.h ...): install the 'nvidia-cuda-runtime' wheel "
            "(pip install 'vllm-humming[cuda]') or set CUDA_HOME")
    dirs.append(cudart)
    if cccl is None:
        for c in (cudart / "cccl",):
            if (c / "cuda" / "std").is_dir():
                cccl = c
    if cccl is not None and cccl != cudart:
        dirs.append(cccl)
    return tuple(dirs)


def cuda_include_dirs() -> List[Path]:
    """CUDA runtime headers first, then the CCCL (libcu++/CUB) headers where the nvidia-cuda-cccl wheel is present."""
    return list(_cuda_include_dirs_cached())


@functools.lru_cache(maxsize=None)
def nvrtc_library_path() -> Optional[str]:
    """Absolute path of the NVRTC shared library that cuda.bindings uses (loaded through cuda.pathfinder)."""
    try:
        import cuda.pathfinder as pf

        return pf.load_nvidia_dynamic_lib("nvrtc").abs_path
    except Exception:  # noqa: BLE001
        return None


def cache_dir() -> Path:
    """The JIT cache root: ``$HUMMING_CACHE_DIR`` or ``$XDG_CACHE_HOME/vllm-humming/jit`` (``~/.cache/...``)."""
    env = os.environ.get("HUMMING_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "vllm-humming" / "jit"
