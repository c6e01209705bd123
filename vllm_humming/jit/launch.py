"""Loading compiled kernels and launching them (``cuda.bindings.driver``), with little Python work per launch.

* :func:`load_kernel` loads the cubin once per process as a context-independent CUDA *library*
  (``cuLibraryLoadData``), looks the kernel up (``cuLibraryGetKernel``), forces it resident in the device's primary
  context (the one torch uses) and caches a :class:`KernelFunction` per (cache key, device).
* Launches pass the ``CUkernel`` handle to ``cuLaunchKernel`` (documented: a CUkernel cast to CUfunction launches in
  the stream's context), on ``torch.cuda.current_stream().cuda_stream`` unless a stream is given.  They are captured
  by CUDA graphs like any other launch on a capturing stream.
* :class:`Launcher` pre-builds the ``void*[]`` argument array and one ctypes cell per parameter; a launch only writes
  the new values into the cells and makes one driver call.
* Every driver call's ``CUresult`` is checked; failures raise :class:`CudaError` naming the call and the error.

Launch paths (``$HUMMING_LAUNCH_PATH``, read when a :class:`KernelFunction` is created):

* ``ctypes`` (the default whenever it is available): ``cuLaunchKernel`` / ``cuLaunchKernelEx`` are resolved once as
  plain C function pointers (through cuda.bindings' ``cuGetProcAddress``, i.e. from the same libcuda with the same
  per-thread-default-stream choice as cuda.bindings; else from ``libcuda.so.1``'s exported symbols) and called
  through ctypes with plain ints and pre-built ``c_void_p`` handles: no ``CUstream`` objects, no result tuples.
* ``bindings``: ``cuda.bindings.driver.cuLaunchKernel`` (the previous path; also the fallback when libcuda cannot be
  resolved, e.g. on a machine without a driver).

Programmatic dependent launch (PDL, sm_90+): ``Launcher(..., pdl=True)`` / ``KernelFunction.launch(..., pdl=True)``
launch through ``cuLaunchKernelEx`` with one ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1``
attribute, so the kernel may start while the previous kernel in the stream is still running.  The KERNEL must then
execute ``griddepcontrol.wait`` (``cudaGridDependencySynchronize()``) before it reads anything written by earlier
kernels in the stream (and before it writes memory that earlier kernels may still read); it may execute
``griddepcontrol.launch_dependents`` to let the next PDL launch start early.  Without ``pdl`` (or for a kernel built
for an arch below sm_90) the attribute is simply not set and the launch is an ordinary stream-ordered one.

Nothing here runs at import: the module imports without a GPU and without cuda-bindings.
"""

from __future__ import annotations

import ctypes
import operator
import os
import struct
import threading
import warnings
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from .errors import CudaError, JitError, JitSetupError
from .spec import CompiledKernel, parse_arch

__all__ = ["load_kernel", "KernelFunction", "Launcher", "current_arch", "arch_for_capability", "binary_runs_on",
           "ARG_TYPES", "unload_all", "LAUNCH_PATH_ENV", "LAUNCH_PATHS", "resolve_launch_path",
           "direct_launch_available", "CUlaunchAttributeValue", "CUlaunchAttribute", "CUlaunchConfig",
           "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION"]

_drv_mod = None
_lock = threading.RLock()
_init_done = False
_primary_ctx: Dict[int, Any] = {}
_libraries: Dict[str, Any] = {}  # cache key -> CUlibrary
_functions: Dict[Tuple[str, int], "KernelFunction"] = {}
_SUCCESS = None
_INVALID_CONTEXT = None


def _drv():
    global _drv_mod, _SUCCESS, _INVALID_CONTEXT
    if _drv_mod is None:
        try:
            from cuda.bindings import driver
        except ImportError as e:  # pragma: no cover - depends on the install
            raise JitSetupError("cuda-bindings is not installed: loading/launching kernels needs "
                                "cuda.bindings.driver (pip install 'vllm-humming[cuda]')") from e
        _SUCCESS = driver.CUresult.CUDA_SUCCESS
        _INVALID_CONTEXT = driver.CUresult.CUDA_ERROR_INVALID_CONTEXT
        _drv_mod = driver
    return _drv_mod


def _error_text(err) -> Tuple[str, str]:
    d = _drv()
    try:
        r = d.cuGetErrorName(err)
        name = r[1].decode() if r[0] == _SUCCESS else str(err)
    except Exception:  # noqa: BLE001
        name = str(err)
    try:
        r = d.cuGetErrorString(err)
        desc = r[1].decode() if r[0] == _SUCCESS else ""
    except Exception:  # noqa: BLE001
        desc = ""
    return name, desc


def _raise(err, what: str):
    name, desc = _error_text(err)
    raise CudaError(f"{what} failed: {name}" + (f" ({desc})" if desc else ""), code=int(err), name=name)


def _check(res, what: str):
    """Check a cuda.bindings result tuple ``(CUresult, *values)``; return the values (one value unwrapped)."""
    err = res[0]
    if err != _SUCCESS:
        _raise(err, what)
    if len(res) == 1:
        return None
    return res[1] if len(res) == 2 else res[1:]


def _ensure_init():
    global _init_done
    if not _init_done:
        d = _drv()
        try:
            _check(d.cuInit(0), "cuInit")
        except RuntimeError as e:
            if isinstance(e, CudaError):
                raise
            raise JitError(f"cannot initialize the CUDA driver (is there an NVIDIA GPU and driver?): {e}") from e
        _init_done = True


def _ctx_for(dev: int):
    with _lock:
        ctx = _primary_ctx.get(dev)
        if ctx is None:
            d = _drv()
            _ensure_init()
            cudev = _check(d.cuDeviceGet(dev), f"cuDeviceGet({dev})")
            ctx = _check(d.cuDevicePrimaryCtxRetain(cudev), f"cuDevicePrimaryCtxRetain({dev})")
            _primary_ctx[dev] = ctx
        return ctx


# ---------------------------------------------------------------------------------------------------------------
# direct driver entry points (the "ctypes" launch path) and the cuLaunchKernelEx structs

