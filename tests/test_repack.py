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


def _lane_pair_code(packed, bits, ka, na, lane, q, float_codes=False):
    """Independent reading of layout.cuh: the two codes of pair q of `lane` in atom (ka, na)."""
    words = [int(w) & 0xFFFFFFFF for w in packed[ka, na].tolist()]
    if float_codes and bits == 4:
        return _float4_pair_bits(words[lane * 4 + q // 4], q % 4)
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


@pytest.mark.parametrize("bits,float_codes", [(3, False), (4, False), (7, False), (8, False), (4, True)])
def test_layout_matches_the_documented_fragment_order(bits, float_codes):
    n, k = 32, 128
    codes = torch.randint(0, 1 << bits, (n, k), dtype=torch.int64).to(torch.uint8)
    packed = repack_codes(codes, bits, float_codes=float_codes)
    for ka in range(k // 64):
        for na in range(n // 16):
            for lane in (0, 5, 31):
                g, t = lane // 4, lane % 4
                for q in range(16):
                    f, r = q // 4, q % 4
                    row = na * 16 + g + 8 * (r & 1)
                    col = ka * 64 + 16 * f + 2 * t + 8 * (r >> 1)
                    assert _lane_pair_code(packed, bits, ka, na, lane, q, float_codes) == (
                        int(codes[row, col]), int(codes[row, col + 1]))


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


# ---- 4-bit float codes: their own bit layout inside the words (dequant.cuh FloatFamily::kF4EmStart / kF4Sign)

@pytest.mark.parametrize("shape", [(16, 64), (37, 200), (130, 1000)])
def test_float4_round_trip(shape):
    g = torch.Generator().manual_seed(shape[0])
    codes = torch.randint(0, 16, shape, generator=g, dtype=torch.int64).to(torch.uint8)
    packed = repack_codes(codes, 4, float_codes=True)
    assert tuple(packed.shape) == (-(-shape[1] // 64), -(-shape[0] // 16), 128)
    assert torch.equal(unrepack_codes(packed, 4, *shape, float_codes=True), codes)
    assert not torch.equal(packed, repack_codes(codes, 4))    # a different layout than integer nibbles


def _float4_pair_bits(word, j):
    """Independent reading of the 4-bit float layout: pair j's (low, high) codes in a 32-bit word."""
    em, sg = (0, 3, 6, 9)[j], (13, 12, 15, 14)[j]
    return tuple((((word >> (16 * h + em)) & 7) | (((word >> (16 * h + sg)) & 1) << 3)) for h in (0, 1))


def _kernel_float4_raw(word, j, mant_bits, man):
    """FloatFamily<T, e, man>::raw for 4-bit codes, instruction by instruction (dequant.cuh): the raw 32-bit pair."""
    def shl(v, s):
        return (v << s if s >= 0 else v >> -s) & 0xFFFFFFFF
    em_mask = ((7 << (mant_bits - man)) & 0xFFFF) * 0x00010001
    e, g = (mant_bits - man) - (0, 3, 6, 9)[j], 15 - (13, 12, 15, 14)[j]
    if e == g:
        return shl(word, e) & (em_mask | 0x80008000)
    return (shl(word, e) & em_mask) ^ (shl(word, g) & 0x80008000)


@pytest.mark.parametrize("name", ["float4_e2m1", "float4_e1m2", "float4_e3m0"])
@pytest.mark.parametrize("act", [torch.bfloat16, torch.float16])
def test_float4_kernel_decode_gives_every_code_value(name, act):
    """Every pair position of a word, every code in both halves: the kernel's shifts and masks on the repacked word,
    read as two `act` numbers and times 2^kExpAdjust, are the format's values."""
    dt = parse_dtype(name)
    mant_bits, exp_bias = (7, 127) if act == torch.bfloat16 else (10, 15)
    adj = exp_bias - ((1 << (dt.exp_bits - 1)) - 1)
    table = dt.decode_table()
    for lo in range(16):
        for hi in range(16):
            codes = torch.zeros(16, 64, dtype=torch.uint8)
            codes[:, 0::2], codes[:, 1::2] = lo, hi     # every pair of every lane: low k lo, high k hi
            packed = repack_codes(codes, 4, float_codes=True)
            for q in range(16):                         # lane 0's 16 pairs: 4 words x 4 positions
                word = int(packed[0, 0, q // 4]) & 0xFFFFFFFF
                raw = _kernel_float4_raw(word, q % 4, mant_bits, dt.man_bits)
                pair = torch.tensor([raw & 0xFFFF, raw >> 16], dtype=torch.int32).to(torch.int16).view(act)
                got = pair.double() * 2.0 ** adj
                assert got.tolist() == [table[lo].item(), table[hi].item()], (name, act, lo, hi, q)


def test_float4_layout_constants_match_dequant_cuh():
    """repack.py's F4_EM_START / F4_SIGN and FloatFamily's kF4EmStart / kF4Sign (dequant.cuh) are one layout."""
    import re

    from vllm_humming.jit.paths import include_dir
    from vllm_humming.ops.repack import F4_EM_START, F4_SIGN

    src = (include_dir() / "humming" / "dequant.cuh").read_text()

    def table(name):
        m = re.search(name + r"\[4\] = \{([^}]*)\}", src)
        assert m, f"{name} not found in dequant.cuh"
        return tuple(int(v) for v in m.group(1).split(","))

    assert table("kF4EmStart") == F4_EM_START
    assert table("kF4Sign") == F4_SIGN
