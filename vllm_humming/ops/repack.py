"""Canonical quantized weight -> the GEMM kernels' layout (kernels/include/humming/layout.cuh), and back.

Runs on whatever device the weight is on (GPU at load time: a handful of gathers and shifts over the code tensor).
``unrepack_codes`` is the exact inverse of ``repack_codes`` and is what the tests use to prove the layout.

Kernel-side integer codes are always unsigned with a constant offset (value = code - offset):
  * signed intN: two's-complement code with its top bit flipped, offset 2^(N-1)
  * uintNbB (GPTQ symmetric): unchanged, offset B
  * uintN (+ zero point): unchanged, offset 0
Float codes are unchanged; 4-bit float codes (FP4 e2m1, e1m2, e3m0) get their own bit layout inside the words
(:func:`_pack_float4_words`, FloatFamily in dequant.cuh).
"""

from __future__ import annotations

import functools
from typing import List, Tuple

import torch

from ..dtypes import IntType
from ..packing import unpack_codes

__all__ = ["plane_split", "repack_codes", "unrepack_codes", "kernel_int_codes", "ATOM_ROWS", "ATOM_COLS"]

ATOM_ROWS = 16
ATOM_COLS = 64


def plane_split(bits: int) -> List[Tuple[int, int]]:
    """[(plane width, bit offset)] lowest bits first -- must match PlaneSplit in layout.cuh.

    For 3 bits the widths (2, 1) only say how the lane's three words are arranged in memory (two, then one); their
    bits are FIELDS, not planes (:func:`_pack3_words`)."""
    widths = {1: [1], 2: [2], 3: [2, 1], 4: [4], 5: [4, 1], 6: [4, 2], 7: [4, 2, 1], 8: [8]}[bits]
    out, off = [], 0
    for w in widths:
        out.append((w, off))
        off += w
    return out


def kernel_int_codes(codes: torch.Tensor, dtype: IntType) -> Tuple[torch.Tensor, int]:
    """Canonical integer codes -> (kernel codes, offset)."""
    if dtype.signed:
        return codes ^ (1 << (dtype.bits - 1)), 1 << (dtype.bits - 1)
    return codes, dtype.bias


