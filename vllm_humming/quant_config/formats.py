"""Tensor-level converters: one checkpoint format's tensors -> the canonical :class:`QuantizedWeight`.

Pure torch, any device, any N and K, no file access: the vLLM plugin calls these on fused / sharded tensors from
``process_weights_after_loading``, the checkpoint reader (:mod:`.reader`) calls them on tensors read from disk.

Every converter takes the tensors exactly as the format stores them and returns a :class:`QuantizedWeight` whose
``dequantize()`` equals what the writing tool itself reconstructs (no re-quantization, codes and scales are copied
bit-exactly; only the packing and the code offset convention change).  Layout facts used here, per format:

GPTQ (AutoGPTQ / gptqmodel, ``checkpoint_format`` gptq = v1, gptq_v2 = v2)
    ``qweight`` int32 [K*b/32, N]: codes packed along K as a little-endian bit stream per output column (for 3-bit
    this is GPTQ's straddled packing: code 10 sits in bits 30..31 of one word and bit 0 of the next).  So
    ``qweight.T`` is already our canonical packing.  ``qzeros`` int32 [G, N*b/32] packs zero points along N the same
    way; v1 stores ``zero - 1`` (the historical quirk; read back as ``(stored + 1) mod 2**b``), v2 stores ``zero``.
    A v1 zero point of 0 is stored as all ones; we read it back as 0 (what the quantizer meant).  gptqmodel's own v1
    loader adds ``0x11111111`` to the whole packed word instead, which carries into the neighbouring field in that
    case -- for such (rare, asymmetric-only) checkpoints our reading and gptqmodel's differ in that neighbour.
    ``scales`` [G, N].  ``g_idx`` int32 [K]: scale group of input channel k.  Dequant: ``(q - z[g]) * s[g]``.

    Symmetric checkpoints: GPTQ's symmetric quantizer always uses the midpoint zero ``2**(b-1)``.  We decide from the
    data, not the ``sym`` flag: when every zero point equals the midpoint the weight becomes the zero-free
    ``uint{b}b{2**(b-1)}`` description (what the fast kernels want); otherwise the zero points are kept as ``zp:int``
    with plain ``uint{b}`` codes.  Both dequantize identically.

    Act-order (``desc_act``): ``g_idx`` is not ``k // group_size``.  We sort the input channels by ``g_idx`` (stable)
    into ``k_perm`` and store the codes in that order, so storage column j holds input channel ``k_perm[j]`` and the
    scale groups are contiguous; the GEMM gathers ``x[:, k_perm]``.

AWQ (AutoAWQ GEMM)
    ``qweight`` int32 [K, N/8]: 4-bit codes packed along N, nibble i of word c holds column ``8c + [0,2,4,6,1,3,5,7][i]``.
    ``qzeros`` int32 [G, N/8] packed the same way, ``scales`` [G, N].  Dequant: ``(q - z) * s``.

compressed-tensors (see the functions below for each sub-format)

ModelOpt NVFP4, gpt-oss MXFP4, DeepSeek-style FP8 block, and our own native format: see each function.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ..desc import ActDesc, DescError, ScaleSpec, WeightDesc
from ..dtypes import E2M1, E4M3, E5M2, E8M0, FP32, INT8, IntType, parse_dtype
from ..packing import pack_codes, packed_words, unpack_codes
from ..qweight import QuantizedWeight

__all__ = [
    "FormatError", "gptq_to_qweight", "awq_to_qweight", "ct_pack_quantized_to_qweight", "ct_int_quantized_to_qweight",
    "ct_float_quantized_to_qweight", "ct_nvfp4_to_qweight", "modelopt_nvfp4_to_qweight", "mxfp4_blocks_to_qweight",
    "fp8_block_to_qweight", "native_to_qweight", "qweight_to_native", "concat_shards", "dense_to_qweight",
    "ct_act_desc", "gptq_k_perm", "AWQ_ORDER",
]


class FormatError(DescError):
    """Checkpoint tensors that do not fit their format (wrong dtype/shape, unsupported parameter), naming the layer."""


def _who(name: str) -> str:
    return f"layer {name!r}" if name else "layer"


def _fail(name: str, fmt: str, msg: str) -> FormatError:
    return FormatError(f"{_who(name)} ({fmt}): {msg}")


def _expect(t: Optional[torch.Tensor], tensor: str, name: str, fmt: str, dtypes=None, shape=None) -> torch.Tensor:
    if t is None:
        raise _fail(name, fmt, f"tensor {tensor!r} is missing")
    if dtypes is not None and t.dtype not in dtypes:
        raise _fail(name, fmt, f"tensor {tensor!r} has dtype {t.dtype}; expected {' or '.join(map(str, dtypes))}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise _fail(name, fmt, f"tensor {tensor!r} has shape {list(t.shape)}; expected {list(shape)}")
    return t


def _desc(name: str, fmt: str, **kw) -> WeightDesc:
    try:
        return WeightDesc(**kw)
    except DescError as e:
        raise _fail(name, fmt, str(e)) from None


def _float_scale_dtype(t: torch.Tensor, tensor: str, name: str, fmt: str):
    if t.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise _fail(name, fmt, f"tensor {tensor!r} has dtype {t.dtype}; scales must be float16, bfloat16 or float32")
    return parse_dtype(t.dtype)


def _as_uint8(t: torch.Tensor) -> torch.Tensor:
    """Raw bytes of an 8-bit tensor (fp8, e8m0, int8, uint8) as uint8 codes."""
    if t.dtype == torch.uint8:
        return t
    if t.element_size() != 1:
        raise ValueError(f"expected an 8-bit tensor, got {t.dtype}")
    return t.contiguous().view(torch.uint8)


# ---------------------------------------------------------------------------------------------------------- GPTQ
def gptq_k_perm(g_idx: Optional[torch.Tensor], k: int, group_size: int, name: str = "") -> Optional[torch.Tensor]:
    """The storage order for a GPTQ ``g_idx``: None when it is the trivial ``k // group_size`` (or absent), else the
    stable sort of input channels by group (int64 [K]).  Raises when the groups do not come out contiguous and of
    ``group_size`` columns each (a g_idx no GPTQ quantizer writes)."""
    if g_idx is None:
        return None
    g = g_idx.to(torch.int64).reshape(-1)
    if g.numel() != k:
        raise _fail(name, "gptq", f"tensor 'g_idx' has {g.numel()} entries; expected K={k}")
    gs = group_size if group_size and group_size > 0 else k
    ar = torch.arange(k, device=g.device)
    if torch.equal(g, ar // gs):
        return None
    if group_size is None or group_size <= 0:
        if bool((g == 0).all()):
            return None
        raise _fail(name, "gptq", "g_idx is not all zero although group_size is -1 (one group per channel)")
    perm = torch.sort(g, stable=True).indices
    if not torch.equal(g[perm], ar // gs):
        counts = torch.bincount(g, minlength=int(g.max()) + 1)
        raise _fail(name, "gptq", f"g_idx does not assign exactly group_size={gs} input channels to every group "
                                  f"(counts per group: {counts.tolist()[:8]}...); cannot make the groups contiguous")
    return perm


def gptq_to_qweight(qweight: torch.Tensor, qzeros: torch.Tensor, scales: torch.Tensor,
                    g_idx: Optional[torch.Tensor] = None, *, bits: int, group_size: int, sym: bool = True,
                    desc_act: bool = False, checkpoint_format: str = "gptq", name: str = "",
                    bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """GPTQ (v1 ``gptq`` or ``gptq_v2``) tensors -> :class:`QuantizedWeight` (see the module docstring).

    ``sym`` and ``desc_act`` are the checkpoint's flags; they are checked against the data but the data decides:
    midpoint zero points give the zero-free symmetric description, a non-trivial ``g_idx`` gives ``k_perm``.
    """
    fmt = f"gptq {bits}-bit g{group_size} {checkpoint_format}"
    if bits not in (2, 3, 4, 8):
        raise _fail(name, fmt, f"GPTQ bit width {bits} is not supported; supported: 2, 3, 4, 8")
    cf = (checkpoint_format or "gptq").lower()
    if cf not in ("gptq", "gptq_v2"):
        raise _fail(name, fmt, f"checkpoint_format {checkpoint_format!r}; supported: 'gptq' (v1, zero-1) and 'gptq_v2'")
    _expect(qweight, "qweight", name, fmt, dtypes=(torch.int32,))
    if qweight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'qweight' must be 2-D [K*{bits}/32, N], got shape {list(qweight.shape)}")
    rows, n = qweight.shape
    if (rows * 32) % bits:
        raise _fail(name, fmt, f"tensor 'qweight' has {rows} rows, not a whole number of {bits}-bit codes")
    k = rows * 32 // bits
    if g_idx is not None and g_idx.numel() != k:
        # the packed rows may carry padding; g_idx gives the true K
        if g_idx.numel() < k and packed_words(g_idx.numel(), bits) == rows:
            k = g_idx.numel()
        else:
            raise _fail(name, fmt, f"tensor 'g_idx' has {g_idx.numel()} entries but qweight holds K={k}")
    gs = group_size if group_size and group_size > 0 else k
    ngroups = -(-k // gs)
    sdt = _float_scale_dtype(_expect(scales, "scales", name, fmt), "scales", name, fmt)
    _expect(scales, "scales", name, fmt, shape=(ngroups, n))
    _expect(qzeros, "qzeros", name, fmt, dtypes=(torch.int32,), shape=(ngroups, packed_words(n, bits)))

    mask = (1 << bits) - 1
    zeros = unpack_codes(qzeros, bits, n).to(torch.int32)          # [G, N]
    if cf == "gptq":
        zeros = (zeros + 1) & mask
    mid = 1 << (bits - 1)
    symmetric = bool((zeros == mid).all())

    spec = ScaleSpec("channel", sdt) if ngroups == 1 and (group_size is None or group_size <= 0 or group_size >= k) \
        else ScaleSpec("group", sdt, group_size=gs)
    if symmetric:
        desc = _desc(name, fmt, dtype=IntType(bits, False, mid), scale=spec)
    else:
        desc = _desc(name, fmt, dtype=IntType(bits, False), scale=spec, zero_point="int")

    # the data decides, not the desc_act flag: a non-trivial g_idx is honoured even when desc_act is false
    k_perm = gptq_k_perm(g_idx, k, group_size, name)
    if k_perm is None and (k * bits) % 32 == 0:
        packed = qweight.t().contiguous()
    else:
        codes = unpack_codes(qweight.t(), bits, k) if packed_words(k, bits) == rows else \
            unpack_codes(qweight.t(), bits, rows * 32 // bits)[:, :k]
        if k_perm is not None:
            codes = codes[:, k_perm.to(codes.device)]
        packed = pack_codes(codes, bits)
    scale = scales.t().contiguous()
    zero = None if symmetric else zeros.t().contiguous().to(torch.uint8)
    return QuantizedWeight(desc, (n, k), packed, scale, zero, None, k_perm, bias, name)


# ---------------------------------------------------------------------------------------------------------- AWQ
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)   # nibble i of a word holds column 8c + AWQ_ORDER[i]


def _awq_unpack(words: torch.Tensor, n: int) -> torch.Tensor:
    """int32 [R, N/8] in AWQ's interleaved nibble order -> uint8 codes [R, N]."""
    r, c = words.shape
    w = words.to(torch.int64) & 0xFFFFFFFF
    nib = torch.stack([(w >> (4 * i)) & 0xF for i in range(8)], dim=-1)   # [R, C, 8], nibble i
    out = torch.empty_like(nib)
    out[..., list(AWQ_ORDER)] = nib
    return out.reshape(r, c * 8)[:, :n].to(torch.uint8)


