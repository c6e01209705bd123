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

Nothing here runs at import: the module imports without a GPU and without cuda-bindings.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Dict, Optional, Sequence, Tuple

from .errors import CudaError, JitError, JitSetupError
from .spec import CompiledKernel, parse_arch

__all__ = ["load_kernel", "KernelFunction", "Launcher", "current_arch", "arch_for_capability", "binary_runs_on",
           "ARG_TYPES", "unload_all"]

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
    t = tuple(int(v) for v in x)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"{what} must be an int or a 1-3 tuple, got {x!r}")
    return (t + (1, 1))[:3]


def _stream_handle(stream, dev: int) -> int:
    if stream is None:
        import torch

        return torch.cuda.current_stream(dev).cuda_stream
    if isinstance(stream, int):
        return stream
    h = getattr(stream, "cuda_stream", None)
    if h is not None:
        return int(h)
    return int(stream)  # CUstream and friends


class KernelFunction:
    """A loaded kernel on one device.  Use :meth:`launch` for occasional launches and :class:`Launcher` on hot
    paths.  Attributes: ``name``, ``key``, ``device``, ``arch``, ``compiled`` (the :class:`CompiledKernel`)."""

    def __init__(self, compiled: CompiledKernel, device: int, kernel, cufunc_handle):
        d = _drv()
        self.compiled = compiled
        self.name = compiled.spec.name
        self.key = compiled.key
        self.arch = compiled.spec.arch
        self.device = device
        self._kernel = kernel  # CUkernel
        self._cudev = d.CUdevice(device)
        self._handle = cufunc_handle  # CUfunction wrapping the CUkernel handle (what cuLaunchKernel takes)
        self._max_smem = 48 * 1024  # the opt-out default of every device
        self._streams: Dict[int, Any] = {}
        self._launch = d.cuLaunchKernel
        self._CUstream = d.CUstream

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

    # -- launching ----------------------------------------------------------------------------------------------
    def _cu_stream(self, h: int):
        s = self._streams.get(h)
        if s is None:
            if len(self._streams) > 64:
                self._streams.clear()
            s = self._streams[h] = self._CUstream(h)
        return s

    def _launch_raw(self, gx, gy, gz, bx, by, bz, smem, stream_h: int, params_addr: int) -> None:
        if smem > self._max_smem:
            self.set_max_smem(smem)
        err = self._launch(self._handle, gx, gy, gz, bx, by, bz, smem, self._cu_stream(stream_h), params_addr, 0)[0]
        if err is not _SUCCESS:
            self._launch_failed(err, (gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr)

    def _launch_failed(self, err, grid, block, smem, stream_h, params_addr):
        if err == _INVALID_CONTEXT:
            # a thread without a current context launching on the legacy default stream: make the device's primary
            # context (the one torch uses) current and retry once
            d = _drv()
            _check(d.cuCtxSetCurrent(_ctx_for(self.device)), "cuCtxSetCurrent")
            err = self._launch(self._handle, *grid, *block, smem, self._cu_stream(stream_h), params_addr, 0)[0]
            if err == _SUCCESS:
                return
        name, desc = _error_text(err)
        raise CudaError(f"cuLaunchKernel of {self.name} [{self.arch}] failed: {name} ({desc}); grid={grid} "
                        f"block={block} dynamic smem={smem} stream={stream_h:#x} device={self.device}",
                        code=int(err), name=name)

    def launch(self, grid, block, smem: int = 0, stream=None, args: Sequence[Any] = ()) -> None:
        """Launch with generic argument conversion: tensors -> device pointers, Python ints -> int32, floats ->
        float32, None -> NULL, ctypes scalars/structs as given.  ``stream``: None (torch's current stream), an int
        handle, or a torch.cuda.Stream."""
        cells = [_cell_for_value(v, i, self.name) for i, v in enumerate(args)]
        ptrs = (ctypes.c_void_p * max(1, len(cells)))(*[ctypes.addressof(c) for c in cells])
        gx, gy, gz = _dim3(grid, "grid")
        bx, by, bz = _dim3(block, "block")
        self._launch_raw(gx, gy, gz, bx, by, bz, int(smem), _stream_handle(stream, self.device),
                         ctypes.addressof(ptrs))

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
    """

    def __init__(self, fn: KernelFunction, arg_types: Sequence[Any], check_ranges: bool = False):
        if not isinstance(fn, KernelFunction):
            raise TypeError(f"Launcher expects a KernelFunction (from load_kernel), got {type(fn).__name__}")
        self.fn = fn
        self.arg_types = tuple(arg_types)
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
        self._launch_raw = fn._launch_raw
        self._dev = fn.device
        self.launch = self._specialize()

    def _specialize(self):
        """Generate ``launch`` for these argument types: each value is written straight into its ctypes cell (no
        per-argument function call), then one ``_launch_raw``.  Same behaviour as :meth:`launch` below."""
        env = {"_dim3": _dim3, "_stream_handle": _stream_handle, "_self": self, "_n": self._n,
               "_raw": self._launch_raw, "_params": self._params, "_dev": self._dev}
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
        lines += [
            "    c = grid.__class__",
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
            "        stream = _stream_handle(stream, _dev)",
            "    _raw(gx, gy, gz, bx, by, bz, smem, stream, _params)",
        ]
        exec(compile("\n".join(lines), f"<humming Launcher {self.fn.name}>", "exec"), env)  # noqa: S102
        fn = env["launch"]
        fn.__doc__ = Launcher.launch.__doc__
        return fn

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

    def launch_prepared(self, grid, block, smem, stream) -> None:
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
