"""Element types: every code point decodes to the value its standard defines; encode rounds correctly; names parse.

The expected values are computed here, independently of ``vllm_humming.dtypes``: from bit fields with
``math.ldexp``, from IEEE half/single precision via ``struct``, from literal tables of the OCP MX spec, and from
torch's own float8 dtypes (bit views).
"""

from __future__ import annotations

import math
import struct

import pytest
import torch

from vllm_humming import dtypes as D
from vllm_humming.dtypes import DTypeError, FloatType, IntType, parse_dtype


# ----------------------------------------------------------------------------------------- independent decoders
def ref_int(code: int, bits: int, signed: bool, bias: int = 0) -> int:
    assert 0 <= code < (1 << bits)
    if signed:
        return code - (1 << bits) if code & (1 << (bits - 1)) else code
    return code - bias


def ref_float(code: int, e: int, m: int, signed: bool = True, conv: str = "finite") -> float:
    """Value of a sign/exponent/mantissa code: IEEE-style bias 2**(e-1)-1, subnormals at exponent field 0.

    conv: "finite" (every code finite), "fn" (exponent and mantissa all ones is NaN, no Inf), "ieee" (exponent
    all ones: Inf if mantissa 0 else NaN).
    """
    nbits = int(signed) + e + m
    assert 0 <= code < (1 << nbits)
    neg = signed and (code >> (e + m)) & 1
    ef = (code >> m) & ((1 << e) - 1)
    mf = code & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    if conv == "ieee" and ef == (1 << e) - 1:
        v = math.inf if mf == 0 else math.nan
    elif conv == "fn" and ef == (1 << e) - 1 and mf == (1 << m) - 1:
        v = math.nan
    elif ef == 0:
        v = math.ldexp(mf, 1 - bias - m)              # 0.mmm * 2**(1-bias)
    else:
        v = math.ldexp((1 << m) | mf, ef - bias - m)  # 1.mmm * 2**(ef-bias)
    return -v if neg else v


def standard_conv(e: int, m: int) -> str:
    """The convention the standards give each signed split: OCP e4m3fn, OCP/IEEE-like e5m2, all others finite."""
    if (e, m) == (4, 3):
        return "fn"
    if (e, m) == (5, 2):
        return "ieee"
    return "finite"


def table(dt) -> list:
    return dt.decode_table().tolist()


def assert_same_values(got: list, want: list, what: str):
    assert len(got) == len(want), what
    for code, (g, w) in enumerate(zip(got, want)):
        if math.isnan(w):
            assert math.isnan(g), f"{what}: code {code:#x} should be NaN, got {g}"
        else:
            assert g == w, f"{what}: code {code:#x} should be {w!r}, got {g!r}"
            assert math.copysign(1, g) == math.copysign(1, w), f"{what}: code {code:#x} sign of zero"


