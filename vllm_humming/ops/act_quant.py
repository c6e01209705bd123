"""Quantized activations on the GPU (W8A8, W4A8, W4A4): ``x -> dequant(quant(x))`` in the GEMM's 16-bit type.

    q = ActQuantizer(act, out_dtype, device, static_scale=None, name="layer")
    xq = q(x2)              # x2 [M, K] bf16 / fp16 / fp32 -> xq [M, K] out_dtype, on the current torch stream

The values are ``reference.dequantize_activations(*reference.quantize_activations(x2, act, static_scale))`` --
the same scales (absmax per tensor / token / group, rounded to the scale dtype, e8m0's floor rule), the same codes
(round to nearest even, saturating) -- rounded once to ``out_dtype``.  A quantized-activation layer then runs the
WnA16 GEMM on them (``QuantActGemm`` in :mod:`vllm_humming.ops.linear`), so every weight format the GEMM kernels
take combines with every activation description.  Kernels: ``kernels/include/humming/act_quant.cuh`` (modes,
threads) and ``quant_grid.cuh`` (the grids and scale encoders, also compiled as host C++ by the tests).

One compiled kernel per (activation description, input dtype, output dtype, aligned-or-not), plus a small absmax
kernel for dynamic per-tensor scales.  Nothing here runs at import.
"""

from __future__ import annotations

import hashlib
import os
import struct
from typing import List, Optional, Tuple

import torch

from ..desc import ActDesc, DescError, ScaleSpec
from ..dtypes import BF16, E8M0, FP16, FP32, FloatType, IntType

__all__ = ["THREADS", "REG_STEPS", "AMAX_BLOCKS", "grid_cpp", "scale_cpp", "act_mode", "act_quant_unsupported_reason",
           "act_quant_targs", "act_amax_targs", "act_quant_source", "act_amax_source", "act_quant_specs",
           "ActQuantizer", "QuantActGemm"]

# Threads per block and chunks (8 columns) per thread held in registers at once: a batch of 512 x 8 x 2 = 8192
# columns, all its loads in flight together (a per-token row of K <= 8192 is read once).  Measured on the H200
# (session 34, scripts/exp_act_quant.py, the quantizer alone back to back, fp8 per-token, M=1): 2.2 / 5.2 us at
# K = 4096 / 14336; 256 x 8: 3.3 / 7.5; 128 x 4: 4.3 / 13.5; session 33's 128 threads, one chunk per step, two
# passes: ~5 / ~15.
# The kernels release the next (PDL) launch right after their griddepcontrol.wait: at M=1 that took the W4A8 int4
# layer from 10.7 / 24.5 / 18.2 to 9.4 / 23.3 / 16.1 us on the bench shapes (NOTES.md, session 34).
THREADS = 512
REG_STEPS = 2


def _debug_launch_shape() -> Tuple[int, int, Optional[bool], bool]:
    """HUMMING_DEBUG_ACT_QUANT=THREADS,REG_STEPS[,PDL[,LATE]] (experiments only): the quantize kernels' block size,
    chunks per thread in registers, programmatic dependent launch (0 / 1; default: HUMMING_PDL) and LATE=1: release
    the next launch only when the grid ends (no griddepcontrol.launch_dependents)."""
    v = os.environ.get("HUMMING_DEBUG_ACT_QUANT", "").strip()
    if not v:
        return THREADS, REG_STEPS, None, False
    parts = v.split(",")
    try:
        t, r = int(parts[0]), int(parts[1])
        flags = [{"0": False, "1": True}[p.strip()] for p in parts[2:]]
    except (ValueError, IndexError, KeyError):
        raise DescError(f"HUMMING_DEBUG_ACT_QUANT takes THREADS,REG_STEPS[,PDL 0|1[,LATE 0|1]], got {v!r}") from None
    if t % 32 or not 32 <= t <= 1024 or not 1 <= r <= 32 or len(parts) > 4:
        raise DescError(f"HUMMING_DEBUG_ACT_QUANT: threads a multiple of 32 in 32..1024, 1..32 chunks, got {v!r}")
    return t, r, (flags[0] if flags else None), (len(flags) > 1 and flags[1])
