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
        s = torch.where(s > 0, s, torch.ones_like(s))
        s_st = encode_scale(s, sdt)
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

    qmax = float(dt.max)
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
        target = torch.where(target > 0, target, torch.ones_like(target))
        s_st = encode_scale(target, sdt)
        if sdt.bits <= 8:  # a tiny group scale may round to code 0 in an 8-bit scale type: keep it representable
            s_st = torch.where(decode_scale(s_st, sdt) > 0, s_st, encode_scale(torch.full_like(target, 2.0 ** sdt.min_exponent), sdt))
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

    Dynamic scales: absmax per tensor/token/group (e8m0 groups use the OCP MX floor rule).  Static per-tensor scales
    come in as ``static_scale`` (float32 [1]).
    """
    if not desc.quantized:
        return x, None
    x = x.to(torch.float32)
    m, k = x.shape
    dt = desc.dtype
    spec = desc.scale
    if not desc.dynamic:
        if static_scale is None:
            raise DescError(f"{desc}: static activation quantization needs a scale tensor")
        s_st = static_scale.to(torch.float32).reshape(1, 1)
        s_v = s_st
    else:
        gspec = ScaleSpec("channel", spec.dtype) if spec.granularity == "token" else spec
        amax, _, _ = _group_view(x, gspec)
        qmax = float(dt.max)
        if spec.dtype == E8M0:
            emax = math.floor(math.log2(qmax))
            e = torch.floor(torch.log2(amax.to(torch.float64).clamp(min=2.0 ** -120))) - emax
            s_st = (e.clamp(-127, 127) + 127).to(torch.uint8)
        else:
            t = amax / qmax
            t = torch.where(t > 0, t, torch.ones_like(t))
            s_st = encode_scale(t, spec.dtype)
        s_v = decode_scale(s_st, spec.dtype)
    gspec = ScaleSpec("channel", spec.dtype) if spec.granularity == "token" else spec
    ss = expand_scale(s_v, gspec, m, k)
    codes = dt.encode(x / ss)
    return codes, s_st


def dequantize_activations(codes: torch.Tensor, scale: Optional[torch.Tensor], desc: ActDesc) -> torch.Tensor:
    if not desc.quantized:
        return codes.to(torch.float32)
    m, k = codes.shape
    spec = desc.scale
    gspec = ScaleSpec("channel", spec.dtype) if spec.granularity == "token" else spec
    s_v = decode_scale(scale, spec.dtype) if desc.dynamic else scale.to(torch.float32).reshape(1, 1)
    return desc.dtype.decode(codes).to(torch.float32) * expand_scale(s_v, gspec, m, k)


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
        x2 = dequantize_activations(codes, s, act)
    y = x2 @ dequantize_weight(qw).to(x2.device).t()
    if qw.bias is not None:
        y = y + qw.bias.to(torch.float32)
    return y.reshape(*x.shape[:-1], qw.shape[0])