# ------------------------------------------------------------------------------------------------ integer codes
@pytest.mark.parametrize("bits", range(1, 9))
def test_int_tables(bits):
    n = 1 << bits
    assert_same_values(table(IntType(bits, True)), [float(ref_int(c, bits, True)) for c in range(n)], f"int{bits}")
    assert_same_values(table(IntType(bits, False)), [float(c) for c in range(n)], f"uint{bits}")
    for bias in range(n):
        t = IntType(bits, False, bias)
        assert_same_values(table(t), [float(c - bias) for c in range(n)], str(t))
        assert (t.min, t.max) == (-bias, n - 1 - bias)
    s = IntType(bits, True)
    assert (s.min, s.max) == (-(n // 2), n // 2 - 1)


def test_int_known_values():
    # GPTQ's uint4b8: code 0 -> -8, code 8 -> 0, code 15 -> 7; AWQ/vLLM uint8b128 likewise
    assert table(D.UINT4B8)[0] == -8 and table(D.UINT4B8)[8] == 0 and table(D.UINT4B8)[15] == 7
    assert table(D.UINT8B128)[0] == -128 and table(D.UINT8B128)[255] == 127
    assert table(D.INT4)[0xF] == -1 and table(D.INT4)[0x8] == -8 and table(D.INT4)[0x7] == 7
    assert table(D.INT8)[0x80] == -128 and table(D.INT8)[0xFF] == -1
    # int8 agrees with torch's int8 bit view
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    assert table(D.INT8) == codes.view(torch.int8).to(torch.float64).tolist()


@pytest.mark.parametrize("bits,bias", [(1, 2), (4, 16), (4, -1), (8, 256)])
def test_int_bad_bias(bits, bias):
    with pytest.raises(DTypeError, match="bias"):
        IntType(bits, False, bias)


@pytest.mark.parametrize("bits", [0, 9, 16])
def test_int_bad_bits(bits):
    with pytest.raises(DTypeError, match="1..8 bits"):
        IntType(bits, True)


def test_int_decode_masks_and_types():
    t = IntType(3, True)
    got = t.decode(torch.tensor([0, 3, 4, 7], dtype=torch.uint8))
    assert got.dtype == torch.float32 and got.tolist() == [0.0, 3.0, -4.0, -1.0]


# ------------------------------------------------------------------------------------------------- float codes
# OCP MX spec (v1.0) tables, positive half, codes 0 .. 2**(bits-1)-1 in order.
MX_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
MX_E2M3 = ([i / 8 for i in range(8)] + [1 + i / 8 for i in range(8)] + [2 + i / 4 for i in range(8)]
           + [4 + i / 2 for i in range(8)])
MX_E3M2 = ([i / 16 for i in range(4)] + [0.25 * (1 + i / 4) for i in range(4)] + [0.5 * (1 + i / 4) for i in range(4)]
           + [1 + i / 4 for i in range(4)] + [2 + i / 2 for i in range(4)] + [4 + i for i in range(4)]
           + [8 + 2 * i for i in range(4)] + [16 + 4 * i for i in range(4)])


@pytest.mark.parametrize("dt,positive", [(D.E2M1, MX_E2M1), (D.E2M3, MX_E2M3), (D.E3M2, MX_E3M2)],
                         ids=["e2m1", "e2m3", "e3m2"])
def test_mx_small_floats_match_ocp_tables(dt, positive):
    n = len(positive)
    assert dt.bits == {8: 4, 32: 6}[n]
    want = positive + [-v for v in positive]  # the sign bit is the top bit; code n is -0.0
    assert_same_values(table(dt), want, str(dt))
    assert dt.max == max(positive) and dt.min == -max(positive)


def test_float4_e2m1_vs_torch_fp4_dtype():
    # torch 2.13 has float4_e2m1fn_x2 (two e2m1 codes per byte) but no conversion kernel for it on CPU, so its
    # values cannot be read back; check that the dtype packs two 4-bit codes per byte and parses to our e2m1
    # (the values are checked against the OCP table above).
    fp4 = getattr(torch, "float4_e2m1fn_x2", None)
    if fp4 is None:
        pytest.skip("this torch has no float4_e2m1fn_x2")
    assert fp4.itemsize == 1
    assert parse_dtype(fp4) is D.E2M1 or parse_dtype(fp4) == D.E2M1


def _torch_bitview(torch_dtype) -> list:
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    return codes.view(torch_dtype).to(torch.float64).tolist()


def test_e4m3fn_vs_torch_and_spec():
    want = [ref_float(c, 4, 3, True, "fn") for c in range(256)]
    assert_same_values(table(D.E4M3), want, "e4m3fn vs bit fields")
    assert_same_values(table(D.E4M3), _torch_bitview(torch.float8_e4m3fn), "e4m3fn vs torch")
    t = table(D.E4M3)
    assert t[0x7E] == 448.0 and math.isnan(t[0x7F]) and math.isnan(t[0xFF]) and t[0xFE] == -448.0
    assert t[0x01] == 2.0 ** -9 and t[0x08] == 2.0 ** -6 and t[0x38] == 1.0
    assert sum(math.isnan(v) for v in t) == 2 and not any(math.isinf(v) for v in t)
    assert D.E4M3.max == 448.0


def _fp16_from_bits(h: int) -> float:
    return struct.unpack("<e", struct.pack("<H", h))[0]


def test_e5m2_vs_torch_and_half_precision():
    # e5m2 is the top byte of an IEEE half: decode through struct's binary16
    want = [_fp16_from_bits(c << 8) for c in range(256)]
    assert_same_values(table(D.E5M2), want, "e5m2 vs binary16")
    assert_same_values(table(D.E5M2), _torch_bitview(torch.float8_e5m2), "e5m2 vs torch")
    t = table(D.E5M2)
    assert t[0x7B] == 57344.0 and t[0x7C] == math.inf and t[0xFC] == -math.inf
    assert all(math.isnan(t[c]) for c in (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF))
    assert t[0x01] == 2.0 ** -16 and D.E5M2.max == 57344.0


def test_e8m0_vs_torch_and_spec():
    want = [math.ldexp(1.0, c - 127) for c in range(255)] + [math.nan]
    assert_same_values(table(D.E8M0), want, "e8m0")
    tv = getattr(torch, "float8_e8m0fnu", None)
    if tv is not None:
        assert_same_values(table(D.E8M0), _torch_bitview(tv), "e8m0 vs torch")
    assert D.E8M0.bits == 8 and not D.E8M0.signed and D.E8M0.scale_only
    assert table(D.E8M0)[127] == 1.0 and D.E8M0.max == 2.0 ** 127


def test_ue4m3_is_positive_e4m3fn():
    # NVFP4 block scale: e4m3fn with the sign bit always 0 -> 7-bit codes 0..127 mean e4m3fn codes 0..127
    t = table(D.UE4M3)
    assert len(t) == 128 and D.UE4M3.scale_only and not D.UE4M3.signed
    assert_same_values(t, [ref_float(c, 4, 3, True, "fn") for c in range(128)], "ue4m3")
    assert D.UE4M3.max == 448.0 and math.isnan(t[127])


def test_wide_types_vs_struct():
    assert D.FP16.bits == 16 and D.BF16.bits == 16 and D.FP32.bits == 32
    assert D.FP16.torch_dtype is torch.float16 and D.BF16.torch_dtype is torch.bfloat16
    assert D.FP32.torch_dtype is torch.float32
    # the ieee formula applied to a few binary16 / binary32 codes agrees with struct
    for h in (0x0001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x8001, 0xC000):
        assert ref_float(h, 5, 10, True, "ieee") == _fp16_from_bits(h)
    for f in (0x00000001, 0x00800000, 0x3F800000, 0x7F7FFFFF, 0xBF000000):
        assert ref_float(f, 8, 23, True, "ieee") == struct.unpack("<f", struct.pack("<I", f))[0]
    with pytest.raises(DTypeError):
        D.BF16.decode_table()


SPLITS = [(e, m) for total in range(4, 9) for e in range(1, total) for m in [total - 1 - e]]


def test_splits_cover_every_4_to_8_bit_split():
    assert len(SPLITS) == sum(t - 1 for t in range(4, 9))  # 3+4+5+6+7 = 25
    for must in [(3, 1), (1, 2), (2, 2), (4, 2), (3, 3), (5, 1), (2, 5), (6, 1), (1, 6), (7, 0), (3, 0)]:
        assert must in SPLITS


@pytest.mark.parametrize("e,m", SPLITS, ids=[f"e{e}m{m}" for e, m in SPLITS])
def test_generic_exmy_tables(e, m):
    dt = parse_dtype(f"e{e}m{m}")
    conv = standard_conv(e, m)
    assert isinstance(dt, FloatType) and dt.bits == 1 + e + m and dt.signed
    want = [ref_float(c, e, m, True, conv) for c in range(1 << dt.bits)]
    assert_same_values(table(dt), want, str(dt))
    # the same type under its long name, and the explicit conventions
    assert parse_dtype(f"float{1 + e + m}_e{e}m{m}") == dt
    assert parse_dtype(str(dt)) == dt
    for conv2, suffix in (("fn", "fn"), ("finite", "f"), ("ieee", "ieee")):
        if conv2 == "fn" and (e, m) == (2, 1):
            continue  # float4_e2m1fn is torch's name for the all-finite OCP e2m1 (checked in test_aliases)
        t2 = parse_dtype(f"float{1 + e + m}_e{e}m{m}{suffix}")
        assert_same_values(table(t2), [ref_float(c, e, m, True, conv2) for c in range(1 << dt.bits)], str(t2))
        assert parse_dtype(str(t2)) == t2, f"{t2} does not round-trip"
    finite = [v for v in want if math.isfinite(v)]
    assert dt.max == max(finite) and dt.min == min(finite)


def test_decode_tensor_api():
    codes = torch.tensor([[0x38, 0xB8], [0x7E, 0x01]], dtype=torch.uint8)
    got = D.E4M3.decode(codes)
    assert got.dtype == torch.float32 and got.tolist() == [[1.0, -1.0], [448.0, 2.0 ** -9]]


# ------------------------------------------------------------------------------------------------------ encode
ENCODE_TYPES = [D.E2M1, D.E2M3, D.E3M2, D.E4M3, D.E5M2, D.UE4M3, FloatType(3, 1), FloatType(1, 2), FloatType(5, 1),
                FloatType(2, 5), FloatType(6, 1), FloatType(3, 4)]


def _grid(dt):
    """(value, code) of every finite non-negative value with the sign bit clear, sorted by value."""
    t = table(dt)
    sign = (1 << (dt.bits - 1)) if dt.signed else 0
    pts = sorted((v, c) for c, v in enumerate(t) if math.isfinite(v) and v >= 0 and not (c & sign))
    return pts


@pytest.mark.parametrize("dt", ENCODE_TYPES, ids=str)
def test_encode_every_code_round_trips(dt):
    t = table(dt)
    codes = [c for c, v in enumerate(t) if math.isfinite(v)]
    vals = torch.tensor([t[c] for c in codes], dtype=torch.float64)
    got = dt.encode(vals)
    assert got.dtype == torch.uint8
    assert got.tolist() == codes  # includes every subnormal and -0.0 (code of the sign bit alone)


@pytest.mark.parametrize("dt", ENCODE_TYPES, ids=str)
def test_encode_rounds_to_nearest_ties_to_even(dt):
    pts = _grid(dt)
    xs, want = [], []
    for (v0, c0), (v1, c1) in zip(pts, pts[1:]):
        assert c1 == c0 + 1  # positive codes are ordered like their values
        mid = (v0 + v1) / 2
        xs += [mid, math.nextafter(mid, -math.inf), math.nextafter(mid, math.inf)]
        want += [c0 if c0 % 2 == 0 else c1, c0, c1]
    x = torch.tensor(xs, dtype=torch.float64)
    assert dt.encode(x).tolist() == want
    if dt.signed:
        sign = 1 << (dt.bits - 1)
        assert dt.encode(-x).tolist() == [c | sign for c in want]


@pytest.mark.parametrize("dt", ENCODE_TYPES, ids=str)
def test_encode_saturates(dt):
    pts = _grid(dt)
    vmax, cmax = pts[-1]
    x = torch.tensor([vmax, vmax * 1.01, vmax * 4, 1e30, math.inf], dtype=torch.float64)
    assert dt.encode(x).tolist() == [cmax] * 5
    if dt.signed:
        sign = 1 << (dt.bits - 1)
        assert dt.encode(-x).tolist() == [cmax | sign] * 5
    else:
        with pytest.raises(DTypeError, match="unsigned"):
            dt.encode(torch.tensor([-1.0]))


@pytest.mark.parametrize("dt", [d for d in ENCODE_TYPES if d.signed], ids=str)
def test_encode_negative_zero_and_underflow(dt):
    sign = 1 << (dt.bits - 1)
    tiny = _grid(dt)[1][0]  # smallest positive (subnormal) value
    x = torch.tensor([0.0, -0.0, tiny / 4, -tiny / 4, tiny / 2, -tiny / 2, tiny * 0.51, -tiny * 0.51],
                     dtype=torch.float64)
    # below half the smallest subnormal rounds to (signed) zero; exactly half ties to the even code 0
    assert dt.encode(x).tolist() == [0, sign, 0, sign, 0, sign, 1, 1 | sign]


def test_encode_nan_is_an_error():
    for dt in (D.E4M3, D.E2M1, D.INT4, D.E8M0):
        with pytest.raises(DTypeError, match="NaN"):
            dt.encode(torch.tensor([1.0, math.nan]))


def _random_in_range(vmax: float, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    # log-uniform magnitudes from deep subnormal to max, random signs, float32-representable
    mag = torch.exp2(torch.empty(n, dtype=torch.float64).uniform_(-22, math.log2(vmax), generator=g))
    sgn = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).to(torch.float64)
    return (mag * sgn).to(torch.float32).clamp(-vmax, vmax)


@pytest.mark.parametrize("dt,tdt", [(D.E4M3, torch.float8_e4m3fn), (D.E5M2, torch.float8_e5m2)],
                         ids=["e4m3fn", "e5m2"])
def test_encode_agrees_with_torch_float8(dt, tdt):
    x = _random_in_range(dt.max, 20000, seed=1)
    # add every exact midpoint between neighbours (ties) and the signed zeros
    pts = _grid(dt)
    mids = [(a + b) / 2 for (a, _), (b, _) in zip(pts, pts[1:])]
    x = torch.cat([x, torch.tensor(mids + [-v for v in mids] + [0.0, -0.0], dtype=torch.float32)])
    want = x.to(tdt).view(torch.uint8)
    got = dt.encode(x)
    bad = (got != want).nonzero().flatten()
    assert bad.numel() == 0, f"first mismatches: {[(x[i].item(), got[i].item(), want[i].item()) for i in bad[:5]]}"


def test_encode_e8m0_agrees_with_torch():
    tv = getattr(torch, "float8_e8m0fnu", None)
    if tv is None:
        pytest.skip("this torch has no float8_e8m0fnu")
    g = torch.Generator().manual_seed(3)
    x = torch.exp2(torch.empty(5000, dtype=torch.float64).uniform_(-120, 120, generator=g)).to(torch.float32)
    x = torch.cat([x, torch.tensor([1.0, 1.5, 3.0, 2.0 ** -100 * 1.5, 0.75], dtype=torch.float32)])
    got = D.E8M0.encode(x)
    want = x.to(tv).view(torch.uint8)
    bad = (got != want).nonzero().flatten()
    assert bad.numel() == 0, f"first mismatches: {[(x[i].item(), got[i].item(), want[i].item()) for i in bad[:5]]}"


@pytest.mark.parametrize("bits", range(2, 9))
def test_int_encode(bits):
    s = IntType(bits, True)
    lo, hi = s.min, s.max
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 0.51, hi + 0.4, hi + 0.6, hi * 10.0, lo - 0.6,
                      lo * 10.0], dtype=torch.float64)
    vals = [0, 2, 2, 0, -2, -2, 0, 1, hi, hi, hi, lo, lo]  # ties to even, saturation at min/max
    vals = [max(lo, min(hi, v)) for v in vals]
    want = [v & ((1 << bits) - 1) for v in vals]
    assert s.encode(x).tolist() == want
    # uintNbB: same values, codes shifted by the bias
    b = IntType(bits, False, 1 << (bits - 1))
    assert b.encode(x).tolist() == [v + (1 << (bits - 1)) for v in vals]
    u = IntType(bits, False)
    assert u.encode(torch.tensor([-3.0, 0.5, 1.5, 1e9])).tolist() == [0, 0, 2, (1 << bits) - 1]