def awq_to_qweight(qweight: torch.Tensor, qzeros: torch.Tensor, scales: torch.Tensor, *, bits: int = 4,
                   group_size: int, name: str = "", bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """AutoAWQ GEMM tensors -> uint4 codes + int zero points + group scales."""
    fmt = f"awq {bits}-bit g{group_size} gemm"
    if bits != 4:
        raise _fail(name, fmt, f"AWQ bit width {bits} is not supported; AutoAWQ GEMM packing is 4-bit only")
    _expect(qweight, "qweight", name, fmt, dtypes=(torch.int32,))
    if qweight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'qweight' must be 2-D [K, N/8], got shape {list(qweight.shape)}")
    k, c = qweight.shape
    sdt = _float_scale_dtype(_expect(scales, "scales", name, fmt), "scales", name, fmt)
    if scales.dim() != 2 or scales.shape[1] > c * 8 or scales.shape[1] <= (c - 1) * 8:
        raise _fail(name, fmt, f"tensor 'scales' has shape {list(scales.shape)}; expected [G, N] with N/8={c} words")
    n = scales.shape[1]
    gs = group_size if group_size and group_size > 0 else k
    ngroups = -(-k // gs)
    _expect(scales, "scales", name, fmt, shape=(ngroups, n))
    _expect(qzeros, "qzeros", name, fmt, dtypes=(torch.int32,), shape=(ngroups, c))
    codes = _awq_unpack(qweight, n).t()                                     # [N, K]
    zeros = _awq_unpack(qzeros, n).t().contiguous()                         # [N, G]
    spec = ScaleSpec("channel", sdt) if gs >= k else ScaleSpec("group", sdt, group_size=gs)
    desc = _desc(name, fmt, dtype=IntType(4, False), scale=spec, zero_point="int")
    return QuantizedWeight(desc, (n, k), pack_codes(codes, 4), scales.t().contiguous(), zeros, None, None, bias, name)


# ------------------------------------------------------------------------------------------------ byte-level helpers
def _bytes_to_words(b: torch.Tensor) -> torch.Tensor:
    """uint8 [N, B] byte stream per row -> int32 [N, ceil(B/4)] (little-endian words; zero padded).

    For 4-bit codes stored two per byte low nibble first, and for 8-bit codes one per byte, this is exactly the
    canonical packing of :mod:`vllm_humming.packing`."""
    b = b.contiguous()
    pad = (-b.shape[-1]) % 4
    if pad:
        b = torch.nn.functional.pad(b, (0, pad))
    w = b.to(torch.int64).reshape(*b.shape[:-1], -1, 4)
    words = w[..., 0] | (w[..., 1] << 8) | (w[..., 2] << 16) | (w[..., 3] << 24)
    return torch.where(words >= (1 << 31), words - (1 << 32), words).to(torch.int32)


def _codes8_to_words(u8: torch.Tensor, k: int, bits: int) -> torch.Tensor:
    """uint8 codes [N, K] (one per byte, < 2**bits) -> canonical int32 words."""
    if bits == 8:
        return _bytes_to_words(u8)
    return pack_codes(u8, bits)


def _scale_tensor(t: torch.Tensor, sdt) -> torch.Tensor:
    """A checkpoint scale tensor in the dtype the canonical QuantizedWeight stores for ``sdt``."""
    if sdt.bits <= 8:
        return _as_uint8(t)
    return t.to(sdt.torch_dtype)


def _float_or_fp8_scale_dtype(t: torch.Tensor, tensor: str, name: str, fmt: str):
    if t.dtype == torch.float8_e4m3fn:
        return E4M3
    if getattr(torch, "float8_e8m0fnu", None) is not None and t.dtype == torch.float8_e8m0fnu:
        return E8M0
    return _float_scale_dtype(t, tensor, name, fmt)


def _scale_spec_from_shape(scale: torch.Tensor, n: int, k: int, sdt, tensor: str, name: str, fmt: str,
                           group_size: Optional[int] = None, block: Optional[Sequence[int]] = None
                           ) -> Tuple[ScaleSpec, torch.Tensor]:
    """Infer tensor / channel / group / block granularity from a [.., ..] scale tensor's shape.

    Returns the spec and the scale reshaped to the canonical ``num_scale_groups`` shape."""
    numel = scale.numel()
    if block is not None:
        bn, bk = int(block[0]), int(block[1])
        want = (-(-n // bn), -(-k // bk))
        if tuple(scale.shape) != want:
            raise _fail(name, fmt, f"tensor {tensor!r} has shape {list(scale.shape)}; block {bn}x{bk} scales of an "
                                   f"[{n}, {k}] weight are {list(want)}")
        return ScaleSpec("block", sdt, block=(bn, bk)), scale
    if numel == 1:
        return ScaleSpec("tensor", sdt), scale.reshape(1, 1)
    if numel == n and (scale.dim() == 1 or scale.shape[-1] == 1):
        return ScaleSpec("channel", sdt), scale.reshape(n, 1)
    if scale.dim() == 2 and scale.shape[0] == n:
        g = scale.shape[1]
        gs = group_size or (k // g if k % g == 0 else None)
        if gs is None or -(-k // gs) != g:
            raise _fail(name, fmt, f"tensor {tensor!r} has shape {list(scale.shape)}: {g} groups do not divide K={k}"
                                   + (f" with group_size {group_size}" if group_size else ""))
        return ScaleSpec("group", sdt, group_size=gs), scale
    raise _fail(name, fmt, f"tensor {tensor!r} has shape {list(scale.shape)}, which is neither per tensor [1], per "
                           f"channel [{n}, 1] nor per group [{n}, G] for an [{n}, {k}] weight")


# ------------------------------------------------------------------------------------------- compressed-tensors
def ct_pack_quantized_to_qweight(weight_packed: torch.Tensor, weight_scale: torch.Tensor,
                                 weight_shape: Optional[torch.Tensor] = None,
                                 weight_zero_point: Optional[torch.Tensor] = None, *, num_bits: int,
                                 group_size: Optional[int] = None, strategy: Optional[str] = None,
                                 symmetric: bool = True, name: str = "",
                                 bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """compressed-tensors ``pack-quantized`` (int, 1..8 bits).

    ``weight_packed`` int32 [N, ceil(K*b/32)]: CT >= 0.12 packs ``q + 2**(b-1)`` (q the signed int code) as a dense
    little-endian bit stream along K -- exactly our canonical packing, so the words are used as they are.
    Symmetric: codes are ``uint{b}b{2**(b-1)}`` (value = code - 2**(b-1) = q).  Asymmetric: ``weight_zero_point``
    int32 [ceil(N*b/32), G] packs ``zp + 2**(b-1)`` along N (dim 0); codes become plain ``uint{b}`` with int zero points
    (code - zero = q - zp).  Dequant (CT ``_dequantize``): ``(q - zp) * scale``.
    """
    fmt = f"compressed-tensors pack-quantized int{num_bits}"
    if not 1 <= num_bits <= 8:
        raise _fail(name, fmt, f"num_bits {num_bits} is not supported; pack-quantized int has 1..8 bits")
    _expect(weight_packed, "weight_packed", name, fmt, dtypes=(torch.int32,))
    if weight_packed.dim() != 2:
        raise _fail(name, fmt, f"tensor 'weight_packed' must be 2-D [N, K*b/32], got {list(weight_packed.shape)}")
    n = weight_packed.shape[0]
    if weight_shape is not None:
        ws = [int(v) for v in weight_shape.reshape(-1).tolist()]
        if len(ws) != 2 or ws[0] != n:
            raise _fail(name, fmt, f"tensor 'weight_shape' {ws} does not match weight_packed rows {n}")
        k = ws[1]
    else:
        if (weight_packed.shape[1] * 32) % num_bits:
            raise _fail(name, fmt, "tensor 'weight_shape' is missing and K cannot be inferred from weight_packed")
        k = weight_packed.shape[1] * 32 // num_bits
    if weight_packed.shape[1] != packed_words(k, num_bits):
        raise _fail(name, fmt, f"tensor 'weight_packed' has {weight_packed.shape[1]} words per row; K={k} "
                               f"{num_bits}-bit codes take {packed_words(k, num_bits)}")
    sdt = _float_scale_dtype(_expect(weight_scale, "weight_scale", name, fmt), "weight_scale", name, fmt)
    if strategy == "channel":
        group_size = None
    spec, scale = _scale_spec_from_shape(weight_scale, n, k, sdt, "weight_scale", name, fmt, group_size)
    mid = 1 << (num_bits - 1)
    if symmetric and weight_zero_point is None:
        desc = _desc(name, fmt, dtype=IntType(num_bits, False, mid), scale=spec)
        return QuantizedWeight(desc, (n, k), weight_packed.contiguous(), scale.contiguous(), None, None, None, bias,
                               name)
    g = scale.shape[1]
    zp = _expect(weight_zero_point, "weight_zero_point", name, fmt)
    if zp.dtype == torch.int32 and zp.shape == (packed_words(n, num_bits), g):
        zcodes = unpack_codes(zp.t(), num_bits, n).t()                     # [N, G] offset codes
    elif zp.numel() == n * g and zp.dtype in (torch.int8, torch.int32, torch.int64, torch.uint8):
        zcodes = ((zp.reshape(n, g).to(torch.int32) + mid) & ((1 << num_bits) - 1)).to(torch.uint8)
    else:
        raise _fail(name, fmt, f"tensor 'weight_zero_point' has {zp.dtype} {list(zp.shape)}; expected int32 "
                               f"[{packed_words(n, num_bits)}, {g}] (packed along N) or [{n}, {g}]")
    desc = _desc(name, fmt, dtype=IntType(num_bits, False), scale=spec, zero_point="int")
    return QuantizedWeight(desc, (n, k), weight_packed.contiguous(), scale.contiguous(), zcodes.contiguous(), None,
                           None, bias, name)


def ct_int_quantized_to_qweight(weight: torch.Tensor, weight_scale: torch.Tensor,
                                weight_zero_point: Optional[torch.Tensor] = None, *, num_bits: int = 8,
                                group_size: Optional[int] = None, strategy: Optional[str] = None,
                                symmetric: bool = True, name: str = "",
                                bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """compressed-tensors ``int-quantized`` / ``naive-quantized`` int: the signed codes q stored one per int8.

    Symmetric -> signed ``int{b}`` codes (q's two's complement bits); asymmetric -> ``uint{b}`` codes ``q + 2**(b-1)``
    with int zero points ``zp + 2**(b-1)`` (``weight_zero_point`` unpacked, int8 [N, G] or [N, 1])."""
    fmt = f"compressed-tensors int-quantized int{num_bits}"
    if not 1 <= num_bits <= 8:
        raise _fail(name, fmt, f"num_bits {num_bits} is not supported; int weights have 1..8 bits")
    _expect(weight, "weight", name, fmt, dtypes=(torch.int8,))
    if weight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'weight' must be 2-D [N, K], got {list(weight.shape)}")
    n, k = weight.shape
    sdt = _float_scale_dtype(_expect(weight_scale, "weight_scale", name, fmt), "weight_scale", name, fmt)
    if strategy == "channel":
        group_size = None
    spec, scale = _scale_spec_from_shape(weight_scale, n, k, sdt, "weight_scale", name, fmt, group_size)
    q = weight.to(torch.int32)
    lo, hi = -(1 << (num_bits - 1)), (1 << (num_bits - 1)) - 1
    if q.numel() and (int(q.min()) < lo or int(q.max()) > hi):
        raise _fail(name, fmt, f"tensor 'weight' holds values in [{int(q.min())}, {int(q.max())}], outside the "
                               f"int{num_bits} range [{lo}, {hi}]")
    mask = (1 << num_bits) - 1
    if symmetric and weight_zero_point is None:
        desc = _desc(name, fmt, dtype=IntType(num_bits, True), scale=spec)
        codes = (q & mask).to(torch.uint8)
        return QuantizedWeight(desc, (n, k), _codes8_to_words(codes, k, num_bits), scale.contiguous(), None, None,
                               None, bias, name)
    g = scale.shape[1]
    zp = _expect(weight_zero_point, "weight_zero_point", name, fmt)
    if zp.numel() != n * g:
        raise _fail(name, fmt, f"tensor 'weight_zero_point' has shape {list(zp.shape)}; expected [{n}, {g}]")
    mid = 1 << (num_bits - 1)
    zcodes = ((zp.reshape(n, g).to(torch.int32) + mid) & mask).to(torch.uint8)
    codes = ((q + mid) & mask).to(torch.uint8)
    desc = _desc(name, fmt, dtype=IntType(num_bits, False), scale=spec, zero_point="int")
    return QuantizedWeight(desc, (n, k), _codes8_to_words(codes, k, num_bits), scale.contiguous(), zcodes, None,
                           None, bias, name)


def ct_float_quantized_to_qweight(weight: torch.Tensor, weight_scale: torch.Tensor, *,
                                  block_structure: Optional[Sequence[int]] = None, group_size: Optional[int] = None,
                                  strategy: Optional[str] = None, name: str = "",
                                  bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """compressed-tensors ``float-quantized`` FP8 (e4m3 / e5m2 weight): per tensor, channel, group or block scales
    (``block_structure`` [bn, bk] -> weight_scale [ceil(N/bn), ceil(K/bk)]).  Dequant: ``fp8 * scale``."""
    fmt = "compressed-tensors float-quantized fp8"
    _expect(weight, "weight", name, fmt, dtypes=(torch.float8_e4m3fn, torch.float8_e5m2))
    if weight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'weight' must be 2-D [N, K], got {list(weight.shape)}")
    n, k = weight.shape
    sdt = _float_or_fp8_scale_dtype(_expect(weight_scale, "weight_scale", name, fmt), "weight_scale", name, fmt)
    block = block_structure if strategy in (None, "block") and block_structure else None
    if strategy == "channel":
        group_size = None
    spec, scale = _scale_spec_from_shape(weight_scale, n, k, sdt, "weight_scale", name, fmt, group_size, block)
    wdt = E4M3 if weight.dtype == torch.float8_e4m3fn else E5M2
    desc = _desc(name, fmt, dtype=wdt, scale=spec)
    return QuantizedWeight(desc, (n, k), _bytes_to_words(_as_uint8(weight)), _scale_tensor(scale, sdt).contiguous(),
                           None, None, None, bias, name)


def _fp4_packed_to_words(packed: torch.Tensor, n: int, k: int, tensor: str, name: str, fmt: str) -> torch.Tensor:
    """uint8 [N, K/2] two e2m1 codes per byte, element 2j in the low nibble -> canonical int32 words."""
    _expect(packed, tensor, name, fmt, dtypes=(torch.uint8, torch.int8), shape=(n, -(-k // 2)))
    return _bytes_to_words(_as_uint8(packed))[:, : packed_words(k, 4)]


def ct_nvfp4_to_qweight(weight_packed: torch.Tensor, weight_scale: torch.Tensor, weight_global_scale: torch.Tensor,
                        *, weight_shape: Optional[torch.Tensor] = None, group_size: int = 16, name: str = "",
                        bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """compressed-tensors ``nvfp4-pack-quantized``: e2m1 codes two per byte (low nibble first) [N, K/2], e4m3 group
    scales [N, K/16] and ``weight_global_scale`` fp32 [1].

    CT stores the global scale as the *divisor*: its dequant is ``q * (weight_scale / weight_global_scale)``
    (``global_scale = 448 * 6 / amax``), so our second-level multiplier is ``scale2 = 1 / weight_global_scale``."""
    fmt = "compressed-tensors nvfp4-pack-quantized"
    if group_size != 16:
        raise _fail(name, fmt, f"group_size {group_size}; NVFP4 uses 16")
    n = weight_packed.shape[0]
    k = int(weight_shape.reshape(-1)[1]) if weight_shape is not None else 2 * weight_packed.shape[1]
    words = _fp4_packed_to_words(weight_packed, n, k, "weight_packed", name, fmt)
    _expect(weight_scale, "weight_scale", name, fmt, dtypes=(torch.float8_e4m3fn, torch.uint8),
            shape=(n, -(-k // 16)))
    gs = _expect(weight_global_scale, "weight_global_scale", name, fmt)
    if gs.numel() != 1:
        raise _fail(name, fmt, f"tensor 'weight_global_scale' must hold one value, got shape {list(gs.shape)}")
    if not bool(gs.reshape(-1)[0] != 0):
        raise _fail(name, fmt, "tensor 'weight_global_scale' is zero")
    scale2 = (1.0 / gs.to(torch.float32)).reshape(1)
    desc = _desc(name, fmt, dtype=E2M1, scale=ScaleSpec("group", E4M3, group_size=16),
                 scale2=ScaleSpec("tensor", FP32))
    return QuantizedWeight(desc, (n, k), words, _as_uint8(weight_scale).contiguous(), None, scale2, None, bias, name)


def ct_mxfp4_to_qweight(weight_packed: torch.Tensor, weight_scale: torch.Tensor, *,
                        weight_shape: Optional[torch.Tensor] = None, name: str = "",
                        bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """compressed-tensors ``mxfp4-pack-quantized``: e2m1 two per byte, e8m0 group-32 scales as uint8 exponents."""
    fmt = "compressed-tensors mxfp4-pack-quantized"
    n = weight_packed.shape[0]
    k = int(weight_shape.reshape(-1)[1]) if weight_shape is not None else 2 * weight_packed.shape[1]
    words = _fp4_packed_to_words(weight_packed, n, k, "weight_packed", name, fmt)
    _expect(weight_scale, "weight_scale", name, fmt, shape=(n, -(-k // 32)))
    desc = _desc(name, fmt, dtype=E2M1, scale=ScaleSpec("group", E8M0, group_size=32))
    return QuantizedWeight(desc, (n, k), words, _as_uint8(weight_scale).contiguous(), None, None, None, bias, name)


def ct_act_desc(input_args: Optional[dict], name: str = "") -> ActDesc:
    """compressed-tensors ``input_activations`` QuantizationArgs (a dict) -> :class:`ActDesc`.

    None -> bf16 (weight-only).  Static per-tensor scales come from the ``input_scale`` tensor (fp8/int8) or the
    ``input_global_scale`` tensor (NVFP4; stored inverted like the weight's)."""
    fmt = "compressed-tensors input_activations"
    if not input_args:
        return ActDesc("bfloat16")
    typ, bits = input_args.get("type", "int"), int(input_args.get("num_bits", 8))
    strategy = input_args.get("strategy") or "tensor"
    dynamic = input_args.get("dynamic", False)
    if input_args.get("symmetric", True) is False:
        raise _fail(name, fmt, "asymmetric activation quantization is not supported (activations take no zero point)")
    if typ == "float" and bits == 4:
        gsz = input_args.get("group_size") or 16
        if gsz == 16:
            return ActDesc(E2M1, ScaleSpec("group", E4M3, group_size=16), True, ScaleSpec("tensor", FP32))
        return ActDesc(E2M1, ScaleSpec("group", E8M0, group_size=32), True)
    if (typ, bits) == ("float", 8):
        dt = E4M3
    elif (typ, bits) == ("int", 8):
        dt = INT8
    else:
        raise _fail(name, fmt, f"{typ}{bits} activations are not supported; supported: int8, float8 (e4m3), fp4")
    if dynamic == "local":
        dynamic = True
    try:
        if strategy == "token":
            return ActDesc(dt, ScaleSpec("token", FP32), True)
        if strategy == "tensor":
            return ActDesc(dt, ScaleSpec("tensor", FP32), bool(dynamic))
        if strategy == "group":
            return ActDesc(dt, ScaleSpec("group", FP32, group_size=int(input_args.get("group_size"))), True)
    except DescError as e:
        raise _fail(name, fmt, str(e)) from None
    raise _fail(name, fmt, f"activation strategy {strategy!r} is not supported; supported: token, tensor, group")


# ------------------------------------------------------------------------------------------------ ModelOpt NVFP4
def modelopt_nvfp4_to_qweight(weight: torch.Tensor, weight_scale: torch.Tensor, weight_scale_2: torch.Tensor, *,
                              k: Optional[int] = None, group_size: int = 16, name: str = "",
                              bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """NVIDIA ModelOpt NVFP4: ``weight`` uint8 [N, K/2] (e2m1 pairs, low nibble first), ``weight_scale`` e4m3
    [N, K/16], ``weight_scale_2`` fp32 scalar -- a value *multiplier*: ``w = q * weight_scale * weight_scale_2``."""
    fmt = "modelopt nvfp4"
    if group_size != 16:
        raise _fail(name, fmt, f"group_size {group_size}; NVFP4 uses 16")
    _expect(weight, "weight", name, fmt, dtypes=(torch.uint8, torch.int8))
    if weight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'weight' must be 2-D [N, K/2], got {list(weight.shape)}")
    n = weight.shape[0]
    k = k or 2 * weight.shape[1]
    words = _fp4_packed_to_words(weight, n, k, "weight", name, fmt)
    _expect(weight_scale, "weight_scale", name, fmt, dtypes=(torch.float8_e4m3fn, torch.uint8),
            shape=(n, -(-k // 16)))
    s2 = _expect(weight_scale_2, "weight_scale_2", name, fmt)
    if s2.numel() != 1:
        raise _fail(name, fmt, f"tensor 'weight_scale_2' must hold one value, got shape {list(s2.shape)}")
    desc = _desc(name, fmt, dtype=E2M1, scale=ScaleSpec("group", E4M3, group_size=16),
                 scale2=ScaleSpec("tensor", FP32))
    return QuantizedWeight(desc, (n, k), words, _as_uint8(weight_scale).contiguous(), None,
                           s2.to(torch.float32).reshape(1), None, bias, name)


# ------------------------------------------------------------------------------------------------- gpt-oss MXFP4
def mxfp4_blocks_to_qweight(blocks: torch.Tensor, scales: torch.Tensor, *, name: str = "",
                            bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """gpt-oss (OpenAI) MXFP4 for one expert (or any linear): ``*_blocks`` uint8 [N, G, 16] -- 32 e2m1 codes per
    group, element 2j in the low nibble of byte j -- and ``*_scales`` uint8 [N, G], e8m0 exponents (value
    ``2**(e-127)``).  N is the output dimension (gpt-oss's fused ``gate_up`` rows alternate gate / up).  Fused
    experts [E, N, G, 16] are split with :func:`mxfp4_experts_to_qweights`."""
    fmt = "mxfp4 (gpt-oss blocks/scales)"
    _expect(blocks, "blocks", name, fmt, dtypes=(torch.uint8,))
    if blocks.dim() != 3 or blocks.shape[-1] != 16:
        raise _fail(name, fmt, f"tensor 'blocks' must be uint8 [N, G, 16], got {list(blocks.shape)}")
    n, g, _ = blocks.shape
    sc = _expect(scales, "scales", name, fmt, shape=(n, g))
    k = 32 * g
    desc = _desc(name, fmt, dtype=E2M1, scale=ScaleSpec("group", E8M0, group_size=32))
    return QuantizedWeight(desc, (n, k), _bytes_to_words(blocks.reshape(n, g * 16)), _as_uint8(sc).contiguous(),
                           None, None, None, bias, name)


def mxfp4_experts_to_qweights(blocks: torch.Tensor, scales: torch.Tensor, bias: Optional[torch.Tensor] = None, *,
                              name: str = "") -> List[QuantizedWeight]:
    """Fused gpt-oss expert tensors [E, N, G, 16] / [E, N, G] (/ bias [E, N]) -> one QuantizedWeight per expert."""
    if blocks.dim() != 4 or scales.dim() != 3 or blocks.shape[0] != scales.shape[0]:
        raise _fail(name, "mxfp4 (gpt-oss blocks/scales)",
                    f"fused expert tensors must be blocks [E, N, G, 16] and scales [E, N, G], got "
                    f"{list(blocks.shape)} and {list(scales.shape)}")
    return [mxfp4_blocks_to_qweight(blocks[e], scales[e], name=f"{name}.{e}",
                                    bias=None if bias is None else bias[e]) for e in range(blocks.shape[0])]


# ------------------------------------------------------------------------------------- FP8 (DeepSeek / HF "fp8")
def fp8_block_to_qweight(weight: torch.Tensor, weight_scale_inv: torch.Tensor, *,
                         block: Sequence[int] = (128, 128), name: str = "",
                         bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """DeepSeek-V3 style FP8: ``weight`` e4m3 [N, K] and ``weight_scale_inv`` fp32 [ceil(N/bn), ceil(K/bk)].
    Despite its name the scale is the dequant multiplier: ``w = fp8 * weight_scale_inv[n // bn, k // bk]``.
    A scalar ``weight_scale_inv`` (no block size) is a per-tensor scale."""
    fmt = f"fp8 block {block[0]}x{block[1]}" if block else "fp8 per-tensor"
    _expect(weight, "weight", name, fmt, dtypes=(torch.float8_e4m3fn,))
    if weight.dim() != 2:
        raise _fail(name, fmt, f"tensor 'weight' must be 2-D [N, K], got {list(weight.shape)}")
    n, k = weight.shape
    s = _expect(weight_scale_inv, "weight_scale_inv", name, fmt)
    sdt = _float_scale_dtype(s, "weight_scale_inv", name, fmt)
    spec, scale = _scale_spec_from_shape(s, n, k, sdt, "weight_scale_inv", name, fmt, None,
                                         block if block and s.numel() != 1 else None)
    desc = _desc(name, fmt, dtype=E4M3, scale=spec)
    return QuantizedWeight(desc, (n, k), _bytes_to_words(_as_uint8(weight)), scale.contiguous(), None, None, None,
                           bias, name)


def fp8_tensor_to_qweight(weight: torch.Tensor, weight_scale: torch.Tensor, *, name: str = "",
                          bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """FP8 e4m3 weight with a per-tensor or per-channel float32 ``weight_scale`` (ModelOpt FP8, vLLM fp8)."""
    fmt = "fp8"
    _expect(weight, "weight", name, fmt, dtypes=(torch.float8_e4m3fn,))
    n, k = weight.shape
    sdt = _float_scale_dtype(_expect(weight_scale, "weight_scale", name, fmt), "weight_scale", name, fmt)
    spec, scale = _scale_spec_from_shape(weight_scale, n, k, sdt, "weight_scale", name, fmt)
    desc = _desc(name, fmt, dtype=E4M3, scale=spec)
    return QuantizedWeight(desc, (n, k), _bytes_to_words(_as_uint8(weight)), scale.contiguous(), None, None, None,
                           bias, name)


# ------------------------------------------------------------------------------------ dense (unquantized) helper
def dense_to_qweight(weight: torch.Tensor, name: str = "", bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """An fp8 e4m3 weight without scales, as a scale-free QuantizedWeight (used by tests; bf16 layers stay dense)."""
    if weight.dtype != torch.float8_e4m3fn:
        raise _fail(name, "dense", f"only an fp8 e4m3 tensor can be a scale-free quantized weight, got {weight.dtype}")
    n, k = weight.shape
    return QuantizedWeight(WeightDesc(E4M3), (n, k), _bytes_to_words(_as_uint8(weight)), name=name, bias=bias)


# ----------------------------------------------------------------------------------------- native (vllm-humming)
NATIVE_TENSORS = ("qweight", "scale", "zero", "scale2", "k_perm")


def native_to_qweight(tensors: Dict[str, torch.Tensor], desc, shape: Sequence[int], *, name: str = "",
                      bias: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """Our own format: the canonical tensors under ``<layer>.qweight|scale|zero|scale2|k_perm`` (see
    :func:`qweight_to_native` and the reader's docstring for the config)."""
    d = desc if isinstance(desc, WeightDesc) else _desc_parse(desc, name)
    fmt = f"humming {d}"
    qweight = _expect(tensors.get("qweight"), "qweight", name, fmt)
    scale = tensors.get("scale")
    if scale is not None and d.scale is not None and d.scale.dtype.bits <= 8:
        scale = _as_uint8(scale)
    zero = tensors.get("zero")
    k_perm = tensors.get("k_perm")
    try:
        return QuantizedWeight(d, tuple(shape), qweight, scale, zero, tensors.get("scale2"),
                               None if k_perm is None else k_perm.to(torch.int64), bias, name)
    except DescError as e:
        raise FormatError(str(e)) from None


def _desc_parse(s: str, name: str) -> WeightDesc:
    try:
        return WeightDesc.parse(s)
    except DescError as e:
        raise _fail(name, "humming", f"weight description {s!r}: {e}") from None


def qweight_to_native(qw: QuantizedWeight) -> Dict[str, torch.Tensor]:
    """Canonical tensors to save: suffix -> tensor (8-bit scales as uint8 codes)."""
    out = {"qweight": qw.qweight}
    for key in ("scale", "zero", "scale2", "k_perm"):
        t = getattr(qw, key)
        if t is not None:
            out[key] = t
    return out


# ----------------------------------------------------------------------------------------------- fused layers
def _tensor_to_channel(qw: QuantizedWeight) -> Tuple[WeightDesc, torch.Tensor]:
    n, _ = qw.shape
    d = qw.desc
    new = WeightDesc(d.dtype, ScaleSpec("channel", d.scale.dtype), d.scale2, d.zero_point)
    return new, qw.scale.reshape(1, 1).expand(n, 1).contiguous()


def concat_shards(shards: Sequence[QuantizedWeight], names: Optional[Sequence[str]] = None,
                  name: str = "") -> QuantizedWeight:
    """Concatenate shard weights of a fused layer (qkv, gate_up) along N.

    All shards must share the description, K and ``k_perm``.  Per-tensor scales (first or second level) that differ
    between shards become per-channel scales when the description allows it (first-level: float scale dtypes;
    second-level: always, float32 [N]); otherwise the error names the shards."""
    if not shards:
        raise FormatError(f"{_who(name)}: no shards to concatenate")
    names = list(names) if names is not None else [s.name or f"shard{i}" for i, s in enumerate(shards)]
    ref = shards[0]
    k = ref.shape[1]
    for s, nm in zip(shards, names):
        if s.shape[1] != k:
            raise FormatError(f"{_who(name)}: shard {nm!r} has K={s.shape[1]}, shard {names[0]!r} has K={k}")
        if s.desc != ref.desc:
            raise FormatError(f"{_who(name)}: shards have different descriptions: {names[0]!r} is {ref.desc}, "
                              f"{nm!r} is {s.desc}; a fused layer needs one description")
        if (s.k_perm is None) != (ref.k_perm is None) or (s.k_perm is not None and not torch.equal(
                s.k_perm.to(ref.k_perm.device), ref.k_perm)):
            raise FormatError(f"{_who(name)}: shards {names[0]!r} and {nm!r} have different act-order permutations "
                              f"(g_idx); a fused layer needs one input-channel order")
        if (s.bias is None) != (ref.bias is None):
            raise FormatError(f"{_who(name)}: shard {nm!r} {'has' if s.bias is not None else 'lacks'} a bias, "
                              f"shard {names[0]!r} does not")
    d = ref.desc
    n_total = sum(s.shape[0] for s in shards)
    scale = zero = scale2 = None
    desc = d
    if d.scale is not None:
        g = d.scale.granularity
        if g == "tensor":
            same = all(torch.equal(s.scale.reshape(-1), ref.scale.reshape(-1).to(s.scale.device)) for s in shards)
            if same:
                scale = ref.scale
            else:
                if d.scale.dtype.bits <= 8 or d.zero_point is not None:
                    raise FormatError(
                        f"{_who(name)}: shards {', '.join(map(repr, names))} have different per-tensor scales "
                        f"of dtype {d.scale.dtype}, which cannot become per-channel scales in {d}")
                parts = [_tensor_to_channel(s) for s in shards]
                desc = parts[0][0]
                scale = torch.cat([p[1] for p in parts], 0)
        elif g == "block":
            bn = d.scale.block[0]
            for s, nm in zip(shards[:-1], names[:-1]):
                if s.shape[0] % bn:
                    raise FormatError(f"{_who(name)}: shard {nm!r} has N={s.shape[0]}, not a multiple of the "
                                      f"{bn}-row scale block; block-scaled shards cannot be fused")
            scale = torch.cat([s.scale for s in shards], 0)
        else:
            scale = torch.cat([s.scale for s in shards], 0)
        if d.zero_point is not None:
            zero = torch.cat([s.zero for s in shards], 0)
    if d.scale2 is not None:
        if d.scale2.granularity == "tensor":
            same = all(torch.equal(s.scale2, ref.scale2.to(s.scale2.device)) for s in shards)
            if same:
                scale2 = ref.scale2
            else:
                desc = WeightDesc(desc.dtype, desc.scale, ScaleSpec("channel", FP32), desc.zero_point)
                scale2 = torch.cat([s.scale2.expand(s.shape[0]) for s in shards], 0).contiguous()
        else:
            scale2 = torch.cat([s.scale2 for s in shards], 0)
    qweight = torch.cat([s.qweight for s in shards], 0)
    bias = None if ref.bias is None else torch.cat([s.bias for s in shards], 0)
    try:
        return QuantizedWeight(desc, (n_total, k), qweight, scale, zero, scale2, ref.k_perm, bias, name)
    except DescError as e:
        raise FormatError(f"{_who(name)}: fusing shards {names}: {e}") from None
