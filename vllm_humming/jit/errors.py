"""Exceptions raised by the JIT engine.  All derive from :class:`JitError` (a ``RuntimeError``)."""

from __future__ import annotations

__all__ = ["JitError", "JitSetupError", "ArchError", "CompileError", "CacheMissError", "CudaError"]


class JitError(RuntimeError):
    """Base class of every JIT engine error."""


class JitSetupError(JitError):
    """The JIT toolchain (NVRTC, cuda-bindings, the CUDA headers, our header tree) could not be found or loaded."""


class ArchError(JitError, ValueError):
    """A target architecture that is malformed or that this NVRTC cannot compile for."""


class CompileError(JitError):
    """NVRTC rejected a kernel.  ``str(err)`` holds the NVRTC log, the failing source lines with context and the
    kernel spec/config; the pieces are also attributes (``spec``, ``log``, ``key``, ``options``, ``locations``)."""

    def __init__(self, message: str, *, spec=None, log: str = "", key: str = "", options=(), locations=()):
        super().__init__(message)
        self.spec = spec
        self.log = log
        self.key = key
        self.options = tuple(options)
        self.locations = tuple(locations)  # ((file, line, kind, text), ...)


class CacheMissError(JitError):
    """Strict mode (``HUMMING_JIT_STRICT=1``) and the kernel is not in the cache: nothing may compile."""

    def __init__(self, message: str, *, spec=None, key: str = ""):
        super().__init__(message)
        self.spec = spec
        self.key = key


class CudaError(JitError):
    """A CUDA driver call failed; the message names the call and the CUresult (e.g. CUDA_ERROR_INVALID_VALUE)."""

    def __init__(self, message: str, *, code: int = -1, name: str = ""):
        super().__init__(message)
        self.code = code
        self.name = name