LAUNCH_PATH_ENV = "HUMMING_LAUNCH_PATH"
LAUNCH_PATHS = ("ctypes", "bindings")

# cuda.h (CUDA 13.0): CUlaunchAttributeID CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
_CUDA_ERROR_INVALID_CONTEXT = 201  # cuda.h CUresult CUDA_ERROR_INVALID_CONTEXT


class _ProgrammaticEvent(ctypes.Structure):
    _fields_ = [("event", ctypes.c_void_p), ("flags", ctypes.c_int), ("triggerAtBlockStart", ctypes.c_int)]


class _Dim3u(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class CUlaunchAttributeValue(ctypes.Union):
    """cuda.h ``CUlaunchAttributeValue``: a union padded to 64 bytes, 8-byte aligned (it has pointer members).  Only
    the members we use (and one pointer member that fixes the alignment) are spelled out."""

    _fields_ = [("pad", ctypes.c_char * 64),
                ("cooperative", ctypes.c_int),
                ("clusterDim", _Dim3u),
                ("programmaticStreamSerializationAllowed", ctypes.c_int),
                ("programmaticEvent", _ProgrammaticEvent),
                ("priority", ctypes.c_int)]


class CUlaunchAttribute(ctypes.Structure):
    """cuda.h ``CUlaunchAttribute``: ``CUlaunchAttributeID id`` (a 4-byte enum), ``char pad[4]``, the 64-byte value
    at offset 8; 72 bytes."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", CUlaunchAttributeValue)]


class CUlaunchConfig(ctypes.Structure):
    """cuda.h ``CUlaunchConfig``: seven ``unsigned int`` (grid, block, dynamic smem), ``hStream`` at offset 32,
    ``attrs`` at 40, ``numAttrs`` at 48; 56 bytes."""

    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(CUlaunchAttribute)), ("numAttrs", ctypes.c_uint)]


# one call rewrites grid, block, smem and the stream of a CUlaunchConfig in place (7 x u32, 4 pad bytes, u64 stream)
_CONFIG_HEAD = struct.Struct("=7I4xQ")
_pack_config = _CONFIG_HEAD.pack_into
_STREAM_FIELD = struct.Struct("=Q")       # CUlaunchConfig.hStream alone (offset 32)


class _LaunchConfig:
    """A CUlaunchConfig with its attribute array, built once; :meth:`set` patches grid/block/smem/stream per launch.
    ``pdl`` sets the programmatic-stream-serialization attribute, otherwise ``numAttrs`` is 0."""

    __slots__ = ("config", "attr", "ptr", "pdl")

    def __init__(self, pdl: bool):
        self.pdl = bool(pdl)
        self.attr = CUlaunchAttribute()
        self.attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        self.attr.value.programmaticStreamSerializationAllowed = 1
        self.config = CUlaunchConfig()
        self.config.attrs = ctypes.pointer(self.attr)
        self.config.numAttrs = 1 if self.pdl else 0
        self.ptr = ctypes.c_void_p(ctypes.addressof(self.config))

    def set(self, gx, gy, gz, bx, by, bz, smem, stream_h) -> None:
        _pack_config(self.config, 0, gx, gy, gz, bx, by, bz, smem, stream_h)


# No argtypes: ctypes passes Python ints as C int (the unsigned-int dimensions) and c_void_p / None as pointers,
# which is about twice as fast as per-argument argtypes conversion.  Pointer-sized values must therefore always be
# passed as c_void_p (or None), never as bare ints.
_LAUNCH_PROTO = ctypes.CFUNCTYPE(ctypes.c_int)


class _DirectAPI:
    """``cuLaunchKernel`` and ``cuLaunchKernelEx`` as ctypes function pointers; ``source`` says where they came
    from ("cuGetProcAddress", "libcuda.so.1" or a test)."""

    __slots__ = ("launch_kernel", "launch_kernel_ex", "source", "addresses")

    def __init__(self, launch_kernel_addr: int, launch_kernel_ex_addr: int, source: str):
        if not launch_kernel_addr or not launch_kernel_ex_addr:
            raise ValueError("cuLaunchKernel / cuLaunchKernelEx entry point is NULL")
        self.addresses = (int(launch_kernel_addr), int(launch_kernel_ex_addr))
        self.launch_kernel = _LAUNCH_PROTO(self.addresses[0])
        self.launch_kernel_ex = _LAUNCH_PROTO(self.addresses[1])
        self.source = source


_direct: Any = None  # None: not resolved yet; False: unavailable; else _DirectAPI
_direct_why = ""
_warned_fallback = False


def _uses_ptds() -> bool:
    # cuda.bindings' own switch, same truthiness (any non-empty value selects the per-thread default stream)
    return bool(os.getenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", ""))


def _resolve_direct_api() -> Tuple[Optional[_DirectAPI], str]:
    """Find cuLaunchKernel / cuLaunchKernelEx; (api, "") or (None, why not)."""
    ptds = _uses_ptds()
    why = []
    try:
        d = _drv()
        flags = (d.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM if ptds
                 else d.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT)
        addrs = []
        for sym, ver in ((b"cuLaunchKernel", 4000), (b"cuLaunchKernelEx", 11060)):
            res = d.cuGetProcAddress(sym, ver, flags)
            if res[0] != _SUCCESS or not res[1]:
                raise RuntimeError(f"cuGetProcAddress({sym.decode()}) returned {res[0]!r}, pfn={res[1]!r}")
            addrs.append(int(res[1]))
        return _DirectAPI(addrs[0], addrs[1], "cuGetProcAddress"), ""
    except Exception as e:  # noqa: BLE001 - no driver, old bindings ...: try the exported symbols
        why.append(f"cuda.bindings cuGetProcAddress: {e}")
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        suffix = "_ptsz" if ptds else ""
        addrs = [ctypes.cast(getattr(lib, name + suffix), ctypes.c_void_p).value
                 for name in ("cuLaunchKernel", "cuLaunchKernelEx")]
        return _DirectAPI(addrs[0], addrs[1], "libcuda.so.1"), ""
    except (OSError, AttributeError, ValueError) as e:
        why.append(f"libcuda.so.1: {e}")
    return None, "; ".join(why)


def _direct_api() -> Optional[_DirectAPI]:
    global _direct, _direct_why
    if _direct is None:
        with _lock:
            if _direct is None:
                api, _direct_why = _resolve_direct_api()
                _direct = api if api is not None else False
    return _direct or None


def direct_launch_available() -> bool:
    """True when cuLaunchKernel / cuLaunchKernelEx could be resolved for the direct ctypes launch path."""
    return _direct_api() is not None


def resolve_launch_path(path: Optional[str] = None) -> str:
    """The launch path to use: ``path`` or, when None, ``$HUMMING_LAUNCH_PATH`` (default ``"ctypes"``).  ``"ctypes"``
    degrades to ``"bindings"`` when the driver entry points cannot be resolved (silently for the default, with a
    one-time warning when it was asked for explicitly)."""
    global _warned_fallback
    src = "launch_path"
    if path is None:
        src = LAUNCH_PATH_ENV
        path = os.getenv(LAUNCH_PATH_ENV, "").strip().lower()
    explicit = bool(path)
    path = path or "ctypes"
    if path not in LAUNCH_PATHS:
        raise ValueError(f"{src}={path!r} is not a launch path; use 'ctypes' (direct cuLaunchKernel through ctypes, "
                         "the default) or 'bindings' (cuda.bindings.driver.cuLaunchKernel)")
    if path == "ctypes" and _direct_api() is None:
        if explicit and not _warned_fallback:
            _warned_fallback = True
            warnings.warn(f"humming: the 'ctypes' launch path is not available ({_direct_why}); launching through "
                          "cuda.bindings instead", RuntimeWarning, stacklevel=2)
        return "bindings"
    return path


_PDL_WHAT = "cuLaunchKernelEx (programmatic dependent launch)"


def _as_curesult(err):
    """A direct call's int result -> the cuda.bindings CUresult (unknown codes stay ints)."""
    if err.__class__ is not int:
        return err
    try:
        return _drv().CUresult(err)
    except ValueError:
        return err


def arch_for_capability(major: int, minor: int) -> str:
    """Compute capability -> the arch we compile for: ``sm_XY``, with the arch-specific ``a`` from 9.0 on (we use
    wgmma / tcgen05 / setmaxnreg style features that only exist on the ``a`` targets)."""
    return f"sm_{major * 10 + minor}{'a' if major >= 9 else ''}"


def current_arch(device=None) -> Optional[str]:
    """``"sm_90a"`` on an H100/H200, ``"sm_80"`` on an A100 ...; None when torch sees no CUDA GPU."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return None
    try:
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability(device)
    except Exception:  # noqa: BLE001 - a broken driver counts as no GPU here
        return None
    return arch_for_capability(major, minor)


def binary_runs_on(arch: str, output: str, major: int, minor: int) -> bool:
    """Can a binary built for ``arch`` (cubin or PTX) run on a device of compute capability major.minor?"""
    num, suffix = parse_arch(arch)
    dev = major * 10 + minor
    if suffix == "a":
        return dev == num
    if suffix == "f":
        return major == num // 10 and dev >= num
    if output == "ptx":
        return dev >= num
    return major == num // 10 and dev >= num


def _device_index(device) -> int:
    import torch

    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"load_kernel: device must be a CUDA device, got {device!r}")
    return torch.cuda.current_device() if d.index is None else d.index


# ---------------------------------------------------------------------------------------------------------------
# argument handling

ARG_TYPES: Dict[str, Any] = {
    "ptr": ctypes.c_void_p,
    "i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16, "u16": ctypes.c_uint16,
    "i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
    "f32": ctypes.c_float, "f64": ctypes.c_double, "bool": ctypes.c_bool,
}
_INT_LIMITS = {"i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
               "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}


def _ptr_value(v) -> int:
    if v is None:
        return 0
    if isinstance(v, int):
        return v
    dp = getattr(v, "data_ptr", None)
    if dp is not None:
        return dp()
    if isinstance(v, ctypes.c_void_p):
        return v.value or 0
    raise TypeError(f"expected a tensor, an int address or None for a pointer argument, got {type(v).__name__}")


def _cell_for_value(v, i: int, name: str):
    """KernelFunction.launch's generic conversion: tensor -> void*, int -> int32, float -> float32,
    ctypes instance -> as is."""
    if isinstance(v, ctypes._SimpleCData) or isinstance(v, (ctypes.Structure, ctypes.Array)):
        return v
    if isinstance(v, bool):
        return ctypes.c_bool(v)
    if isinstance(v, int):
        if not -2**31 <= v < 2**31:
            raise OverflowError(f"kernel {name}: argument {i} = {v} does not fit int32; pass ctypes.c_int64({v}) "
                                "(or use a Launcher with 'i64')")
        return ctypes.c_int32(v)
    if isinstance(v, float):
        return ctypes.c_float(v)
    if v is None or hasattr(v, "data_ptr"):
        return ctypes.c_void_p(_ptr_value(v))
    raise TypeError(f"kernel {name}: argument {i} has unsupported type {type(v).__name__}; use a tensor, int, "
                    "float, None or a ctypes scalar/struct")


def _dim3(x, what: str) -> Tuple[int, int, int]:
    if isinstance(x, int):
        return x, 1, 1
    if hasattr(x, "__index__"):  # numpy / torch integer scalars
        return operator.index(x), 1, 1
    t = tuple(int(v) for v in x)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"{what} must be an int or a 1-3 tuple, got {x!r}")
    return (t + (1, 1))[:3]


_RAW_STREAM = []   # [torch._C._cuda_getCurrentRawStream or None], resolved on first use


def _current_raw_stream(dev: int) -> int:
    """torch's current stream on ``dev`` as a handle.  ``torch.cuda.current_stream()`` builds a Stream object
    (~5 us per call on the H200 host); the raw accessor torch's own CUDA build exports (the one Triton's launcher
    uses) returns the handle directly.  Falls back to the public API where it is missing."""
    if not _RAW_STREAM:
        import torch

        _RAW_STREAM.append(getattr(torch._C, "_cuda_getCurrentRawStream", None))
    raw = _RAW_STREAM[0]
    if raw is not None:
        return raw(dev)
    import torch

    return torch.cuda.current_stream(dev).cuda_stream


def _stream_handle(stream, dev: int) -> int:
    if stream is None:
        return _current_raw_stream(dev)
    if isinstance(stream, int):
        return stream
    h = getattr(stream, "cuda_stream", None)
    if h is not None:
        return int(h)
    return int(stream)  # CUstream and friends


class KernelFunction:
    """A loaded kernel on one device.  Use :meth:`launch` for occasional launches and :class:`Launcher` on hot
    paths.  Attributes: ``name``, ``key``, ``device``, ``arch``, ``compiled`` (the :class:`CompiledKernel`),
    ``launch_path`` ("ctypes" or "bindings", see :func:`resolve_launch_path`), ``supports_pdl`` (arch >= sm_90)."""

    def __init__(self, compiled: CompiledKernel, device: int, kernel, cufunc_handle, launch_path: Optional[str] = None):
        d = _drv()
        self.compiled = compiled
        self.name = compiled.spec.name
        self.key = compiled.key
        self.arch = compiled.spec.arch
        self.supports_pdl = parse_arch(self.arch)[0] >= 90
        self.device = device
        self._kernel = kernel  # CUkernel
        self._cudev = d.CUdevice(device)
        self._handle = cufunc_handle  # CUfunction wrapping the CUkernel handle (what cuLaunchKernel takes)
        # the raw handle value: cuda.bindings handle objects convert with int() to the handle itself (getPtr() would
        # be the address of the object's storage)
        self._handle_p = ctypes.c_void_p(int(cufunc_handle))
        self._max_smem = 48 * 1024  # the opt-out default of every device
        self._streams: Dict[int, Any] = {}
        self._launch = d.cuLaunchKernel
        self._CUstream = d.CUstream
        self._pdl_attrs_b = None  # cuda.bindings [CUlaunchAttribute] for PDL on the bindings path, built on first use
        self._direct: Optional[_DirectAPI] = None
        self.launch_path = "bindings"
        self.set_launch_path(launch_path)

    def set_launch_path(self, path: Optional[str] = None) -> str:
        """Choose how this function is launched: "ctypes", "bindings" or None (``$HUMMING_LAUNCH_PATH``, default
        "ctypes"); returns the path actually used.  Launchers already built keep the path they were built with."""
        path = resolve_launch_path(path)
        self._direct = _direct_api() if path == "ctypes" else None
        self.launch_path = path
        return path

    # -- attributes -------------------------------------------------------------------------------------------
    def attribute(self, name: str) -> int:
        """A ``CU_FUNC_ATTRIBUTE_*`` value, e.g. ``attribute("NUM_REGS")``, ``"MAX_THREADS_PER_BLOCK"``,
        ``"SHARED_SIZE_BYTES"`` (static smem), ``"LOCAL_SIZE_BYTES"`` (spills)."""
        d = _drv()
        attr = getattr(d.CUfunction_attribute, name if name.startswith("CU_") else f"CU_FUNC_ATTRIBUTE_{name}")
        return int(_check(d.cuKernelGetAttribute(attr, self._kernel, self._cudev),
                          f"cuKernelGetAttribute({name}) of kernel {self.name}"))

    @property
    def num_regs(self) -> int:
        return self.attribute("NUM_REGS")

    @property
    def static_smem(self) -> int:
        return self.attribute("SHARED_SIZE_BYTES")

    @property
    def max_threads_per_block(self) -> int:
        return self.attribute("MAX_THREADS_PER_BLOCK")

    def set_max_smem(self, nbytes: int) -> None:
        """Allow up to ``nbytes`` of dynamic shared memory per block (needed above 48 KiB)."""
        d = _drv()
        nbytes = int(nbytes)
        attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        res = d.cuKernelSetAttribute(attr, nbytes, self._kernel, self._cudev)
        if res[0] != _SUCCESS:
            optin = _check(d.cuDeviceGetAttribute(
                d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self._cudev),
                "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
            static = self.static_smem
            name, desc = _error_text(res[0])
            raise CudaError(f"kernel {self.name}: cannot allow {nbytes} bytes of dynamic shared memory on device "
                            f"{self.device}: {name} ({desc}); the device allows {optin} bytes per block in total "
                            f"and the kernel uses {static} bytes of static shared memory", code=int(res[0]), name=name)
        self._max_smem = nbytes
        carveout = os.environ.get("HUMMING_DEBUG_SMEM_CARVEOUT", "").strip()
        if carveout:
            # experiments only: the preferred shared-memory carveout (percent of the SM's unified L1 / shared memory)
            # of every kernel that takes more than 48 KB -- the driver otherwise picks one per launch
            if not carveout.isdigit() or int(carveout) > 100:
                raise JitError(f"HUMMING_DEBUG_SMEM_CARVEOUT must be a percentage 0..100, got {carveout!r}")
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
            _check(d.cuKernelSetAttribute(attr, int(carveout), self._kernel, self._cudev),
                   f"cuKernelSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT={carveout}) of kernel {self.name}")

    # -- launching ----------------------------------------------------------------------------------------------
    def _cu_stream(self, h: int):
        s = self._streams.get(h)
        if s is None:
            if len(self._streams) > 64:
                self._streams.clear()
            s = self._streams[h] = self._CUstream(h)
        return s

    def _launch_raw(self, gx, gy, gz, bx, by, bz, smem, stream_h: int, params_addr: int) -> None:
        """One launch with the argument array at ``params_addr`` (the generic path; Launchers inline the direct
        call)."""
        if smem > self._max_smem:
            self.set_max_smem(smem)
        if self._direct is not None:
            err = self._direct_call(False, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)
            if err:
                self._direct_failed(err, False, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)
            return
        err = self._launch(self._handle, gx, gy, gz, bx, by, bz, smem, self._cu_stream(stream_h), params_addr, 0)[0]
        if err is not _SUCCESS:
            self._launch_failed(err, (gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr)

    def _launch_raw_bindings(self, gx, gy, gz, bx, by, bz, smem, stream_h: int, params_addr: int) -> None:
        """:meth:`_launch_raw` always through cuda.bindings (Launchers built with ``launch_path="bindings"``)."""
        if smem > self._max_smem:
            self.set_max_smem(smem)
        err = self._launch(self._handle, gx, gy, gz, bx, by, bz, smem, self._cu_stream(stream_h), params_addr, 0)[0]
        if err is not _SUCCESS:
            self._launch_failed(err, (gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr)

    def _launch_raw_pdl(self, gx, gy, gz, bx, by, bz, smem, stream_h: int, params_addr: int) -> None:
        """Like :meth:`_launch_raw`, through cuLaunchKernelEx with programmatic stream serialization (PDL)."""
        if smem > self._max_smem:
            self.set_max_smem(smem)
        if self._direct is not None:
            err = self._direct_call(True, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)
            if err:
                self._direct_failed(err, True, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)
            return
        self._launch_raw_pdl_bindings(gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)

    def _launch_raw_pdl_bindings(self, gx, gy, gz, bx, by, bz, smem, stream_h: int, params_addr: int) -> None:
        """:meth:`_launch_raw_pdl` always through cuda.bindings."""
        if smem > self._max_smem:
            self.set_max_smem(smem)
        err = self._bindings_ex(gx, gy, gz, bx, by, bz, smem, stream_h, params_addr)
        if err is not _SUCCESS:
            self._launch_failed(err, (gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr,
                                relaunch=lambda: self._bindings_ex(gx, gy, gz, bx, by, bz, smem, stream_h, params_addr),
                                what=_PDL_WHAT)

    def _bindings_ex(self, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr):
        d = _drv()
        cfg = d.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = gx, gy, gz
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = bx, by, bz
        cfg.sharedMemBytes = smem
        cfg.hStream = self._cu_stream(stream_h)
        if self._pdl_attrs_b is None:
            attr = d.CUlaunchAttribute()
            attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attr.value.programmaticStreamSerializationAllowed = 1
            self._pdl_attrs_b = [attr]
        cfg.attrs = self._pdl_attrs_b
        cfg.numAttrs = 1
        return d.cuLaunchKernelEx(cfg, self._handle, params_addr, 0)[0]

    def _direct_call(self, pdl: bool, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr, cfg=None) -> int:
        """One direct driver call (values converted with ``operator.index``); returns the CUresult as an int.  With
        ``pdl``, ``cfg`` (a :class:`_LaunchConfig`) is reused when given, else a fresh one is built."""
        ix = operator.index
        gx, gy, gz, bx, by, bz, smem, stream_h = (ix(gx), ix(gy), ix(gz), ix(bx), ix(by), ix(bz), ix(smem),
                                                  ix(stream_h))
        for v, what in ((gx, "grid"), (gy, "grid"), (gz, "grid"), (bx, "block"), (by, "block"), (bz, "block"),
                        (smem, "dynamic smem")):
            if not 0 <= v < 2**32:
                raise OverflowError(f"kernel {self.name}: {what} value {v} does not fit an unsigned 32-bit int")
        params = ctypes.c_void_p(params_addr)
        if pdl:
            if cfg is None:
                cfg = _LaunchConfig(True)
            cfg.set(gx, gy, gz, bx, by, bz, smem, stream_h)
            return self._direct.launch_kernel_ex(cfg.ptr, self._handle_p, params, None)
        return self._direct.launch_kernel(self._handle_p, gx, gy, gz, bx, by, bz, smem, ctypes.c_void_p(stream_h),
                                          params, None)

    def _direct_slow(self, pdl, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr, cfg=None) -> None:
        """A Launcher's inlined direct call could not convert its arguments (e.g. numpy ints): convert and launch."""
        err = self._direct_call(pdl, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr, cfg)
        if err:
            self._direct_failed(err, pdl, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr, cfg)

    def _direct_failed(self, err: int, pdl: bool, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr,
                       cfg=None) -> None:
        self._launch_failed(_as_curesult(err), (gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr,
                            relaunch=lambda: _as_curesult(self._direct_call(pdl, gx, gy, gz, bx, by, bz, smem,
                                                                            stream_h, params_addr, cfg)),
                            what=_PDL_WHAT if pdl else "cuLaunchKernel")

    def _launch_failed(self, err, grid, block, smem, stream_h, params_addr, relaunch: Optional[Callable] = None,
                       what: str = "cuLaunchKernel"):
        if err == _INVALID_CONTEXT:
            # a thread without a current context launching on the legacy default stream: make the device's primary
            # context (the one torch uses) current and retry once
            d = _drv()
            _check(d.cuCtxSetCurrent(_ctx_for(self.device)), "cuCtxSetCurrent")
            if relaunch is None:
                err = self._launch(self._handle, *grid, *block, smem, self._cu_stream(stream_h), params_addr, 0)[0]
            else:
                err = relaunch()
            if err == _SUCCESS:
                return
        name, desc = _error_text(err)
        raise CudaError(f"{what} of {self.name} [{self.arch}] failed: {name} ({desc}); grid={grid} "
                        f"block={block} dynamic smem={smem} stream={stream_h:#x} device={self.device}",
                        code=int(err), name=name)

    def launch(self, grid, block, smem: int = 0, stream=None, args: Sequence[Any] = (), pdl: bool = False) -> None:
        """Launch with generic argument conversion: tensors -> device pointers, Python ints -> int32, floats ->
        float32, None -> NULL, ctypes scalars/structs as given.  ``stream``: None (torch's current stream), an int
        handle, or a torch.cuda.Stream.  ``pdl``: programmatic dependent launch (see the module docstring; ignored
        below sm_90)."""
        cells = [_cell_for_value(v, i, self.name) for i, v in enumerate(args)]
        ptrs = (ctypes.c_void_p * max(1, len(cells)))(*[ctypes.addressof(c) for c in cells])
        gx, gy, gz = _dim3(grid, "grid")
        bx, by, bz = _dim3(block, "block")
        raw = self._launch_raw_pdl if pdl and self.supports_pdl else self._launch_raw
        raw(gx, gy, gz, bx, by, bz, int(smem), _stream_handle(stream, self.device), ctypes.addressof(ptrs))

    def __repr__(self) -> str:
        return f"KernelFunction({self.name!r}, arch={self.arch}, device={self.device}, key={self.key[:12]})"


def load_kernel(compiled: CompiledKernel, device=None) -> KernelFunction:
    """Load ``compiled`` on ``device`` (default: torch's current CUDA device); cached per (key, device)."""
    if not isinstance(compiled, CompiledKernel):
        raise TypeError(f"load_kernel expects a CompiledKernel (from compile_kernel), got {type(compiled).__name__}")
    import torch

    if not torch.cuda.is_available():
        raise JitError(f"load_kernel({compiled.spec.name}): no CUDA GPU is available to torch")
    dev = _device_index(device)
    fk = (compiled.key, dev)
    fn = _functions.get(fk)
    if fn is not None:
        return fn
    with _lock:
        fn = _functions.get(fk)
        if fn is not None:
            return fn
        spec = compiled.spec
        major, minor = torch.cuda.get_device_capability(dev)
        if not binary_runs_on(spec.arch, spec.output, major, minor):
            raise JitError(f"kernel {spec.name} was compiled for {spec.arch} ({spec.output}) and cannot run on "
                           f"device {dev} ({torch.cuda.get_device_name(dev)}, compute capability {major}.{minor}, "
                           f"arch {arch_for_capability(major, minor)}); compile it for that arch "
                           f"(vllm_humming.jit.current_arch())")
        torch.cuda.init()
        d = _drv()
        ctx = _ctx_for(dev)
        lib = _libraries.get(compiled.key)
        if lib is None:
            lib = _check(d.cuLibraryLoadData(compiled.cubin, None, None, 0, None, None, 0),
                         f"cuLibraryLoadData of kernel {spec.name} [{spec.arch}]")
            _libraries[compiled.key] = lib
        kernel = _check(d.cuLibraryGetKernel(lib, spec.name.encode()),
                        f"cuLibraryGetKernel({spec.name!r}) (is it declared extern \"C\" __global__?)")
        # make the kernel resident in this device's primary context now, not lazily at a first launch that might
        # happen during CUDA-graph capture
        _check(d.cuCtxPushCurrent(ctx), "cuCtxPushCurrent")
        try:
            _check(d.cuKernelGetFunction(kernel), f"cuKernelGetFunction({spec.name})")
        finally:
            _check(d.cuCtxPopCurrent(), "cuCtxPopCurrent")
        handle = d.CUfunction(int(kernel))
        fn = KernelFunction(compiled, dev, kernel, handle)
        _functions[fk] = fn
        return fn


def unload_all() -> None:
    """Drop cached functions and unload every library (tests / long-lived processes that rebuild kernels)."""
    with _lock:
        _functions.clear()
        if _drv_mod is not None:
            for lib in _libraries.values():
                _drv_mod.cuLibraryUnload(lib)
        _libraries.clear()


class Launcher:
    """Pre-built argument buffers for one kernel: the per-call work is writing the values and one cuLaunchKernel.

        launcher = Launcher(fn, arg_types=("ptr", "ptr", "i32", "i32", "f32"))
        launcher.launch(grid, block, smem, stream_handle, a, b, m, n, alpha)

    ``arg_types`` items: "ptr" (tensor / int address / None), "i8".."u64", "f32", "f64", "bool", or any ctypes type
    (a ``ctypes.Structure`` or ``c_ubyte * 128`` for by-value structs such as a CUtensorMap; its value is a bytes-like
    object of the struct's size or an instance).  ``stream_handle``: int (e.g. ``torch.cuda.current_stream().
    cuda_stream``), a torch stream, or None for torch's current stream.

    In-place use: ``launcher[i] = value`` updates one argument, ``launcher.launch_prepared(grid, block, smem, stream)``
    launches with the stored values.  A launch copies the argument values, so updating them afterwards (or during
    CUDA-graph capture) never affects work already enqueued.

    ``pdl=True``: programmatic dependent launch through cuLaunchKernelEx (the kernel must ``griddepcontrol.wait``
    before reading what earlier kernels wrote; see the module docstring).  It is not set for kernels built below
    sm_90; ``launcher.pdl`` tells whether it is in effect.  ``launch_path``: "ctypes" / "bindings" / None (the
    function's ``launch_path``); ``launcher.launch_path`` is the one in effect ("custom" for a KernelFunction subclass
    with its own ``_launch_raw``).  Like its argument cells, a Launcher's
    launch config is shared state: use one Launcher per thread.
    """

    def __init__(self, fn: KernelFunction, arg_types: Sequence[Any], check_ranges: bool = False, pdl: bool = False,
                 launch_path: Optional[str] = None):
        if not isinstance(fn, KernelFunction):
            raise TypeError(f"Launcher expects a KernelFunction (from load_kernel), got {type(fn).__name__}")
        self.fn = fn
        self.arg_types = tuple(arg_types)
        self.pdl = bool(pdl) and getattr(fn, "supports_pdl", False)
        if launch_path is None:
            path = getattr(fn, "launch_path", "bindings")
            direct = getattr(fn, "_direct", None) if path == "ctypes" else None
        else:
            path = resolve_launch_path(launch_path)
            direct = _direct_api() if path == "ctypes" else None
        if type(fn)._launch_raw is not KernelFunction._launch_raw:
            # a subclass that launches by itself: always go through its _launch_raw
            path, direct, raw = "custom", None, (fn._launch_raw_pdl if self.pdl else fn._launch_raw)
        else:
            raw = fn._launch_raw_pdl_bindings if self.pdl else fn._launch_raw_bindings
        self.launch_path = path
        self._direct = direct
        self._cells = []
        setters = []
        for i, t in enumerate(self.arg_types):
            if isinstance(t, str):
                if t not in ARG_TYPES:
                    raise ValueError(f"Launcher for {fn.name}: unknown arg type {t!r} at position {i}; use one of "
                                     f"{', '.join(ARG_TYPES)} or a ctypes type")
                cell = ARG_TYPES[t]()
            elif isinstance(t, type) and issubclass(t, (ctypes._SimpleCData, ctypes.Structure, ctypes.Array)):
                cell = t()
            else:
                raise ValueError(f"Launcher for {fn.name}: arg type {t!r} at position {i} is neither a type name nor "
                                 "a ctypes type")
            self._cells.append(cell)
            setters.append(self._make_setter(i, t, cell, check_ranges))
        self._setters = tuple(setters)
        self._n = len(self._cells)
        self._ptrs = (ctypes.c_void_p * max(1, self._n))(*[ctypes.addressof(c) for c in self._cells])
        self._params = ctypes.addressof(self._ptrs)
        self._params_p = ctypes.c_void_p(self._params)
        self._config = _LaunchConfig(True) if self.pdl and self._direct is not None else None
        self._launch_raw = raw  # used when the direct call is not inlined
        self._dev = fn.device
        self.launch, self.launch_prepared = self._specialize()

    @property
    def mode(self) -> str:
        """How a launch reaches the driver: "ctypes" (inlined cuLaunchKernel), "ctypes-pdl" (inlined
        cuLaunchKernelEx with the PDL attribute), "raw" (cuda.bindings through the function's
        ``_launch_raw_bindings``, or a subclass's own ``_launch_raw``) or "raw-pdl"."""
        if self._direct is not None:
            return "ctypes-pdl" if self.pdl else "ctypes"
        return "raw-pdl" if self.pdl else "raw"

    def _specialize(self):
        """Generate ``launch`` and ``launch_prepared`` for these argument types: each value is written straight into
        its ctypes cell (no per-argument function call), then one driver call: inlined through ctypes on the
        "ctypes" path, ``_launch_raw`` otherwise.  Same behaviour as the :meth:`launch` / :meth:`launch_prepared`
        methods below."""
        env = {"_dim3": _dim3, "_stream_handle": _stream_handle, "_self": self, "_n": self._n,
               "_raw": self._launch_raw, "_params": self._params, "_dev": self._dev, "_fn": self.fn,
               "_P": ctypes.c_void_p, "_ArgErr": ctypes.ArgumentError, "_pp": self._params_p}
        body = ["    c = grid.__class__",
                "    if c is tuple and len(grid) == 3:",
                "        gx, gy, gz = grid",
                "    elif c is int:",
                "        gx, gy, gz = grid, 1, 1",
                "    else:",
                "        gx, gy, gz = _dim3(grid, 'grid')",
                "    c = block.__class__",
                "    if c is int:",
                "        bx, by, bz = block, 1, 1",
                "    elif c is tuple and len(block) == 3:",
                "        bx, by, bz = block",
                "    else:",
                "        bx, by, bz = _dim3(block, 'block')",
                "    if stream.__class__ is not int:",
                "        stream = _stream_handle(stream, _dev)"]
        mode = self.mode
        if mode.startswith("raw"):
            body.append("    _raw(gx, gy, gz, bx, by, bz, smem, stream, _params)")
        else:
            env["_h"] = self.fn._handle_p
            body += ["    if smem > _fn._max_smem:",
                     "        _fn.set_max_smem(smem)"]
            if mode == "ctypes":
                env["_cu"] = self._direct.launch_kernel
                # ctypes would pass ints >= 2**32 truncated: out-of-range or non-int values take the checking path
                body += ["    try:",
                         "        if (gx | gy | gz | bx | by | bz | smem) >> 32:",
                         "            raise _ArgErr",
                         "        err = _cu(_h, gx, gy, gz, bx, by, bz, smem, _P(stream), _pp, None)",
                         "    except (_ArgErr, TypeError):",
                         "        return _fn._direct_slow(False, gx, gy, gz, bx, by, bz, smem, stream, _params)",
                         "    if err:",
                         "        _fn._direct_failed(err, False, gx, gy, gz, bx, by, bz, smem, stream, _params)"]
            else:
                env.update(_cuex=self._direct.launch_kernel_ex, _cfg=self._config, _cfgc=self._config.config,
                           _cfgp=self._config.ptr, _pack=_pack_config)
                body += ["    try:",
                         "        _pack(_cfgc, 0, gx, gy, gz, bx, by, bz, smem, stream)",
                         "    except Exception:",
                         "        return _fn._direct_slow(True, gx, gy, gz, bx, by, bz, smem, stream, _params, _cfg)",
                         "    err = _cuex(_cfgp, _h, _pp, None)",
                         "    if err:",
                         "        _fn._direct_failed(err, True, gx, gy, gz, bx, by, bz, smem, stream, _params, _cfg)"]
        lines = ["def launch(grid, block, smem, stream, *values):",
                 "    if len(values) != _n:",
                 "        _self._wrong_count(values)"]
        if self._n:
            lines.append("    " + ", ".join(f"v{i}" for i in range(self._n)) + (", = values" if self._n == 1
                                                                                   else " = values"))
        for i, (t, cell, setter) in enumerate(zip(self.arg_types, self._cells, self._setters)):
            env[f"c{i}"], env[f"s{i}"] = cell, setter
            if t == "ptr":
                lines.append(f"    c{i}.value = v{i} if v{i}.__class__ is int else "
                             f"(v{i}.data_ptr() if v{i} is not None else 0)")
            elif setter.__name__ == "set_scalar":
                lines.append(f"    c{i}.value = v{i}")
            else:
                lines.append(f"    s{i}(v{i})")
        lines += body
        lines += ["", "", "def launch_prepared(grid, block, smem, stream):"] + body
        src = "\n".join(lines)
        exec(compile(src, f"<humming Launcher {self.fn.name} {mode}>", "exec"), env)  # noqa: S102
        launch, prepared = env["launch"], env["launch_prepared"]
        launch.__doc__ = Launcher.launch.__doc__
        prepared.__doc__ = Launcher.launch_prepared.__doc__
        self._source = src
        return launch, prepared

    def _wrong_count(self, values):
        raise TypeError(f"Launcher for {self.fn.name}: expected {self._n} kernel arguments "
                        f"{self.arg_types}, got {len(values)}")

    def _make_setter(self, i: int, t, cell, check_ranges: bool):
        name = self.fn.name
        if t == "ptr":
            def set_ptr(v, cell=cell):
                cell.value = v if v.__class__ is int else (v.data_ptr() if v is not None else 0)
            return set_ptr
        if isinstance(t, str) and t in _INT_LIMITS and check_ranges:
            lo, hi = _INT_LIMITS[t]

            def set_int_checked(v, cell=cell):
                if not lo <= v <= hi:
                    raise OverflowError(f"kernel {name}: argument {i} = {v} does not fit {t}")
                cell.value = v
            return set_int_checked
        if isinstance(t, str) or issubclass(t, ctypes._SimpleCData):
            def set_scalar(v, cell=cell):
                cell.value = v
            return set_scalar
        size = ctypes.sizeof(cell)

        def set_bytes(v, cell=cell):
            if isinstance(v, (ctypes.Structure, ctypes.Array)):
                v = bytes(v)
            mv = memoryview(v).cast("B")
            if mv.nbytes != size:
                raise ValueError(f"kernel {name}: argument {i} needs {size} bytes, got {mv.nbytes}")
            ctypes.memmove(ctypes.addressof(cell), bytes(mv), size)
        return set_bytes

    def bind(self, grid, block, smem: int, values: Sequence[Any], varying: Sequence[int]) -> Callable[..., None]:
        """A launch with everything fixed but the POINTER arguments at positions ``varying``: grid, block, dynamic
        smem and every other value are written once, into cells of their own (the returned launch shares no state
        with this Launcher or with other bound launches).  The returned ``launch(*ptrs)`` takes one int address per
        varying position, in order, and launches on torch's current stream.  ``launch.arg_cells``: the argument cells, for
        by-value arguments a caller rewrites in place between launches (a TMA map: jit/tma.py XMapSlot).  On the ctypes path a call writes the
        addresses and the stream into prebuilt buffers and makes one ``cuLaunchKernelEx`` call with four
        pre-converted arguments -- the cheapest launch Python can make (the eager hot path of a GEMM layer)."""
        if len(values) != self._n:
            self._wrong_count(values)
        varying = tuple(int(i) for i in varying)
        for i in varying:
            if not 0 <= i < self._n or self.arg_types[i] != "ptr":
                raise ValueError(f"Launcher.bind for {self.fn.name}: varying position {i} is not a 'ptr' argument "
                                 f"of {self.arg_types}")
        own = Launcher(self.fn, self.arg_types, pdl=self.pdl,
                       launch_path=None if self.launch_path == "custom" else self.launch_path)
        for i, v in enumerate(values):
            own[i] = 0 if i in varying else v
        gx, gy, gz = _dim3(grid, "grid")
        bx, by, bz = _dim3(block, "block")
        smem = int(smem)
        cells = [own._cells[i] for i in varying]
        fn, dev = self.fn, self._dev
        if own._direct is None:
            # no direct driver entry point: the prepared launch of the private Launcher
            prepared = own.launch_prepared
            dims = ((gx, gy, gz), (bx, by, bz))

            def launch(*ptrs):
                for c, p in zip(cells, ptrs):
                    c.value = p
                prepared(dims[0], dims[1], smem, None)
            launch.arg_cells = tuple(own._cells)
            return launch
        if smem > fn._max_smem:
            fn.set_max_smem(smem)
        cfg = _LaunchConfig(own.pdl)
        cfg.set(gx, gy, gz, bx, by, bz, smem, 0)
        env = {"_cfgc": cfg.config, "_cfgp": cfg.ptr, "_cfg": cfg, "_h": fn._handle_p, "_pp": own._params_p,
               "_params": own._params, "_cuex": own._direct.launch_kernel_ex, "_stream": _current_raw_stream,
               "_dev": dev, "_fn": fn, "_own": own, "_pdl": own.pdl, "_put_stream": _STREAM_FIELD.pack_into,
               "_dims": (gx, gy, gz, bx, by, bz, smem)}
        args = ", ".join(f"p{j}" for j in range(len(varying)))
        lines = [f"def launch({args}):"]
        for j in range(len(varying)):
            env[f"c{j}"] = cells[j]
            lines.append(f"    c{j}.value = p{j}")
        lines += ["    s = _stream(_dev)",
                  "    _put_stream(_cfgc, 32, s)",
                  "    err = _cuex(_cfgp, _h, _pp, None)",
                  "    if err:",
                  "        _fn._direct_failed(err, _pdl, *_dims, s, _params, _cfg)"]
        exec(compile("\n".join(lines), f"<humming bound launch {fn.name}>", "exec"), env)  # noqa: S102
        launch = env["launch"]
        launch._keepalive = own      # the argument cells live in the private Launcher
        launch.arg_cells = tuple(own._cells)
        return launch

    def __setitem__(self, i: int, v) -> None:
        self._setters[i](v)

    def __len__(self) -> int:
        return self._n

    def launch(self, grid, block, smem, stream, *values) -> None:  # replaced per instance by _specialize()
        """Write ``values`` (one per kernel parameter) into the argument cells and launch."""
        if len(values) != self._n:
            self._wrong_count(values)
        for s, v in zip(self._setters, values):
            s(v)
        self.launch_prepared(grid, block, smem, stream)

    def launch_prepared(self, grid, block, smem, stream) -> None:  # replaced per instance by _specialize()
        """Launch with the argument values already stored (``launcher[i] = v``)."""
        c = grid.__class__
        if c is tuple and len(grid) == 3:
            gx, gy, gz = grid
        elif c is int:
            gx, gy, gz = grid, 1, 1
        else:
            gx, gy, gz = _dim3(grid, "grid")
        c = block.__class__
        if c is int:
            bx, by, bz = block, 1, 1
        elif c is tuple and len(block) == 3:
            bx, by, bz = block
        else:
            bx, by, bz = _dim3(block, "block")
        if stream.__class__ is not int:
            stream = _stream_handle(stream, self._dev)
        self._launch_raw(gx, gy, gz, bx, by, bz, smem, stream, self._params)
