"""The kernel weight layout (kernels/include/humming/layout.cuh) and its inverse, checked on CPU."""

import pytest
import torch

from vllm_humming.dtypes import parse_dtype
from vllm_humming.ops.repack import kernel_int_codes, plane_split, repack_codes, unrepack_codes


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("shape", [(16, 64), (37, 200), (130, 1000)])
def test_round_trip(bits, shape):
    g = torch.Generator().manual_seed(bits * 1000 + shape[0])
    codes = torch.randint(0, 1 << bits, shape, generator=g, dtype=torch.int64).to(torch.uint8)
    packed = repack_codes(codes, bits)
    n16, k64 = -(-shape[0] // 16), -(-shape[1] // 64)
    assert packed.dtype == torch.int32 and tuple(packed.shape) == (k64, n16, 32 * bits)
    assert torch.equal(unrepack_codes(packed, bits, *shape), codes)


def _lane_pair_code(packed, bits, ka, na, lane, q):
    """Independent reading of layout.cuh: the two codes of pair q of `lane` in atom (ka, na)."""
    words = [int(w) & 0xFFFFFFFF for w in packed[ka, na].tolist()]
    lo = hi = 0
    if bits == 3:
        # fields: the lane's words are w0 w1 (first 64 words of the atom, two per lane), then w2 (one per lane)
        lw = [words[2 * lane], words[2 * lane + 1], words[64 + lane]]
        if q < 15:
            w = lw[q // 5]
            return (w >> (3 * (q % 5))) & 7, (w >> (16 + 3 * (q % 5))) & 7
        return (sum(((lw[i] >> 15) & 1) << i for i in range(3)),
                sum(((lw[i] >> 31) & 1) << i for i in range(3)))
    base = 0
    for p, off in plane_split(bits):
        per_word = 16 // p
        word = words[base + lane * p + q // per_word]
        j = q % per_word
        lo |= ((word >> (p * j)) & ((1 << p) - 1)) << off
        hi |= ((word >> (16 + p * j)) & ((1 << p) - 1)) << off
        base += 32 * p
    return lo, hi


@pytest.mark.parametrize("bits", [3, 4, 7, 8])
def test_layout_matches_the_documented_fragment_order(bits):
    n, k = 32, 128
    codes = torch.randint(0, 1 << bits, (n, k), dtype=torch.int64).to(torch.uint8)
    packed = repack_codes(codes, bits)
    for ka in range(k // 64):
        for na in range(n // 16):
            for lane in (0, 5, 31):
                g, t = lane // 4, lane % 4
                for q in range(16):
                    f, r = q // 4, q % 4
                    row = na * 16 + g + 8 * (r & 1)
                    col = ka * 64 + 16 * f + 2 * t + 8 * (r >> 1)
                    assert _lane_pair_code(packed, bits, ka, na, lane, q) == (int(codes[row, col]),
                                                                              int(codes[row, col + 1]))


def test_plane_split_matches_layout_cuh():
    assert [w for w, _ in plane_split(3)] == [2, 1]
    assert [w for w, _ in plane_split(7)] == [4, 2, 1]
    for b in range(1, 9):
        assert sum(w for w, _ in plane_split(b)) == b


@pytest.mark.parametrize("name,offset", [("int4", 8), ("int8", 128), ("uint4b8", 8), ("uint4", 0), ("int3", 4)])
def test_kernel_int_codes_keep_values(name, offset):
    dt = parse_dtype(name)
    codes = torch.arange(1 << dt.bits, dtype=torch.uint8)
    kcodes, off = kernel_int_codes(codes, dt)
    assert off == offset
    assert torch.equal(kcodes.to(torch.int32) - off, dt.code_to_int(codes))