def test_int_encode_every_value_round_trips():
    for bits in range(1, 9):
        for t in (IntType(bits, True), IntType(bits, False), IntType(bits, False, (1 << bits) // 3)):
            vals = torch.tensor(table(t))
            assert t.encode(vals).tolist() == list(range(1 << bits)), str(t)


# ------------------------------------------------------------------------------------------------- parse_dtype
CANONICAL = (["int%d" % b for b in range(1, 9)] + ["uint%d" % b for b in range(1, 9)]
             + ["uint4b8", "uint8b128", "uint2b2", "uint3b4", "uint1b1"]
             + ["float4_e2m1", "float6_e2m3", "float6_e3m2", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                "ue4m3", "bfloat16", "float16", "float32", "float5_e3m1", "float7_e3m3", "float8_e2m5"])


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name):
    dt = parse_dtype(name)
    assert str(dt) == name and dt.name == name
    assert parse_dtype(str(dt)) == dt
    assert parse_dtype(dt) is dt
    assert parse_dtype("  " + name.upper() + " ") == dt


ALIASES = [
    # vLLM scalar_types names
    ("uint4b8", D.UINT4B8), ("uint8b128", D.UINT8B128), ("float4_e2m1f", D.E2M1), ("float6_e3m2f", D.E3M2),
    ("float6_e2m3f", D.E2M3), ("float8_e4m3fn", D.E4M3), ("float8_e8m0fnu", D.E8M0), ("float8_e5m2", D.E5M2),
    ("uint4", D.UINT4), ("int8", D.INT8), ("int4", D.INT4),
    # compressed-tensors / ModelOpt / common spellings
    ("fp8", D.E4M3), ("e4m3", D.E4M3), ("fp8_e4m3", D.E4M3), ("e5m2", D.E5M2), ("fp8_e5m2", D.E5M2),
    ("fp4", D.E2M1), ("e2m1", D.E2M1), ("float4_e2m1fn", D.E2M1), ("e8m0", D.E8M0), ("ue8m0", D.E8M0),
    ("bf16", D.BF16), ("fp16", D.FP16), ("half", D.FP16), ("fp32", D.FP32), ("float", D.FP32),
    ("FP8", D.E4M3), ("INT8", D.INT8),
    # torch dtypes, as objects and as strings
    (torch.float8_e4m3fn, D.E4M3), (torch.float8_e5m2, D.E5M2), (torch.bfloat16, D.BF16), (torch.float16, D.FP16),
    (torch.float32, D.FP32), (torch.int8, D.INT8), (torch.uint8, D.UINT8), ("torch.float8_e4m3fn", D.E4M3),
]
if hasattr(torch, "float8_e8m0fnu"):
    ALIASES.append((torch.float8_e8m0fnu, D.E8M0))
if hasattr(torch, "float4_e2m1fn_x2"):
    ALIASES.append((torch.float4_e2m1fn_x2, D.E2M1))


@pytest.mark.parametrize("spec,want", ALIASES, ids=[str(a[0]) for a in ALIASES])
def test_aliases(spec, want):
    assert parse_dtype(spec) == want


BAD = ["int9", "int0", "uint16", "int4b8", "uint4b16", "float8_e4m3fnuz", "float8_e5m3", "float4_e3m1",
       "e0m3", "fp5", "e9m9", "float12_e5m6", "ue5m2", "float8_e4m3fnu", "", "qint8", "nf4", "float8", None, 4,
       torch.int32, torch.float64, torch.complex64]


@pytest.mark.parametrize("spec", BAD, ids=[repr(b) for b in BAD])
def test_bad_spellings_raise_dtype_error(spec):
    with pytest.raises(DTypeError) as ei:
        parse_dtype(spec)
    msg = str(ei.value)
    assert len(msg) > 20, msg
    if isinstance(spec, str) and spec:
        assert spec in msg  # the message quotes what was asked for


def test_dtype_error_is_exported():
    assert D.DTypeError is DTypeError and issubclass(DTypeError, ValueError)
    assert "DTypeError" in D.__all__
