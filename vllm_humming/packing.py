"""Canonical bit-packing of 1..8-bit codes into int32 words.

Layout: the codes of one row (last dimension, K) form a little-endian bit stream -- code i occupies stream bits
[i*b, i*b + b), bit 0 of word w is stream bit 32*w.  Widths that do not divide 32 (3, 5, 6, 7) straddle words: with
b = 3, code 10 uses bits 30..31 of word 0 and bit 0 of word 1.  A row of K codes takes ceil(K*b/32) words; unused
high bits of the last word are zero.  This is the format readers produce and repack consumes; kernels use their own
layouts, produced by ``vllm_humming.ops.repack`` from this one.

Every 32 consecutive codes fill exactly b words, so packing works on chunks of 32 codes with a fixed, unrolled
(code -> word, shift) schedule.
"""

from __future__ import annotations

import torch

__all__ = ["pack_codes", "unpack_codes", "packed_words"]


def packed_words(k: int, bits: int) -> int:
    return -(-k * bits // 32)


def _check(bits: int):
    if not (1 <= bits <= 8):
        raise ValueError(f"packing supports 1..8-bit codes, got {bits}")


def pack_codes(codes: torch.Tensor, bits: int) -> torch.Tensor:
    """uint8/int codes [..., K] (each < 2**bits) -> int32 words [..., ceil(K*bits/32)]."""
    _check(bits)
    k = codes.shape[-1]
    c = codes.to(torch.int64)
    if c.numel() and (int(c.min()) < 0 or int(c.max()) >= (1 << bits)):
        raise ValueError(f"codes out of range for {bits}-bit packing: [{int(c.min())}, {int(c.max())}]")
    pad = (-k) % 32
    if pad:
        c = torch.nn.functional.pad(c, (0, pad))
    c = c.reshape(*c.shape[:-1], -1, 32)                       # [..., chunks, 32]
    words = torch.zeros(*c.shape[:-1], bits, dtype=torch.int64, device=c.device)
    for i in range(32):
        off = i * bits
        w, s = divmod(off, 32)
        words[..., w] |= (c[..., i] << s) & 0xFFFFFFFF
        if s + bits > 32:                                       # straddles into the next word
            words[..., w + 1] |= c[..., i] >> (32 - s)
    words = words.reshape(*words.shape[:-2], -1)[..., : packed_words(k, bits)]
    # reinterpret the low 32 bits as signed int32 (two's complement wrap)
    words = torch.where(words >= (1 << 31), words - (1 << 32), words)
    return words.to(torch.int32)


def unpack_codes(words: torch.Tensor, bits: int, k: int) -> torch.Tensor:
    """int32 words [..., W] -> uint8 codes [..., k] (inverse of :func:`pack_codes`)."""
    _check(bits)
    if words.shape[-1] != packed_words(k, bits):
        raise ValueError(f"{k} codes of {bits} bits take {packed_words(k, bits)} words, got {words.shape[-1]}")
    w = words.to(torch.int64) & 0xFFFFFFFF
    chunks = -(-k // 32)
    pad = chunks * bits - w.shape[-1]
    if pad:
        w = torch.nn.functional.pad(w, (0, pad))
    w = w.reshape(*w.shape[:-1], chunks, bits)
    mask = (1 << bits) - 1
    out = torch.empty(*w.shape[:-1], 32, dtype=torch.int64, device=w.device)
    for i in range(32):
        off = i * bits
        wi, s = divmod(off, 32)
        v = w[..., wi] >> s
        if s + bits > 32:
            v = v | (w[..., wi + 1] << (32 - s))
        out[..., i] = v & mask
    return out.reshape(*out.shape[:-2], -1)[..., :k].to(torch.uint8)