AMAX_BLOCKS = 264      # most blocks of the partial-absmax kernel (dynamic per-tensor scales): 2 per H200 SM
_IN_CTYPE = {torch.bfloat16: "__nv_bfloat16", torch.float16: "__half", torch.float32: "float"}
_OUT_CTYPE = {torch.bfloat16: "__nv_bfloat16", torch.float16: "__half"}
_MODES = {"static": 0, "tensor": 1, "token": 2, "group": 3}
_INT32_MAX = (1 << 31) - 1


def _f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def grid_cpp(dt) -> str:
    """The C++ grid type (quant_grid.cuh) of an activation code dtype."""
    if isinstance(dt, IntType):
        return f"humming::IntGrid<{int(dt.min)}, {int(dt.max)}>"
    if isinstance(dt, FloatType) and dt.bits <= 8 and dt.nan != "e8m0":
        mx = float(dt.max)
        if _f32_bits(mx) != _f32_bits(float(torch.tensor(mx, dtype=torch.float32))):
            raise DescError(f"{dt}: largest value {mx} is not a float32")
        return f"humming::FloatGrid<{dt.man_bits}, {dt.min_exponent}, 0x{_f32_bits(mx):08x}u>"
    raise DescError(f"{dt} is not a code type activations quantize to")


def _smallest_positive(dt) -> float:
    t = dt.decode_table()
    return float(t[torch.isfinite(t) & (t > 0)].min())


def scale_cpp(spec: ScaleSpec, code_dtype) -> str:
    """The C++ encoder (quant_grid.cuh / act_quant.cuh) turning a group's absmax into its scale value."""
    d = spec.dtype
    if d == FP32:
        return "humming::ScaleF32"
    if d == BF16:
        return "humming::Scale16<__nv_bfloat16>"
    if d == FP16:
        return "humming::Scale16<__half>"
    if d == E8M0:
        from ..reference import _symmetric_qmax
        import math

        emax = math.floor(math.log2(_symmetric_qmax(code_dtype, f"activation dtype {code_dtype}")))
        return f"humming::ScaleE8M0<{emax}>"
    if isinstance(d, FloatType) and d.bits <= 8:
        return f"humming::ScaleGrid<{grid_cpp(d)}, 0x{_f32_bits(_smallest_positive(d)):08x}u>"
    raise DescError(f"activation scale dtype {d} has no encoder")


def act_mode(act: ActDesc) -> Tuple[int, int]:
    """(kernel scale mode, group size) of a quantized activation description."""
    g = act.scale.granularity
    if not act.dynamic:
        return _MODES["static"], 0
    return _MODES[g], (act.scale.group_size if g == "group" else 0)


