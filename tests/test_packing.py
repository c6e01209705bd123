"""Canonical packing of 1..8-bit codes along K into int32 words (little-endian bit stream per row)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from vllm_humming.packing import pack_codes, packed_words, unpack_codes


def ref_pack_row(codes: list, bits: int) -> list:
    """Independent model: one Python big integer as the row's bit stream, cut into 32-bit words (as int32)."""
    stream = 0
    for i, c in enumerate(codes):
        stream |= c << (i * bits)
    nwords = -(-len(codes) * bits // 32)
    words = [(stream >> (32 * w)) & 0xFFFFFFFF for w in range(nwords)]
    return [w - (1 << 32) if w >= (1 << 31) else w for w in words]


@st.composite
def code_rows(draw):
    bits = draw(st.integers(1, 8))
    rows = draw(st.integers(1, 3))
    k = draw(st.integers(1, 150))
    flat = draw(st.lists(st.integers(0, (1 << bits) - 1), min_size=rows * k, max_size=rows * k))
    return bits, torch.tensor(flat, dtype=torch.uint8).reshape(rows, k)


@given(code_rows())
def test_pack_matches_bitstream_and_round_trips(case):
    bits, codes = case
    words = pack_codes(codes, bits)
    assert words.dtype == torch.int32
    assert words.shape == (codes.shape[0], packed_words(codes.shape[1], bits))
    for r in range(codes.shape[0]):
        assert words[r].tolist() == ref_pack_row(codes[r].tolist(), bits)
    back = unpack_codes(words, bits, codes.shape[1])
    assert back.dtype == torch.uint8 and torch.equal(back, codes)


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("k", [1, 7, 31, 32, 33, 63, 65, 129, 257])
def test_round_trip_every_width_and_odd_lengths(bits, k):
    g = torch.Generator().manual_seed(bits * 1000 + k)
    codes = torch.randint(0, 1 << bits, (5, k), generator=g, dtype=torch.int64).to(torch.uint8)
    codes[0] = (1 << bits) - 1  # all ones: every bit of the stream set, the last word's unused bits stay zero
    words = pack_codes(codes, bits)
    assert words.shape == (5, -(-k * bits // 32))
    assert torch.equal(unpack_codes(words, bits, k), codes)
    used = k * bits - 32 * (words.shape[1] - 1)  # bits used in the last word
    last = int(words[0, -1]) & 0xFFFFFFFF
    assert last == (1 << used) - 1


def test_three_bit_straddling_example():
    # 11 codes of 3 bits = 33 bits: code 10 takes stream bits 30..32, i.e. bits 30, 31 of word 0 and bit 0 of word 1.
    codes = torch.zeros(1, 11, dtype=torch.uint8)
    codes[0, 10] = 0b110  # low bits "10" -> bit 31 of word 0 set (bit 30 clear); high bit "1" -> bit 0 of word 1
    assert pack_codes(codes, 3).tolist() == [[-(2 ** 31), 1]]
    codes[0, 10] = 0b101
    assert pack_codes(codes, 3).tolist() == [[0x40000000, 1]]
    codes = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]], dtype=torch.uint8)
    # bits: 001 010 011 100 101 110 111 000 001 010 | 11 -> word0 = 0b11_010_001_000_111_110_101_100_011_010_001
    word0 = 0b11_010_001_000_111_110_101_100_011_010_001
    assert word0 == 0xD11F58D1
    assert pack_codes(codes, 3).tolist() == [[word0 - 2 ** 32, 0]]
    assert unpack_codes(torch.tensor([[word0 - 2 ** 32, 0]], dtype=torch.int32), 3, 11).tolist() == codes.tolist()


def test_four_and_eight_bit_nibble_order():
    # 4-bit: code i sits in nibble i of the word (low nibble first); 8-bit: byte i
    codes = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]], dtype=torch.uint8)
    assert pack_codes(codes, 4).tolist() == [[0x87654321 - 2 ** 32]]  # int32 two's complement of 0x87654321
    assert pack_codes(codes[:, :4], 8).tolist() == [[0x04030201]]


def test_batched_leading_dims():
    codes = torch.randint(0, 32, (2, 3, 40), generator=torch.Generator().manual_seed(0)).to(torch.uint8)
    w = pack_codes(codes, 5)
    assert w.shape == (2, 3, packed_words(40, 5))
    assert torch.equal(unpack_codes(w, 5, 40), codes)
    assert torch.equal(w[1, 2], pack_codes(codes[1, 2], 5))


@pytest.mark.parametrize("bits", range(1, 9))
def test_out_of_range_codes_are_rejected(bits):
    with pytest.raises(ValueError, match="out of range"):
        pack_codes(torch.tensor([[0, 1 << bits]], dtype=torch.int64), bits)
    with pytest.raises(ValueError, match="out of range"):
        pack_codes(torch.tensor([[0, -1]], dtype=torch.int64), bits)


@pytest.mark.parametrize("bits", [0, 9, 16])
def test_bad_widths(bits):
    with pytest.raises(ValueError, match="1..8-bit"):
        pack_codes(torch.zeros(1, 8, dtype=torch.uint8), bits)
    with pytest.raises(ValueError, match="1..8-bit"):
        unpack_codes(torch.zeros(1, 1, dtype=torch.int32), bits, 8)


def test_unpack_checks_word_count():
    with pytest.raises(ValueError, match="words"):
        unpack_codes(torch.zeros(1, 3, dtype=torch.int32), 4, 8)