@functools.lru_cache(maxsize=None)
def _pair_index(device_str: str):
    """For lane l (32), pair q (16), half h (2): (row in atom, column in atom), as two [32, 16, 2] long tensors."""
    lane = torch.arange(32).view(32, 1, 1)
    q = torch.arange(16).view(1, 16, 1)
    h = torch.arange(2).view(1, 1, 2)
    g, t = lane // 4, lane % 4
    f, r = q // 4, q % 4
    row = g + 8 * (r % 2)
    col = 16 * f + 2 * t + 8 * (r // 2) + h
    return row.expand(32, 16, 2).to(device_str), col.expand(32, 16, 2).to(device_str)


def _pack3_words(pairs: torch.Tensor) -> torch.Tensor:
    """3-bit fields (layout.cuh): pairs [..., 16 pairs, 2 halves] -> words [..., 3].  Word i holds pairs 5i..5i+4 at
    bits 3j / 16 + 3j; bit 15 / 31 of word i holds bit i of pair 15's low / high code."""
    shifts = (torch.arange(5, device=pairs.device) * 3)
    f = pairs[..., :15, :].reshape(*pairs.shape[:-2], 3, 5, 2)
    lo = (f[..., 0] << shifts).sum(-1)
    hi = (f[..., 1] << shifts).sum(-1)
    i = torch.arange(3, device=pairs.device)
    last = pairs[..., 15:16, :]                                  # [..., 1, 2]
    lo = lo | (((last[..., 0] >> i) & 1) << 15)
    hi = hi | (((last[..., 1] >> i) & 1) << 15)
    return lo | (hi << 16)


def _unpack3_words(words: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`_pack3_words`: words [..., 3] -> pairs [..., 16, 2]."""
    shifts = (torch.arange(5, device=words.device) * 3)
    lo = (words.unsqueeze(-1) >> shifts) & 7                     # [..., 3, 5]
    hi = (words.unsqueeze(-1) >> (shifts + 16)) & 7
    i = torch.arange(3, device=words.device)
    lo15 = (((words >> 15) & 1) << i).sum(-1, keepdim=True)
    hi15 = (((words >> 31) & 1) << i).sum(-1, keepdim=True)
    lo = torch.cat([lo.flatten(-2), lo15], -1)
    hi = torch.cat([hi.flatten(-2), hi15], -1)
    return torch.stack([lo, hi], -1)


# 4-bit float codes (sign | 3 exponent+mantissa bits): where pair j of a word keeps its exponent+mantissa field and
# its sign bit in each 16-bit half -- FloatFamily::kF4EmStart / kF4Sign in dequant.cuh, which explains the choice.
F4_EM_START = (0, 3, 6, 9)
F4_SIGN = (13, 12, 15, 14)


def _pack_float4_words(pairs: torch.Tensor) -> torch.Tensor:
    """4-bit float codes: pairs [..., 16, 2] -> words [..., 4].  Word i holds pairs 4i..4i+3; pair j's code c keeps
    c & 7 at bits F4_EM_START[j]..+2 and c >> 3 at bit F4_SIGN[j] of the low (low k) and high (high k) half."""
    c = pairs.unflatten(-2, (4, 4))                                  # [..., word, j, half]
    em = torch.tensor(F4_EM_START, device=pairs.device).view(4, 1)
    sg = torch.tensor(F4_SIGN, device=pairs.device).view(4, 1)
    halves = (((c & 7) << em) | ((c >> 3) << sg)).sum(-2)            # fields are disjoint: sum == or
    return halves[..., 0] | (halves[..., 1] << 16)


def _unpack_float4_words(words: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`_pack_float4_words`: words [..., 4] -> pairs [..., 16, 2]."""
    em = torch.tensor(F4_EM_START, device=words.device).view(4, 1)
    sg = torch.tensor(F4_SIGN, device=words.device).view(4, 1)
    halves = torch.stack([words & 0xFFFF, (words >> 16) & 0xFFFF], -1).unsqueeze(-2)   # [..., word, 1, half]
    c = ((halves >> em) & 7) | (((halves >> sg) & 1) << 3)                            # [..., word, j, half]
    return c.flatten(-3, -2)


def _pack_lane_words(pairs: torch.Tensor, bits: int, float4: bool = False) -> torch.Tensor:
    """pairs [..., 16 pairs, 2 halves] -> a lane's `bits` words [..., bits] (the bit encoding of layout.cuh; plane i's
    words at lane offset bit_offset(i); ``float4``: 4-bit float codes, :func:`_pack_float4_words`)."""
    if bits == 3:
        return _pack3_words(pairs)
    if float4:
        assert bits == 4
        return _pack_float4_words(pairs)
    out = []
    for p, off in plane_split(bits):
        bv = ((pairs >> off) & ((1 << p) - 1)).unflatten(-2, (p, 16 // p))   # pair q = word * per_word + j
        shifts = torch.arange(16 // p, device=pairs.device) * p
        out.append((bv[..., 0] << shifts).sum(-1) | ((bv[..., 1] << shifts).sum(-1) << 16))
    return torch.cat(out, -1)


def _unpack_lane_words(words: torch.Tensor, bits: int, float4: bool = False) -> torch.Tensor:
    """Inverse of :func:`_pack_lane_words`: words [..., bits] -> pairs [..., 16, 2]."""
    if bits == 3:
        return _unpack3_words(words)
    if float4:
        assert bits == 4
        return _unpack_float4_words(words)
    pairs = torch.zeros(*words.shape[:-1], 16, 2, dtype=torch.int64, device=words.device)
    for p, off in plane_split(bits):
        pw = words[..., off:off + p].unsqueeze(-1)                    # plane words sit at lane offset = bit offset
        shifts = torch.arange(16 // p, device=words.device) * p
        pairs[..., 0] |= ((pw >> shifts) & ((1 << p) - 1)).flatten(-2) << off
        pairs[..., 1] |= ((pw >> (shifts + 16)) & ((1 << p) - 1)).flatten(-2) << off
    return pairs


def repack_codes(codes: torch.Tensor, bits: int, float_codes: bool = False) -> torch.Tensor:
    """Kernel codes uint8 [N, K] -> int32 [ceil(K/64), ceil(N/16), 32*bits] (layout.cuh).  ``float_codes``: the codes
    are a float format's (4-bit ones take their own bit layout in the words)."""
    n, k = codes.shape
    n16, k64 = -(-n // ATOM_ROWS) * ATOM_ROWS, -(-k // ATOM_COLS) * ATOM_COLS
    c = torch.zeros(n16, k64, dtype=torch.int64, device=codes.device)
    c[:n, :k] = codes.to(torch.int64)
    na, ka = n16 // ATOM_ROWS, k64 // ATOM_COLS
    # [ka, na, 16 rows, 64 cols]
    atoms = c.view(na, ATOM_ROWS, ka, ATOM_COLS).permute(2, 0, 1, 3)
    row, col = _pair_index(str(codes.device))
    pairs = atoms[:, :, row, col]                               # [ka, na, 32 lanes, 16 pairs, 2 halves]
    words = _pack_lane_words(pairs, bits, float_codes and bits == 4)   # [ka, na, 32 lanes, bits]
    # memory: per plane region, its p words of every lane (lane-contiguous)
    out = torch.cat([words[..., off:off + p].reshape(ka, na, 32 * p) for p, off in plane_split(bits)], dim=-1)
    out = torch.where(out >= (1 << 31), out - (1 << 32), out)
    return out.to(torch.int32).contiguous()


def unrepack_codes(packed: torch.Tensor, bits: int, n: int, k: int, float_codes: bool = False) -> torch.Tensor:
    """Inverse of :func:`repack_codes` (drops the padding)."""
    ka, na, nwords = packed.shape
    assert nwords == 32 * bits
    w = packed.to(torch.int64) & 0xFFFFFFFF
    words = torch.cat([w[..., 32 * off:32 * (off + p)].reshape(ka, na, 32, p) for p, off in plane_split(bits)], -1)
    pairs = _unpack_lane_words(words, bits, float_codes and bits == 4)
    atoms = torch.zeros(ka, na, ATOM_ROWS, ATOM_COLS, dtype=torch.int64, device=packed.device)
    row, col = _pair_index(str(packed.device))
    atoms[:, :, row, col] = pairs
    c = atoms.permute(1, 2, 0, 3).reshape(na * ATOM_ROWS, ka * ATOM_COLS)
    return c[:n, :k].to(torch.uint8)