def act_quant_unsupported_reason(act: ActDesc, out_dtype: torch.dtype, k_perm: bool = False) -> str:
    """Why the activation-quantization kernel cannot serve this description ('' when it can)."""
    if act is None or not act.quantized:
        return "activations are not quantized"
    if out_dtype not in _OUT_CTYPE:
        return f"quantized activations are handed to the GEMM as bfloat16 or float16, not {out_dtype}"
    mode, group = act_mode(act)
    if mode == _MODES["group"]:
        if group % 8 or group > 256 or (group // 8) & (group // 8 - 1):
            return f"activation group size {group}: the kernel takes powers of two 16..256"
        if k_perm:
            return ("activation group scales with an act-order (k_perm) weight: the groups would follow the permuted "
                    "columns; not supported on the GPU kernels")
    try:
        grid_cpp(act.dtype)
        if act.dynamic:
            scale_cpp(act.scale, act.dtype)
    except DescError as e:
        return str(e)
    return ""


def _check(act: ActDesc, out_dtype: torch.dtype, in_dtype: Optional[torch.dtype] = None) -> None:
    reason = act_quant_unsupported_reason(act, out_dtype)
    if reason:
        raise DescError(f"activation quantization {act}: {reason}")
    if in_dtype is not None and in_dtype not in _IN_CTYPE:
        raise DescError(f"activation quantization {act}: input dtype {in_dtype}; supported bfloat16, float16, float32")


def act_quant_targs(act: ActDesc, in_dtype: torch.dtype, out_dtype: torch.dtype, vec: bool,
                    threads: int = THREADS, reg_steps: int = REG_STEPS) -> str:
    """The template arguments of ``humming::act_quant_rows`` for one (description, input dtype, output dtype)."""
    _check(act, out_dtype, in_dtype)
    mode, group = act_mode(act)
    scale = scale_cpp(act.scale, act.dtype) if act.dynamic else "humming::ScaleF32"
    s2 = act.scale2 is not None
    return (f"{_IN_CTYPE[in_dtype]}, {_OUT_CTYPE[out_dtype]}, {grid_cpp(act.dtype)}, {scale}, {mode}, {group}, "
            f"{'true' if s2 else 'false'}, {'true' if vec else 'false'}, {threads}, {reg_steps}")


def act_quant_source(act: ActDesc, in_dtype: torch.dtype, out_dtype: torch.dtype, vec: bool,
                     threads: int = THREADS, reg_steps: int = REG_STEPS) -> Tuple[str, str]:
    """(kernel name, generated .cu source) of the quantize kernel for one (description, input dtype, output dtype)."""
    targs = act_quant_targs(act, in_dtype, out_dtype, vec, threads, reg_steps)
    name = "humming_act_quant_" + hashlib.sha1(targs.encode()).hexdigest()[:16]
    src = f"""// generated by vllm_humming.ops.act_quant -- one instantiation of kernels/include/humming/act_quant.cuh
// activations: {act}
// input {in_dtype} -> output {out_dtype}, {'16-byte vectors' if vec else 'element by element'}
#include "humming/act_quant.cuh"
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    const {_IN_CTYPE[in_dtype]}* x, long long ldx, {_OUT_CTYPE[out_dtype]}* out, int M, int K, const float* static_scale,
    const float* s2, const float* partials, int num_partials) {{
  humming::act_quant_rows<{targs}>(x, ldx, out, M, K, static_scale, s2, partials, num_partials);
}}
"""
    return name, src


def act_amax_targs(in_dtype: torch.dtype, vec: bool, threads: int = THREADS, reg_steps: int = REG_STEPS) -> str:
    """The template arguments of ``humming::act_amax_partials``."""
    if in_dtype not in _IN_CTYPE:
        raise DescError(f"activation absmax: input dtype {in_dtype}; supported bfloat16, float16, float32")
    return f"{_IN_CTYPE[in_dtype]}, {'true' if vec else 'false'}, {threads}, {reg_steps}"


def act_amax_source(in_dtype: torch.dtype, vec: bool, threads: int = THREADS,
                    reg_steps: int = REG_STEPS) -> Tuple[str, str]:
    """(kernel name, generated .cu source) of the per-block absmax kernel (dynamic per-tensor scales)."""
    targs = act_amax_targs(in_dtype, vec, threads, reg_steps)
    name = "humming_act_amax_" + hashlib.sha1(targs.encode()).hexdigest()[:16]
    src = f"""// generated by vllm_humming.ops.act_quant -- per-block absmax partials (kernels/include/humming/act_quant.cuh)
#include "humming/act_quant.cuh"
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    const {_IN_CTYPE[in_dtype]}* x, long long ldx, int M, int K, float* partials) {{
  humming::act_amax_partials<{targs}>(x, ldx, M, K, partials);
}}
"""
    return name, src


def act_quant_specs(act: ActDesc, out_dtype: torch.dtype, arch: str,
                    in_dtypes: Optional[Tuple[torch.dtype, ...]] = None) -> List:
    """Every KernelSpec a layer with this activation description may launch (compile_many / CI compile matrix):
    both the vector and the element-by-element quantize kernel per input dtype, plus the absmax kernels of dynamic
    per-tensor descriptions."""
    from ..jit import KernelSpec

    _check(act, out_dtype)
    specs = []
    for tin in in_dtypes or (out_dtype,):
        for vec in (True, False):
            name, src = act_quant_source(act, tin, out_dtype, vec)
            specs.append(KernelSpec(name=name, source=src, arch=arch,
                                    config={"act": str(act), "in": str(tin), "out": str(out_dtype), "vec": vec,
                                            "op": "act_quant"}))
            if act.dynamic and act.scale.granularity == "tensor":
                name, src = act_amax_source(tin, vec)
                specs.append(KernelSpec(name=name, source=src, arch=arch,
                                        config={"in": str(tin), "vec": vec, "op": "act_amax"}))
    return specs


class ActQuantizer:
    """The activation-quantization kernels of one layer (description, output dtype, device), compiled on first use
    per input dtype and alignment.

    ``static_scale``: float32, one positive finite element -- the static per-tensor scale of a static description,
    or the second-level scale s2 of a description that has one (NVFP4); None otherwise.
    """

    def __init__(self, act: ActDesc, out_dtype: torch.dtype, device, static_scale: Optional[torch.Tensor] = None,
                 name: str = "", k_perm: bool = False):
        self.where = f"layer {name!r} (activations {act})"
        reason = act_quant_unsupported_reason(act, out_dtype, k_perm)
        if reason:
            raise DescError(f"{self.where}: {reason}")
        from .gemm import kernel_device

        device = kernel_device(device, f"{self.where}, activation quantization")
        needs_scale = (not act.dynamic) or act.scale2 is not None
        if needs_scale:
            what = "the static activation scale" if not act.dynamic else "the second-level activation scale s2"
            if static_scale is None:
                raise DescError(f"{self.where}: {what} is missing (pass static_scale, float32, one element)")
            t = static_scale.detach().to(torch.float32).reshape(-1)
            if t.numel() != 1 or not bool(torch.isfinite(t).all()) or not bool((t > 0).all()):
                raise DescError(f"{self.where}: {what} must be one positive finite value, got {t.tolist()}")
            self.static_scale = t.to(device).contiguous()
        elif static_scale is not None:
            raise DescError(f"{self.where}: a dynamic description without s2 takes no static scale")
        else:
            self.static_scale = None
        self.act, self.out_dtype, self.device, self.name = act, out_dtype, device, name
        self.mode, self.group = act_mode(act)
        from ..jit.launch import current_arch

        self.arch = current_arch(device)
        if self.arch is None:
            raise DescError(f"{self.where}: no CUDA device visible for {device}")
        self.threads, self.reg_steps, pdl, self._late = _debug_launch_shape()
        self._pdl = pdl                          # None: HUMMING_PDL
        self._kernels = {}                       # (in dtype, vec) -> (quantize launcher, absmax launcher or None)
        self._partials = torch.empty(AMAX_BLOCKS, dtype=torch.float32, device=device) \
            if self.mode == _MODES["tensor"] else None
        self._dummy = torch.zeros(1, dtype=torch.float32, device=device)

    def warmup(self, in_dtypes: Tuple[torch.dtype, ...] = ()) -> None:
        """Compile and load the kernels for inputs of the output dtype (and ``in_dtypes``), both alignments."""
        for tin in (self.out_dtype,) + tuple(in_dtypes):
            for vec in (True, False):
                self._launchers(tin, vec)

    def _launchers(self, in_dtype: torch.dtype, vec: bool):
        key = (in_dtype, vec)
        got = self._kernels.get(key)
        if got is None:
            from ..jit import KernelSpec, Launcher, compile_kernel, load_kernel
            from .gemm import pdl_enabled

            pdl = pdl_enabled() if self._pdl is None else self._pdl
            name, src = act_quant_source(self.act, in_dtype, self.out_dtype, vec, self.threads, self.reg_steps)
            late = "#define HUMMING_DEBUG_ACT_LATE_RELEASE 1\n" if self._late else ""
            src = late + src
            spec = KernelSpec(name=name, source=src, arch=self.arch,
                              config={"act": str(self.act), "in": str(in_dtype), "out": str(self.out_dtype),
                                      "vec": vec, "op": "act_quant", "layer": self.name})
            q = Launcher(load_kernel(compile_kernel(spec), self.device),
                         ("ptr", "i64", "ptr", "i32", "i32", "ptr", "ptr", "ptr", "i32"), pdl=pdl)
            a = None
            if self.mode == _MODES["tensor"]:
                name, src = act_amax_source(in_dtype, vec, self.threads, self.reg_steps)
                src = late + src
                spec = KernelSpec(name=name, source=src, arch=self.arch,
                                  config={"in": str(in_dtype), "vec": vec, "op": "act_amax", "layer": self.name})
                a = Launcher(load_kernel(compile_kernel(spec), self.device), ("ptr", "i64", "i32", "i32", "ptr"),
                             pdl=pdl)
            got = self._kernels[key] = (q, a)
        return got

    def __call__(self, x2: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
        if not isinstance(x2, torch.Tensor) or x2.dim() != 2:
            raise DescError(f"{self.where}: x must be a 2-D [M, K] tensor, got "
                            f"{list(x2.shape) if isinstance(x2, torch.Tensor) else type(x2).__name__}")
        if x2.dtype not in _IN_CTYPE:
            raise DescError(f"{self.where}: activations must be bfloat16, float16 or float32, got {x2.dtype}")
        if x2.device != self.device:
            raise DescError(f"{self.where}: input on {x2.device}, layer on {self.device}")
        if x2.shape[1] < 1:
            raise DescError(f"{self.where}: K must be positive")
        return self._quantize(x2, out)

    def _quantize(self, x2: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
        """__call__ after the input checks (QuantActGemm has made them)."""
        m, k = x2.shape
        if x2.stride(1) != 1 or (m > 1 and x2.stride(0) < k):
            x2 = x2.contiguous()
        ldx = x2.stride(0) if m > 1 else k
        if out is None:
            out = torch.empty(m, k, dtype=self.out_dtype, device=self.device)
        elif (out.dtype != self.out_dtype or tuple(out.shape) != (m, k) or out.device != self.device
              or not out.is_contiguous()):
            raise DescError(f"{self.where}: out must be a contiguous {self.out_dtype} [{m}, {k}] tensor on "
                            f"{self.device}")
        if m == 0:
            return out
        if m > _INT32_MAX or k > _INT32_MAX:
            raise DescError(f"{self.where}: M={m} K={k} do not fit the kernel's int32 sizes")
        vec = (k % 8 == 0 and ldx % 8 == 0 and x2.data_ptr() % 16 == 0 and out.data_ptr() % 16 == 0)
        q, a = self._launchers(x2.dtype, vec)
        parts, nparts = self._dummy, 0
        if a is not None:
            nparts = min(m, AMAX_BLOCKS)
            parts = self._partials
            a.launch(nparts, self.threads, 0, None, x2, ldx, m, k, parts)
        sc = self.static_scale if self.static_scale is not None else self._dummy
        q.launch(m, self.threads, 0, None, x2, ldx, out, m, k, sc, sc, parts, nparts)
        return out


class QuantActGemm:
    """A quantized-activation layer on the GPU: :class:`ActQuantizer` (x -> dequant(quant(x)) in the compute dtype),
    then the layer's WnA16 :class:`vllm_humming.ops.gemm.GemmLayer` on those values.  Two launches per call, both
    stream-ordered and capturable by CUDA graphs.

    Attributes other than ``quantizer`` / ``gemm`` (``plan_info``, ``arch``, ``prefill_m`` ...) are the GEMM's.
    Act-order weights (``k_perm``): the GEMM gathers the quantized columns, which equals quantizing the gathered
    columns for per-tensor and per-token scales; group scales with ``k_perm`` are refused (act_quant_unsupported_reason).
    """

    _OWN = ("quantizer", "gemm")

    def __init__(self, quantizer: ActQuantizer, gemm):
        object.__setattr__(self, "quantizer", quantizer)
        object.__setattr__(self, "gemm", gemm)

    def __getattr__(self, name):
        if name in QuantActGemm._OWN:
            raise AttributeError(name)
        return getattr(self.gemm, name)

    def __setattr__(self, name, value):
        if name in QuantActGemm._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.gemm, name, value)

    def warmup(self):
        self.quantizer.warmup()
        self.gemm.warmup()

    def __call__(self, x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
        g = self.gemm
        if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != g.k:
            raise DescError(f"layer {g.name!r} ({g.desc}): input has K="
                            f"{x.shape[-1] if isinstance(x, torch.Tensor) and x.dim() else '?'}, weight expects K={g.k}")
        if x.device != g.device:
            raise DescError(f"layer {g.name!r}: input on {x.device}, weights on {g.device}")
        if x.dtype not in _IN_CTYPE:
            raise DescError(f"layer {g.name!r} ({g.desc}, activations {self.quantizer.act}): activations must be "
                            f"bfloat16, float16 or float32, got {x.dtype}")
        lead = x.shape[:-1]
        xq = self.quantizer._quantize(x.reshape(-1, g.k), None)
        y = g(xq, out=out)
        return y if x.dim() == 2 else y.reshape(*lead, g.n)
