"""Plain-torch reference numerics: the oracle for every kernel test and the CPU fallback path.

* :func:`dequantize_weight`  canonical :class:`QuantizedWeight` -> float32 [N, K]
* :func:`quantize_weight`    float [N, K] + :class:`WeightDesc` -> :class:`QuantizedWeight` (round to nearest)
* :func:`quantize_activations` / :func:`dequantize_activations`  per :class:`ActDesc`
* :func:`reference_gemm`     y = dequant(x_q) @ dequant(W)^T (+ bias), computed in float32

Everything here works on CPU and GPU tensors alike and is written for clarity, not speed.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from .desc import ActDesc, DescError, ScaleSpec, WeightDesc
from .dtypes import E8M0, FP32, DType, FloatType, IntType
from .packing import pack_codes, unpack_codes
from .qweight import QuantizedWeight

__all__ = ["decode_scale", "encode_scale", "expand_scale", "dequantize_weight", "quantize_weight",
           "quantize_activations", "dequantize_activations", "reference_gemm"]


# ------------------------------------------------------------------------------------------------------------ scales
def decode_scale(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """Stored scale tensor -> float32 values (8-bit scale types are stored as uint8 raw codes)."""
    if dtype.bits > 8:
        return t.to(torch.float32)
    return dtype.decode(t.to(torch.uint8))


def encode_scale(v: torch.Tensor, dtype: DType, round_up: bool = False) -> torch.Tensor:
    """float scale values -> stored tensor.  ``round_up`` (for e8m0) takes the next power of two."""
    if dtype.bits > 8:
        return v.to(dtype.torch_dtype)
    if dtype == E8M0:
        e = torch.log2(v.to(torch.float64).clamp(min=2.0 ** -127))
        e = torch.ceil(e) if round_up else torch.floor(e)
        return (e.clamp(-127, 127) + 127).to(torch.uint8)
    return dtype.encode(v)


def _smallest_positive(dtype: DType) -> float:
    if dtype.bits > 8:
        return float(torch.finfo(dtype.torch_dtype).smallest_normal)
    t = dtype.decode_table()
    return float(t[torch.isfinite(t) & (t > 0)].min())


def _encode_positive_scale(target: torch.Tensor, dtype: DType) -> torch.Tensor:
    """Encode positive scale values; a value that underflows to 0 in ``dtype`` becomes its smallest positive value
    (a zero scale would turn the group into NaN/Inf; the group's codes then round to ~0 instead)."""
    target = torch.where(target > 0, target, torch.ones_like(target))
    st = encode_scale(target, dtype)
    tiny = encode_scale(torch.full_like(target, _smallest_positive(dtype)), dtype)
    return torch.where(decode_scale(st, dtype) > 0, st, tiny)


def _symmetric_qmax(dt: DType, what) -> float:
    """Largest code magnitude usable for absmax scaling: the whole [-qmax, qmax] must be representable."""
    if dt.is_int:
        q = dt.max if dt.min >= 0 else min(dt.max, -dt.min)
    else:
        q = dt.max
    if q <= 0:
        raise DescError(f"{what}: {dt} has no positive value, so absmax (symmetric) scaling cannot map onto it; "
                        f"use a zero point (uint{dt.bits} with zp) or a type with positive values")
    return float(q)


def _check_static_scale(t: Optional[torch.Tensor], desc, what: str) -> torch.Tensor:
    if t is None:
        raise DescError(f"activation description {desc}: {what} is static: pass it as static_scale "
                        f"(float32 tensor of 1 element)")
    t = t.to(torch.float32).reshape(-1)
    if t.numel() != 1 or not bool(torch.isfinite(t).all()) or not bool((t > 0).all()):
        raise DescError(f"activation description {desc}: {what} must be one positive finite value, got {t.tolist()}")
    return t.reshape(1, 1)


def expand_scale(s: torch.Tensor, spec: ScaleSpec, n: int, k: int) -> torch.Tensor:
    """Broadcast a [groups] scale-like tensor to [n, k] float32."""
    s = s.to(torch.float32)
    g = spec.granularity
    if g == "tensor":
        return s.reshape(1, 1).expand(n, k)
    if g == "channel":
        return s.reshape(n, 1).expand(n, k)
    if g == "group":
        return s.repeat_interleave(spec.group_size, dim=1)[:, :k]
    if g == "block":
        bn, bk = spec.block
        return s.repeat_interleave(bn, dim=0)[:n].repeat_interleave(bk, dim=1)[:, :k]
    raise DescError(f"unknown scale granularity {g!r}")


def _group_view(w: torch.Tensor, spec: Optional[ScaleSpec]):
    """Reduce |w| per scale group: returns (amax [groups], min [groups], max [groups])."""
    n, k = w.shape
    g = spec.granularity
    if g == "tensor":
        red = lambda f: f(w).reshape(1, 1)
        return red(lambda t: t.abs().amax()), red(lambda t: t.amin()), red(lambda t: t.amax())
    if g == "channel":
        return w.abs().amax(1, keepdim=True), w.amin(1, keepdim=True), w.amax(1, keepdim=True)
    if g == "group":
        gs = spec.group_size
        pad = (-k) % gs
        # pad with the row's first element of the group so padding never widens a group's range
        wp = torch.nn.functional.pad(w, (0, pad), value=0.0) if pad else w
        if pad:
            last = w[:, (k // gs) * gs:(k // gs) * gs + 1]
            wp[:, k:] = last
        v = wp.reshape(n, -1, gs)
        return v.abs().amax(-1), v.amin(-1), v.amax(-1)
    bn, bk = spec.block
    pn, pk = (-n) % bn, (-k) % bk
    wp = torch.nn.functional.pad(w, (0, pk, 0, pn))
    v = wp.reshape((n + pn) // bn, bn, (k + pk) // bk, bk).permute(0, 2, 1, 3).reshape((n + pn) // bn, (k + pk) // bk, -1)
    return v.abs().amax(-1), v.amin(-1), v.amax(-1)


# ------------------------------------------------------------------------------------------------------ weights
def dequantize_weight(qw: QuantizedWeight) -> torch.Tensor:
    d = qw.desc
    n, k = qw.shape
    codes = unpack_codes(qw.qweight, d.bits, k)
    w = d.dtype.decode(codes).to(torch.float32)
    if d.scale is None:
        return w
    s = expand_scale(decode_scale(qw.scale, d.scale.dtype), d.scale, n, k)
    if d.zero_point is not None:
        z = qw.zero.to(torch.float32)
        w = w - expand_scale(z, d.scale, n, k)
    w = w * s
    if d.scale2 is not None:
        w = w * expand_scale(qw.scale2, d.scale2, n, k)
    return w


def quantize_weight(w: torch.Tensor, desc: WeightDesc, name: str = "", bias: Optional[torch.Tensor] = None,
                    k_perm: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """Round-to-nearest quantization of a float [N, K] weight to ``desc`` (absmax scales; min/max with zero points).

    Scales are computed in float32, rounded to the scale dtype, and the rounded scale is what the codes are
    computed against, so ``dequantize_weight`` reproduces the stored grid exactly.
    """
    if w.dim() != 2:
        raise DescError(f"quantize_weight expects a 2-D [N, K] weight, got shape {list(w.shape)}")
    w = w.to(torch.float32)
    n, k = w.shape
    d = desc
    dt = d.dtype
    if d.scale is None:
        codes = dt.encode(w)
        return QuantizedWeight(d, (n, k), pack_codes(codes, dt.bits), name=name, bias=bias, k_perm=k_perm)

    amax, wmin, wmax = _group_view(w, d.scale)
    sdt = d.scale.dtype
    scale2 = None
    if d.zero_point is not None:
        qmax = float((1 << dt.bits) - 1)
        lo, hi = wmin.clamp(max=0.0), wmax.clamp(min=0.0)
        s = ((hi - lo) / qmax)
        s_st = _encode_positive_scale(s, sdt)
        s_v = decode_scale(s_st, sdt)
        if d.zero_point == "int":
            z = torch.round(-lo / s_v).clamp(0, qmax)
            z_st = z.to(torch.uint8)
        else:
            z_st = (-lo / s_v).to(sdt.torch_dtype)
            z = z_st.to(torch.float32)
        zs = expand_scale(z, d.scale, n, k)
        ss = expand_scale(s_v, d.scale, n, k)
        q = torch.round(w / ss + zs).clamp(0, qmax)
        codes = q.to(torch.uint8)
        return QuantizedWeight(d, (n, k), pack_codes(codes, dt.bits), s_st, z_st, None, k_perm, bias, name)

    qmax = _symmetric_qmax(dt, f"weight description {d}" + (f" (layer {name!r})" if name else ""))
    target = amax / qmax
    if d.scale2 is not None:
        # two-level (NVFP4 style): the global scale maps the largest group scale onto the scale dtype's max.
        if d.scale2.granularity == "tensor":
            g_amax = amax.amax().reshape(1)
        else:
            g_amax = amax.amax(1)
        smax = sdt.max if sdt.bits <= 8 else 1.0
        scale2 = (g_amax / (qmax * smax)).to(torch.float32)
        scale2 = torch.where(scale2 > 0, scale2, torch.ones_like(scale2))
        s2e = scale2.reshape(1, 1) if d.scale2.granularity == "tensor" else scale2.reshape(-1, 1)
        target = target / s2e
    if sdt == E8M0:
        # OCP MX: shared exponent = floor(log2(amax)) - emax(element); values above the grid saturate.
        emax = math.floor(math.log2(qmax))
        e = torch.floor(torch.log2(amax.to(torch.float64).clamp(min=2.0 ** -120))) - emax
        s_st = (e.clamp(-127, 127) + 127).to(torch.uint8)
    else:
        s_st = _encode_positive_scale(target, sdt)
    s_v = decode_scale(s_st, sdt)
    ss = expand_scale(s_v, d.scale, n, k)
    if scale2 is not None:
        ss = ss * expand_scale(scale2, d.scale2, n, k)
    codes = dt.encode(w / ss)
    return QuantizedWeight(d, (n, k), pack_codes(codes, dt.bits), s_st, None, scale2, k_perm, bias, name)


# -------------------------------------------------------------------------------------------------- activations
def quantize_activations(x: torch.Tensor, desc: ActDesc, static_scale: Optional[torch.Tensor] = None,
                         ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """x [M, K] -> (codes uint8 [M, K], stored scale) for a quantized ActDesc; (x, None) for bf16/fp16.

    Dynamic scales: absmax per tensor/token/group (e8m0 groups use the OCP MX floor rule), rounded to the scale
    dtype; the codes are computed against the rounded scale.  ``static_scale`` (float32, 1 element) is the
    description's static value: the per-tensor scale of a static description, or the second-level (global)
    scale ``s2`` of a description that has one (NVFP4: x ~= decode(q) * s_group * s2, i.e. s2 = amax / (6 * 448),
    the multiplicative form; the dynamic group scales are then computed on x / s2).
    """
    if not desc.quantized:
        return x, None
    x = x.to(torch.float32)
    m, k = x.shape
    dt = desc.dtype
    spec = desc.scale
    gspec = ScaleSpec("channel", spec.dtype) if spec.granularity == "token" else spec
    if desc.scale2 is not None:
        x = x / _check_static_scale(static_scale, desc, "the second-level (global) activation scale s2")
    if not desc.dynamic:
        s_st = _check_static_scale(static_scale, desc, "the activation scale")
        s_v = s_st
    else:
        amax, _, _ = _group_view(x, gspec)
        qmax = _symmetric_qmax(dt, f"activation description {desc}")
        if spec.dtype == E8M0:
            emax = math.floor(math.log2(qmax))
            e = torch.floor(torch.log2(amax.to(torch.float64).clamp(min=2.0 ** -120))) - emax
            s_st = (e.clamp(-127, 127) + 127).to(torch.uint8)
        else:
            s_st = _encode_positive_scale(amax / qmax, spec.dtype)
        s_v = decode_scale(s_st, spec.dtype)
    ss = expand_scale(s_v, gspec, m, k)
    codes = dt.encode(x / ss)
    return codes, s_st


def dequantize_activations(codes: torch.Tensor, scale: Optional[torch.Tensor], desc: ActDesc,
                           static_scale: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Inverse of :func:`quantize_activations`: codes [M, K] and the stored scale -> float32 [M, K].

    Descriptions with a second-level scale (NVFP4) need the same ``static_scale`` (s2) given to quantization.
    """
    if not desc.quantized:
        return codes.to(torch.float32)
    m, k = codes.shape
    spec = desc.scale
    gspec = ScaleSpec("channel", spec.dtype) if spec.granularity == "token" else spec
    s_v = decode_scale(scale, spec.dtype) if desc.dynamic else scale.to(torch.float32).reshape(1, 1)
    x = desc.dtype.decode(codes).to(torch.float32) * expand_scale(s_v, gspec, m, k)
    if desc.scale2 is not None:
        x = x * _check_static_scale(static_scale, desc, "the second-level (global) activation scale s2")
    return x


def reference_gemm(x: torch.Tensor, qw: QuantizedWeight, act: Optional[ActDesc] = None,
                   static_act_scale: Optional[torch.Tensor] = None) -> torch.Tensor:
    """float32 y [M, N] = dequant(quant(x)) @ dequant(W)^T + bias, with ``k_perm`` applied to x."""
    if x.shape[-1] != qw.shape[1]:
        raise DescError(f"layer {qw.name!r}: x has K={x.shape[-1]}, weight expects K={qw.shape[1]}")
    x2 = x.reshape(-1, x.shape[-1]).to(torch.float32)
    if qw.k_perm is not None:
        x2 = x2[:, qw.k_perm.to(x2.device)]
    if act is not None and act.quantized:
        codes, s = quantize_activations(x2, act, static_act_scale)
        x2 = dequantize_activations(codes, s, act, static_act_scale)
    y = x2 @ dequantize_weight(qw).to(x2.device).t()
    if qw.bias is not None:
        y = y + qw.bias.to(torch.float32)
    return y.reshape(*x.shape[:-1], qw.shape[0])
