"""What to compile (:class:`KernelSpec`) and what comes back (:class:`CompiledKernel`), plus arch-name handling."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from .errors import ArchError

__all__ = ["KernelSpec", "CompiledKernel", "normalize_arch", "parse_arch", "KNOWN_ARCHS"]

# The archs the project targets; NVRTC may support more (``nvrtc.supported_archs()``).
KNOWN_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a")

_ARCH_RE = re.compile(r"^(?:sm|compute)?_?(\d{2,3})([af]?)$")


def parse_arch(arch: str) -> Tuple[int, str]:
    """``"sm_90a"`` / ``"sm90a"`` / ``"90a"`` / ``"compute_90a"`` -> ``(90, "a")``.  Raises :class:`ArchError`."""
    if not isinstance(arch, str):
        raise ArchError(f"arch must be a string like 'sm_90a', got {arch!r}")
    m = _ARCH_RE.match(arch.strip().lower())
    if not m:
        raise ArchError(f"malformed arch {arch!r}: expected 'sm_XY' or 'sm_XYa' (e.g. {', '.join(KNOWN_ARCHS)})")
    num, suffix = int(m.group(1)), m.group(2)
    if suffix == "a" and num < 90:
        raise ArchError(f"arch {arch!r}: the arch-specific 'a' variant exists only for sm_90 and newer")
    if suffix == "f" and num < 100:
        raise ArchError(f"arch {arch!r}: the family 'f' variant exists only for sm_100 and newer")
    return num, suffix


def normalize_arch(arch: str) -> str:
    """Canonical spelling ``sm_XY[a|f]``."""
    num, suffix = parse_arch(arch)
    return f"sm_{num}{suffix}"


_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class KernelSpec:
    """One kernel to compile.

    name:          the ``extern "C" __global__`` function name in ``source`` (also the NVRTC program name).
    source:        the full generated ``.cu`` text; it may ``#include "humming/xxx.cuh"`` (our header tree) and
                   CUDA / CCCL headers (``<cuda_bf16.h>``, ``<cuda/std/...>``).
    arch:          target, e.g. ``"sm_90a"``, ``"sm_80"`` (any spelling :func:`normalize_arch` accepts).
    options:       extra NVRTC options (``"-DFOO=1"``, ``"--use_fast_math"``, ``"--maxrregcount=128"`` ...).
    output:        ``"cubin"`` (default, SASS for exactly ``arch``) or ``"ptx"`` (``compute_XY``; the driver JITs it).
    include_dirs:  extra include roots searched before our ``kernels/include``; headers found there are hashed into
                   the cache key like ours.
    config:        free-form description of what produced the kernel (tile sizes, layer description ...); shown in
                   error messages and stored in the cache metadata, never part of the cache key.
    """

    name: str
    source: str
    arch: str
    options: Tuple[str, ...] = ()
    output: str = "cubin"
    include_dirs: Tuple[str, ...] = ()
    config: Optional[Mapping[str, Any]] = field(default=None, compare=False, hash=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not _IDENT_RE.match(self.name):
            raise ValueError(f"KernelSpec.name must be a C identifier (the extern \"C\" kernel name), got {self.name!r}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"KernelSpec {self.name!r}: source must be a non-empty string")
        object.__setattr__(self, "arch", normalize_arch(self.arch))
        if isinstance(self.options, str):
            raise TypeError(f"KernelSpec {self.name!r}: options must be a tuple of strings, not one string "
                            f"{self.options!r}")
        opts = tuple(self.options)
        for o in opts:
            if not isinstance(o, str) or not o:
                raise TypeError(f"KernelSpec {self.name!r}: every option must be a non-empty str, got {o!r}")
        object.__setattr__(self, "options", opts)
        if self.output not in ("cubin", "ptx"):
            raise ValueError(f"KernelSpec {self.name!r}: output must be 'cubin' or 'ptx', got {self.output!r}")
        if isinstance(self.include_dirs, str):
            raise TypeError(f"KernelSpec {self.name!r}: include_dirs must be a tuple of paths")
        object.__setattr__(self, "include_dirs", tuple(str(d) for d in self.include_dirs))

    @property
    def arch_num(self) -> int:
        return parse_arch(self.arch)[0]

    def describe(self, config: bool = True) -> str:
        """One line naming the kernel, its target, extra options and (optionally) config (for logs and errors)."""
        s = f"{self.name} [{self.arch}, {self.output}]"
        if self.options:
            s += f" options={' '.join(self.options)}"
        if config and self.config:
            s += f" config={dict(self.config)}"
        return s


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled kernel.

    cubin:      the binary (PTX text as bytes when ``spec.output == "ptx"``).
    key:        the cache key (sha256 hex).
    compile_s:  seconds this call spent obtaining it: the NVRTC compile on a miss, the cache lookup on a hit.
    cached:     True when it came from the cache (memory or disk) rather than a compile in this call.
    log:        the NVRTC log (warnings) of the compile that produced it.
    spec:       the :class:`KernelSpec`.
    nvrtc_s:    seconds NVRTC took when the binary was built (recorded in the cache metadata).
    source:     where it came from: "nvrtc", "disk" or "memory".
    """

    cubin: bytes
    key: str
    compile_s: float
    cached: bool
    log: str
    spec: KernelSpec
    nvrtc_s: float = 0.0
    source: str = "nvrtc"

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def arch(self) -> str:
        return self.spec.arch

    def __repr__(self) -> str:
        return (f"CompiledKernel({self.spec.name!r}, arch={self.spec.arch!r}, key={self.key[:16]}.., "
                f"{len(self.cubin)} bytes, {self.source}, compile_s={self.compile_s:.3f})")
