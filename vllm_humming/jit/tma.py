"""Host side of the TMA tensor maps (kernels/include/humming/tma.cuh): a CUtensorMap -- 128 opaque bytes built by the
driver's ``cuTensorMapEncodeTiled`` -- that describes a row-major 2-D matrix of 16-bit elements and the box one copy
moves (``box_rows`` rows x 64 columns, 128-byte swizzle, zeros outside the matrix).  The GEMM kernels take it by value
as a ``__grid_constant__`` parameter.

    enc = TileMapEncoder(torch.bfloat16, box_rows=128)
    raw = enc.encode(x.data_ptr(), rows=M, cols=K)        # bytes, 128 long
    XMapSlot(cell, enc, rows=M, cols=K).update(x.data_ptr())  # re-encodes into a Launcher argument cell on change

The map holds x's address, so it changes with x.  Encoding goes straight to the driver entry point through ctypes
(``cuGetProcAddress``, like the launch path in :mod:`.launch`): a few microseconds, and an :class:`XMapSlot` only
re-encodes when the address differs from its last call (a small per-slot cache covers buffers that alternate).
Under CUDA-graph capture the launch copies the map like any other argument value.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict, Optional

import torch

from .errors import CudaError, JitSetupError

__all__ = ["MAP_BYTES", "TileMapEncoder", "XMapSlot", "map_arg_type"]

MAP_BYTES = 128
BOX_COLS = 64            # one 64-column atom = 128 bytes of 16-bit elements = the 128-byte swizzle span
_ALIGN = 64              # cuTensorMapEncodeTiled writes to a 64-byte aligned CUtensorMap
_lock = threading.Lock()
_encode_fn = None        # the ctypes function, or False when it could not be resolved

# CUresult cuTensorMapEncodeTiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t rank, void* globalAddress,
#     const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
#     const cuuint32_t* elementStrides, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
#     CUtensorMapFloatOOBfill)
_ENCODE_PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_int, ctypes.c_int)


def map_arg_type():
    """The Launcher argument type of a map (a by-value 128-byte struct)."""
    return ctypes.c_ubyte * MAP_BYTES


def _enums():
    from cuda.bindings import driver as d

    return {
        torch.bfloat16: int(d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16),
        torch.float16: int(d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16),
        "interleave_none": int(d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE),
        "swizzle_128b": int(d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B),
        "l2_256b": int(d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
        "oob_zero": int(d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),   # NONE = zeros
    }


def _resolve_encode():
    global _encode_fn
    if _encode_fn is None:
        with _lock:
            if _encode_fn is None:
                try:
                    from cuda.bindings import driver as d

                    res = d.cuGetProcAddress(b"cuTensorMapEncodeTiled", 12000,
                                             d.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT)
                    if res[0] != d.CUresult.CUDA_SUCCESS or not res[1]:
                        raise RuntimeError(f"cuGetProcAddress returned {res[0]!r}")
                    _encode_fn = _ENCODE_PROTO(int(res[1]))
                except Exception as e:  # noqa: BLE001 - no driver / bindings: say so at the first use
                    _encode_fn = False
                    _resolve_encode.why = f"{type(e).__name__}: {e}"
    if _encode_fn is False:
        raise JitSetupError("TMA tensor maps need the CUDA driver's cuTensorMapEncodeTiled (sm_90+ GPU, driver >= 12.0, "
                            f"cuda-bindings): {getattr(_resolve_encode, 'why', 'unavailable')}")
    return _encode_fn


class TileMapEncoder:
    """Encodes maps of [rows, cols] row-major 16-bit matrices (row stride = cols elements) with a box of ``box_rows``
    x 64 columns, 128-byte swizzle, L2 promotion of 256 bytes, zero fill outside the matrix.  One encoder per
    (dtype, box): its ctypes buffers are reused, so use it from one thread at a time."""

    def __init__(self, dtype: torch.dtype, box_rows: int):
        if dtype not in (torch.bfloat16, torch.float16):
            raise ValueError(f"TMA tile maps here are for bfloat16 / float16 matrices, not {dtype}")
        if not 1 <= box_rows <= 256:
            raise ValueError(f"a TMA box has 1..256 rows, got {box_rows}")
        self.dtype = dtype
        self.box_rows = box_rows
        self._fn = _resolve_encode()
        e = _enums()
        self._dtype_code = e[dtype]
        self._modes = (e["interleave_none"], e["swizzle_128b"], e["l2_256b"], e["oob_zero"])
        self._raw = (ctypes.c_ubyte * (MAP_BYTES + _ALIGN))()
        addr = ctypes.addressof(self._raw)
        self._out = addr + (-addr) % _ALIGN
        self._dims = (ctypes.c_uint64 * 2)()
        self._strides = (ctypes.c_uint64 * 1)()
        self._box = (ctypes.c_uint32 * 2)(BOX_COLS, box_rows)
        self._estr = (ctypes.c_uint32 * 2)(1, 1)
        self._args_tail = (ctypes.addressof(self._dims), ctypes.addressof(self._strides), ctypes.addressof(self._box),
                           ctypes.addressof(self._estr))

    def encode_into(self, dst_addr: int, ptr: int, rows: int, cols: int) -> None:
        """Write the map of the matrix at device address ``ptr`` to host memory at ``dst_addr`` (128 bytes)."""
        if ptr % 16 or cols % 8 or rows < 1 or cols < 1:
            raise ValueError(f"TMA map of a [{rows}, {cols}] matrix at 0x{ptr:x}: the address must be 16-byte aligned "
                             "and the row (cols x 2 bytes) a multiple of 16 bytes")
        self._dims[0] = cols
        self._dims[1] = rows
        self._strides[0] = cols * 2
        dims, strides, box, estr = self._args_tail
        err = self._fn(ctypes.c_void_p(self._out), self._dtype_code, 2, ctypes.c_void_p(ptr), ctypes.c_void_p(dims),
                       ctypes.c_void_p(strides), ctypes.c_void_p(box), ctypes.c_void_p(estr), *self._modes)
        if err:
            raise CudaError(f"cuTensorMapEncodeTiled failed (CUresult {err}) for a [{rows}, {cols}] {self.dtype} matrix "
                            f"at 0x{ptr:x}, box {self.box_rows} x {BOX_COLS}")
        ctypes.memmove(dst_addr, self._out, MAP_BYTES)

    def encode(self, ptr: int, rows: int, cols: int) -> bytes:
        buf = (ctypes.c_ubyte * MAP_BYTES)()
        self.encode_into(ctypes.addressof(buf), ptr, rows, cols)
        return bytes(buf)


class XMapSlot:
    """The map argument of one bound launch (a Launcher cell) for a fixed [rows, cols] shape: :meth:`update` puts
    the map of the matrix at ``ptr`` into the cell -- a no-op when ``ptr`` is the last one, a copy from a small cache
    of earlier addresses, or an encode."""

    _CACHE = 16

    def __init__(self, cell, encoder: TileMapEncoder, rows: int, cols: int):
        if ctypes.sizeof(cell) != MAP_BYTES:
            raise ValueError(f"XMapSlot: the cell holds {ctypes.sizeof(cell)} bytes, a map {MAP_BYTES}")
        self._cell = cell
        self._addr = ctypes.addressof(cell)
        self.encoder = encoder
        self.rows = rows
        self.cols = cols
        self._last: Optional[int] = None
        self._cache: Dict[int, bytes] = {}

    def update(self, ptr: int) -> None:
        if ptr == self._last:
            return
        raw = self._cache.get(ptr)
        if raw is None:
            raw = self.encoder.encode(ptr, self.rows, self.cols)
            if len(self._cache) >= self._CACHE:
                self._cache.clear()
            self._cache[ptr] = raw
        ctypes.memmove(self._addr, raw, MAP_BYTES)
        self._last = ptr
