"""Reference numerics: quantize/dequantize of weights and activations, and the reference GEMM.

Values "on the grid" (codes times representable scales, each scale group reaching the type's largest magnitude)
must survive quantize -> dequantize exactly; random values must land within half a grid step (times the scale) of
the input, or saturate exactly at +-max with an overshoot bounded by the rounding of the scale.  The expected
values are built here in float64 from the code values (``decode_table``, itself checked exhaustively in
test_dtypes.py) and scales chosen by the test; scale expansion and the GEMM are recomputed here.
"""

from __future__ import annotations

import math
import zlib

import pytest
import torch

from vllm_humming import dtypes as D
from vllm_humming.desc import (FP8_BLOCK, FP8_CHANNEL, MXFP4, MXINT4, NVFP4, ActDesc, DescError, ScaleSpec,
                               WeightDesc)
from vllm_humming.packing import pack_codes
from vllm_humming.qweight import QuantizedWeight
from vllm_humming.reference import (dequantize_activations, dequantize_weight, quantize_activations,
                                    quantize_weight, reference_gemm)


# ------------------------------------------------------------------------------------------------------ helpers
def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def sym_qmax(dt) -> float:
    if dt.is_int:
        return float(min(dt.max, -dt.min)) if dt.min < 0 else float(dt.max)
    return float(dt.max)


def grid_values(dt, qmax: float) -> torch.Tensor:
    t = dt.decode_table()
    return torch.unique(t[torch.isfinite(t) & (t.abs() <= qmax)])


def sorted_magnitudes(dt) -> torch.Tensor:
    t = dt.decode_table()
    return torch.unique(t[torch.isfinite(t)].abs())


def half_gap(dt, y: torch.Tensor) -> torch.Tensor:
    """Half the distance between the two grid magnitudes around |y| (|y| within the grid)."""
    mags = sorted_magnitudes(dt)
    a = y.abs().to(torch.float64)
    hi = torch.searchsorted(mags, a).clamp(max=len(mags) - 1)
    lo = (hi - 1).clamp(min=0)
    return (mags[hi] - mags[lo]) / 2


def regions(spec: ScaleSpec, n: int, k: int):
    """(row, col) of the first element of every scale region."""
    g = spec.granularity
    if g == "tensor":
        return [(0, 0)]
    if g == "channel" or g == "token":
        return [(r, 0) for r in range(n)]
    if g == "group":
        return [(r, c) for r in range(n) for c in range(0, k, spec.group_size)]
    bn, bk = spec.block
    return [(r, c) for r in range(0, n, bn) for c in range(0, k, bk)]


def expand(s: torch.Tensor, spec: ScaleSpec, n: int, k: int) -> torch.Tensor:
    """[regions] scale values -> [n, k] float64 (written independently of reference.expand_scale)."""
    s = s.to(torch.float64)
    r = torch.arange(n).reshape(n, 1).expand(n, k)
    c = torch.arange(k).reshape(1, k).expand(n, k)
    g = spec.granularity
    if g == "tensor":
        return s.reshape(-1)[0].expand(n, k).clone()
    if g in ("channel", "token"):
        return s.reshape(n, -1)[r, 0]
    if g == "group":
        return s[r, c // spec.group_size]
    return s[r // spec.block[0], c // spec.block[1]]


def region_shape(spec: ScaleSpec, n: int, k: int):
    g = spec.granularity
    if g == "tensor":
        return (1, 1)
    if g in ("channel", "token"):
        return (n, 1)
    if g == "group":
        return (n, -(-k // spec.group_size))
    return (-(-n // spec.block[0]), -(-k // spec.block[1]))


def nice_scales(shape, g: torch.Generator, lo: int = -6, hi: int = 6) -> torch.Tensor:
    """Positive scales with 4 significant bits and exponents in [lo, hi]: exact in bf16/fp16/fp32 and e4m3."""
    m = torch.randint(8, 16, shape, generator=g).to(torch.float64) / 8
    e = torch.randint(lo, hi + 1, shape, generator=g).to(torch.float64)
    return m * torch.exp2(e)


def on_grid_values(dt, n: int, k: int, spec, g: torch.Generator, qmax=None) -> torch.Tensor:
    """Random code values with |v| <= qmax; the first element of every scale region is +-qmax."""
    qmax = sym_qmax(dt) if qmax is None else qmax
    vals = grid_values(dt, qmax)
    v = vals[torch.randint(0, len(vals), (n, k), generator=g)]
    for r, c in (regions(spec, n, k) if spec is not None else []):
        v[r, c] = qmax if torch.rand(1, generator=g).item() < 0.5 else -qmax
    return v


def stored_scale_values(qw) -> torch.Tensor:
    sdt = qw.desc.scale.dtype
    if sdt.bits > 8:
        return qw.scale.to(torch.float64)
    return sdt.decode_table()[qw.scale.to(torch.int64)]


# ------------------------------------------------------------------------------------------- weights: on grid
SYM_INT_DESCS = [
    "w:uint4b8,s:g128:bfloat16", "w:uint4b8,s:g32:float16", "w:uint8b128,s:channel:bfloat16",
    "w:uint2b2,s:g16:float16", "w:uint3b4,s:g64:bfloat16", "w:uint5b16,s:channel:float32",
    "w:uint6b32,s:g128:float16", "w:uint7b64,s:tensor:float32",
    "w:int4,s:g64:bfloat16", "w:int8,s:channel:float32", "w:int2,s:g16:float16", "w:int3,s:channel:bfloat16",
    "w:int5,s:g32:float16", "w:int6,s:g256:bfloat16", "w:int7,s:tensor:float32",
]
FLOAT_DESCS = [
    "w:float4_e2m1,s:channel:bfloat16", "w:float4_e2m1,s:g32:float16", "w:float6_e2m3,s:g64:bfloat16",
    "w:float6_e3m2,s:channel:float32", "w:float8_e4m3fn,s:channel:float32", "w:float8_e4m3fn,s:g128:bfloat16",
    "w:float8_e5m2,s:g32:float32", "w:float8_e5m2,s:tensor:float32",
    "w:float5_e3m1,s:g16:bfloat16", "w:float4_e1m2,s:g128:float16", "w:float5_e2m2,s:channel:bfloat16",
    "w:float7_e4m2,s:g64:float32", "w:float7_e3m3,s:g32:bfloat16", "w:float7_e5m1,s:channel:float16",
    "w:float8_e2m5,s:g128:float32", "w:float8_e6m1,s:g16:bfloat16", "w:float4_e3m0,s:channel:float32",
    "w:float8_e3m4,s:g64:float16", "w:float8_e1m6,s:channel:float32",
]
MX_DESCS = [str(MXFP4), str(MXINT4), "w:float6_e2m3,s:g32:float8_e8m0fnu", "w:float6_e3m2,s:g32:float8_e8m0fnu",
            "w:float8_e4m3fn,s:g32:float8_e8m0fnu", "w:float8_e5m2,s:g32:float8_e8m0fnu",
            "w:int8,s:g32:float8_e8m0fnu"]


def _check_exact(desc: WeightDesc, w64: torch.Tensor, scales64=None, **kw):
    w32 = w64.to(torch.float32)
    assert torch.equal(w32.to(torch.float64), w64), "test bug: the on-grid weight is not exact in float32"
    qw = quantize_weight(w32, desc, **kw)
    assert qw.desc == desc and qw.shape == tuple(w64.shape)
    dq = dequantize_weight(qw)
    assert dq.dtype == torch.float32
    diff = (dq.to(torch.float64) - w64).abs()
    assert torch.equal(dq.to(torch.float64), w64), f"{desc}: max |dq - w| = {diff.max().item()} (not exact)"
    if scales64 is not None:
        assert torch.equal(stored_scale_values(qw).reshape(scales64.shape), scales64), f"{desc}: scales differ"
    return qw


@pytest.mark.parametrize("text", SYM_INT_DESCS + FLOAT_DESCS + [str(FP8_CHANNEL)])
@pytest.mark.parametrize("nk", [(24, 256), (7, 200)])
def test_symmetric_on_grid_is_exact(text, nk):
    desc = WeightDesc.parse(text)
    n, k = nk
    g = gen(zlib.crc32(f"{text}{nk}".encode()))  # deterministic across runs (str hash is salted)
    v = on_grid_values(desc.dtype, n, k, desc.scale, g)
    s = nice_scales(region_shape(desc.scale, n, k), g)
    _check_exact(desc, v * expand(s, desc.scale, n, k), s)


@pytest.mark.parametrize("text", MX_DESCS)
def test_mx_on_grid_is_exact(text):
    desc = WeightDesc.parse(text)
    n, k = 16, 160  # 5 groups of 32
    g = gen(len(text))
    v = on_grid_values(desc.dtype, n, k, desc.scale, g)
    e = torch.randint(-30, 30, region_shape(desc.scale, n, k), generator=g).to(torch.float64)
    qw = _check_exact(desc, v * expand(torch.exp2(e), desc.scale, n, k), torch.exp2(e))
    assert qw.scale.dtype == torch.uint8 and torch.equal(qw.scale.to(torch.float64), e + 127)


@pytest.mark.parametrize("text,s2gran", [(str(NVFP4), "tensor"),
                                         ("w:float4_e2m1,s:g16:ue4m3,s2:channel:float32", "channel"),
                                         ("w:float4_e2m1,s:g32:float8_e4m3fn,s2:tensor:float32", "tensor")])
def test_two_level_on_grid_is_exact(text, s2gran):
    desc = WeightDesc.parse(text)
    n, k = 12, 96
    g = gen(7)
    v = on_grid_values(desc.dtype, n, k, desc.scale, g)
    sg = nice_scales(region_shape(desc.scale, n, k), g, lo=-6, hi=7)
    if s2gran == "tensor":
        sg[3, 1] = 448.0  # the largest group scale maps onto e4m3's max
        s2 = torch.tensor([2.0 ** -5])
        s2full = expand(s2, ScaleSpec("tensor"), n, k)
    else:
        sg[:, 0] = 448.0
        s2 = torch.exp2(torch.randint(-8, 3, (n,), generator=g).to(torch.float64))
        s2full = expand(s2.reshape(n, 1), ScaleSpec("channel"), n, k)
    qw = _check_exact(desc, v * expand(sg, desc.scale, n, k) * s2full, sg)
    assert qw.scale2.dtype == torch.float32 and torch.equal(qw.scale2.to(torch.float64), s2)


def test_fp8_block_on_grid_is_exact():
    desc = FP8_BLOCK
    n, k = 200, 300  # partial blocks on both edges
    g = gen(11)
    v = on_grid_values(desc.dtype, n, k, desc.scale, g)
    s = nice_scales(region_shape(desc.scale, n, k), g, lo=-12, hi=2)
    qw = _check_exact(desc, v * expand(s, desc.scale, n, k), s)
    assert qw.scale.shape == (2, 3) and qw.scale.dtype == torch.float32


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("zp", ["int", "float"])
@pytest.mark.parametrize("gran", ["g64", "channel"])
def test_zero_point_on_grid_is_exact(bits, zp, gran):
    dt = D.IntType(bits, False)
    sdt = "bfloat16" if bits < 8 else "float32"
    desc = WeightDesc.parse(f"w:uint{bits},s:{gran}:{sdt},zp:{zp}")
    n, k = 9, 160
    g = gen(bits * 10 + len(zp) + len(gran))
    qmax = (1 << bits) - 1
    q = torch.randint(0, qmax + 1, (n, k), generator=g).to(torch.float64)
    for r, c in regions(desc.scale, n, k):  # every group spans the whole code range
        q[r, c], q[r, c + 1] = 0, qmax
    shape = region_shape(desc.scale, n, k)
    z = torch.randint(0, qmax + 1, shape, generator=g).to(torch.float64)
    if zp == "float" and qmax > 1:  # float zero points need not be integers
        z = (z + 0.5).clamp(max=qmax - 0.5)
    s = nice_scales(shape, g)
    w64 = (q - expand(z, desc.scale, n, k)) * expand(s, desc.scale, n, k)
    qw = _check_exact(desc, w64, s)
    assert torch.equal(qw.zero.to(torch.float64), z)
    assert qw.zero.dtype == (torch.uint8 if zp == "int" else torch.bfloat16 if bits < 8 else torch.float32)


@pytest.mark.parametrize("text", ["w:int8", "w:float8_e4m3fn", "w:float4_e2m1", "w:uint4b8", "w:float6_e3m2"])
def test_unscaled_on_grid_is_exact(text):
    desc = WeightDesc.parse(text)
    t = desc.dtype.decode_table()
    fin = t[torch.isfinite(t)]
    w = fin[torch.randint(0, len(fin), (5, 70), generator=gen(3))]
    qw = _check_exact(desc, w)
    assert qw.scale is None


def test_symmetric_scaling_rejects_types_without_positive_values():
    for text in ("w:int1,s:channel:float32", "w:uint1b1,s:g32:float16"):
        with pytest.raises(DescError, match="no positive value"):
            quantize_weight(torch.randn(4, 64), WeightDesc.parse(text), name="layer.x")


# ------------------------------------------------------------------------------------------ weights: random
SCALE_REL = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11, "float32": 2.0 ** -23, "float8_e4m3fn": 2.0 ** -4,
             "ue4m3": 2.0 ** -4}


def random_weight(n, k, seed):
    g = gen(seed)
    w = torch.randn(n, k, generator=g, dtype=torch.float64)
    w[torch.rand(n, k, generator=g) < 0.01] *= 8  # a few outliers
    w[1, :] = 0.0  # an all-zero row / group
    return w.to(torch.float32)


def _check_symmetric_bound(desc: WeightDesc, w: torch.Tensor, dq: torch.Tensor, s_full: torch.Tensor, qmax_limit):
    """|w - dq| <= half a grid step * scale inside the grid; beyond it, dq == +-qmax * scale and the overshoot
    |w|/s - qmax is bounded by ``qmax_limit`` (the scale's rounding, or MX's power-of-two step)."""
    dt = desc.dtype
    qmax = sym_qmax(dt)
    lo, hi = float(dt.min), float(dt.max)  # the representable range (int8: -128 .. 127)
    w64, dq64 = w.to(torch.float64), dq.to(torch.float64)
    y = w64 / s_full
    inside = (y >= lo) & (y <= hi)
    bound = half_gap(dt, y.clamp(lo, hi)) * s_full * (1 + 1e-6) + 1e-30
    err = (w64 - dq64).abs()
    bad = inside & (err > bound)
    assert not bad.any(), f"{desc}: {int(bad.sum())} elements beyond half a step, worst {(err - bound)[bad].max()}"
    out = ~inside
    if out.any():
        edge = torch.where(y[out] > 0, hi, lo) * s_full[out]  # saturated to the largest/smallest value
        assert ((dq64[out] - edge).abs() <= 2.0 ** -22 * edge.abs()).all(), f"{desc}: saturation value"
        assert (y[out].abs() <= qmax_limit).all(), f"{desc}: overshoot {y[out].abs().max().item()} > {qmax_limit}"


@pytest.mark.parametrize("text", SYM_INT_DESCS + FLOAT_DESCS + [str(FP8_CHANNEL), str(FP8_BLOCK)])
def test_symmetric_random_error_bound(text):
    desc = WeightDesc.parse(text)
    n, k = 20, 300
    w = random_weight(n, k, seed=len(text))
    qw = quantize_weight(w, desc)
    dq = dequantize_weight(qw)
    s_full = expand(stored_scale_values(qw), desc.scale, n, k)
    # absmax scaling: the scale is amax/qmax rounded to nearest in the scale dtype
    rel = SCALE_REL[desc.scale.dtype.name]
    _check_symmetric_bound(desc, w, dq, s_full, sym_qmax(desc.dtype) * (1 + rel) / (1 - rel) * (1 + 1e-6))
    # and not trivially: with at least 3 positive levels most elements do not round to zero
    if sym_qmax(desc.dtype) >= 3:
        assert (dq != 0).float().mean() > 0.1


@pytest.mark.parametrize("text", MX_DESCS)
def test_mx_random_error_bound(text):
    desc = WeightDesc.parse(text)
    n, k = 16, 200
    w = random_weight(n, k, seed=len(text) + 1) * 37.0
    qw = quantize_weight(w, desc)
    dq = dequantize_weight(qw)
    s = stored_scale_values(qw)
    assert torch.equal(s, torch.exp2(torch.round(torch.log2(s))))  # powers of two
    # OCP MX: shared exponent floor(log2(amax)) - emax, so amax / scale lies in [2**emax, 2**(emax+1))
    emax = math.floor(math.log2(sym_qmax(desc.dtype)))
    s_full = expand(s, desc.scale, n, k)
    _check_symmetric_bound(desc, w, dq, s_full, 2.0 ** (emax + 1))
    amax = w.abs().to(torch.float64).reshape(n, -1)
    for r in range(n):
        for j in range(s.shape[1]):
            a = w[r, j * 32:(j + 1) * 32].abs().max().item()
            if a > 0:
                assert 2.0 ** emax <= a / s[r, j].item() < 2.0 ** (emax + 1)


@pytest.mark.parametrize("text", [str(NVFP4), "w:float4_e2m1,s:g16:ue4m3,s2:channel:float32"])
def test_two_level_random_error_bound(text):
    desc = WeightDesc.parse(text)
    n, k = 16, 128
    w = random_weight(n, k, seed=5)
    qw = quantize_weight(w, desc)
    dq = dequantize_weight(qw)
    s2 = qw.scale2.to(torch.float64)
    s2_full = expand(s2 if desc.scale2.granularity == "tensor" else s2.reshape(n, 1), desc.scale2, n, k)
    s_full = expand(stored_scale_values(qw), desc.scale, n, k) * s2_full
    # the global scale maps the largest group amax onto 6 * 448
    amax = w.abs().amax() if desc.scale2.granularity == "tensor" else w.abs().amax(1)
    want2 = torch.where(amax > 0, amax / (6 * 448), torch.ones_like(amax))  # an all-zero row keeps scale2 = 1
    torch.testing.assert_close(qw.scale2, want2.reshape(qw.scale2.shape), rtol=1e-6, atol=0)
    _check_symmetric_bound(desc, w, dq, s_full, 6.0 * (1 + 2.0 ** -4) / (1 - 2.0 ** -4) * (1 + 1e-6))


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("zp", ["int", "float"])
def test_zero_point_random_error_bound(bits, zp):
    desc = WeightDesc.parse(f"w:uint{bits},s:g32:bfloat16,zp:{zp}")
    n, k = 12, 200
    w = random_weight(n, k, seed=bits) + 0.7  # asymmetric ranges
    qw = quantize_weight(w, desc)
    dq = dequantize_weight(qw).to(torch.float64)
    qmax = (1 << bits) - 1
    s = expand(stored_scale_values(qw), desc.scale, n, k)
    z = expand(qw.zero.to(torch.float64), desc.scale, n, k)
    y = w.to(torch.float64) / s + z  # the unrounded code
    err = (w.to(torch.float64) - dq).abs()
    inside = (y >= -0.5) & (y <= qmax + 0.5)
    assert (err[inside] <= 0.5 * s[inside] * (1 + 1e-5)).all()
    # outside: clamped to code 0 or qmax; the overshoot comes from rounding the scale (2**-8 relative in bf16)
    # and, for integer zero points, from rounding/clamping z
    out = ~inside
    if out.any():
        q_edge = torch.where(y[out] < 0, 0.0, float(qmax))
        assert torch.equal(dq[out], ((q_edge - z[out]) * s[out]).to(torch.float32).to(torch.float64))
        slack = qmax * 2.0 ** -8 / (1 - 2.0 ** -8) + 0.5 + 1e-6
        assert ((y[out] >= -slack) & (y[out] <= qmax + slack)).all()
    # every group's range [min(w, 0), max(w, 0)] is covered: dq's range brackets w's within one step
    assert (err <= s * (0.5 + qmax * 2.0 ** -7) + 1e-6).all()


def test_quantize_weight_passes_name_bias_and_k_perm():
    w = torch.randn(8, 64)
    bias = torch.randn(8)
    perm = torch.randperm(64, generator=gen(1))
    qw = quantize_weight(w, WeightDesc.parse("w:uint4b8,s:g32:float16"), name="mlp.up", bias=bias, k_perm=perm)
    assert qw.name == "mlp.up" and torch.equal(qw.bias, bias) and torch.equal(qw.k_perm, perm)
    with pytest.raises(DescError, match="2-D"):
        quantize_weight(torch.randn(2, 3, 4), MXFP4)


# ------------------------------------------------------------------------------------------ QuantizedWeight checks
def test_quantized_weight_validation_names_the_layer():
    desc = WeightDesc.parse("w:uint4,s:g32:float16,zp:float")
    n, k = 4, 64
    good = dict(desc=desc, shape=(n, k), qweight=pack_codes(torch.zeros(n, k, dtype=torch.uint8), 4),
                scale=torch.ones(n, 2, dtype=torch.float16), zero=torch.zeros(n, 2, dtype=torch.float16), name="l0")
    QuantizedWeight(**good)
    cases = [
        (dict(qweight=torch.zeros(n, 7, dtype=torch.int32)), "qweight must be int32"),
        (dict(scale=torch.ones(n, 3, dtype=torch.float16)), "scale must have shape"),
        (dict(scale=torch.ones(n, 2, dtype=torch.float32)), "float16 scales are stored as torch.float16"),
        (dict(zero=torch.zeros(n, 2, dtype=torch.uint8)), "float zero points are stored in the scale dtype"),
        (dict(zero=None), "zero points must match"),
        (dict(scale2=torch.ones(1)), "no second-level scale"),
        (dict(k_perm=torch.arange(k).float()), "integer column indices"),
        (dict(k_perm=torch.arange(k + 1)), "k_perm must have shape"),
        (dict(bias=torch.zeros(n + 1)), "bias must have shape"),
    ]
    for change, msg in cases:
        with pytest.raises(DescError, match=msg) as ei:
            QuantizedWeight(**{**good, **change})
        assert "'l0'" in str(ei.value)


# ---------------------------------------------------------------------------------------------------- activations
ACTS = [
    "a:float8_e4m3fn,s:tensor:float32,dynamic", "a:float8_e4m3fn,s:token:float32,dynamic",
    "a:float8_e4m3fn,s:g128:float32,dynamic", "a:float8_e5m2,s:token:float32,dynamic",
    "a:float8_e5m2,s:g64:bfloat16,dynamic", "a:int8,s:tensor:float32,dynamic", "a:int8,s:token:float32,dynamic",
    "a:int8,s:g32:float16,dynamic", "a:int4,s:token:float32,dynamic", "a:int4,s:g32:bfloat16,dynamic",
    "a:float4_e2m1,s:token:float32,dynamic", "a:float4_e2m1,s:g16:bfloat16,dynamic",
]
STATIC_ACTS = ["a:float8_e4m3fn,s:tensor:float32,static", "a:float8_e5m2,s:tensor:float32,static",
               "a:int8,s:tensor:float32,static", "a:int4,s:tensor:float32,static",
               "a:float4_e2m1,s:tensor:float32,static"]
MX_ACT = "a:float4_e2m1,s:g32:float8_e8m0fnu,dynamic"
NVFP4_ACT = "a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32"


def act_spec(desc: ActDesc) -> ScaleSpec:
    return desc.scale


@pytest.mark.parametrize("text", ACTS)
def test_dynamic_activations_on_grid_are_exact(text):
    desc = ActDesc.parse(text)
    m, k = 6, 200
    g = gen(len(text) * 7)
    v = on_grid_values(desc.dtype, m, k, desc.scale, g)
    s = nice_scales(region_shape(desc.scale, m, k), g)
    x = v * expand(s, desc.scale, m, k)
    codes, sc = quantize_activations(x.to(torch.float32), desc)
    assert codes.dtype == torch.uint8 and codes.shape == (m, k)
    assert tuple(sc.shape) == region_shape(desc.scale, m, k)
    assert torch.equal(desc.dtype.decode_table()[codes.to(torch.int64)], v)
    back = dequantize_activations(codes, sc, desc)
    assert back.dtype == torch.float32 and torch.equal(back.to(torch.float64), x)


@pytest.mark.parametrize("text", ACTS)
def test_dynamic_activations_random_error_bound(text):
    desc = ActDesc.parse(text)
    m, k = 8, 200
    x = random_weight(m, k, seed=len(text)) * 3
    codes, sc = quantize_activations(x, desc)
    back = dequantize_activations(codes, sc, desc)
    sv = sc.to(torch.float64) if desc.scale.dtype.bits > 8 else desc.scale.dtype.decode_table()[sc.to(torch.int64)]
    rel = SCALE_REL[desc.scale.dtype.name]
    qmax = sym_qmax(desc.dtype)
    _check_symmetric_bound(WeightDesc(desc.dtype), x, back, expand(sv, desc.scale, m, k),
                           qmax * (1 + rel) / (1 - rel) * (1 + 1e-6))
    # the scale is amax / qmax rounded to the scale dtype
    amax = x.abs().to(torch.float64).amax(1) if desc.scale.granularity == "token" else None
    if amax is not None:
        target = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
        assert ((sv.reshape(-1) - target).abs() <= rel * target).all()


@pytest.mark.parametrize("text", STATIC_ACTS)
def test_static_activations(text):
    desc = ActDesc.parse(text)
    m, k = 5, 96
    s = torch.tensor([0.0625], dtype=torch.float32)
    qmax = sym_qmax(desc.dtype)
    g = gen(len(text))
    v = on_grid_values(desc.dtype, m, k, None, g)
    x = v * 0.0625
    codes, sc = quantize_activations(x.to(torch.float32), desc, s)
    assert torch.equal(dequantize_activations(codes, sc, desc).to(torch.float64), x)  # on grid: exact
    # values beyond the static range saturate at +-qmax * s
    big = torch.tensor([[qmax * 0.0625 * 3, -qmax * 0.0625 * 100, 1e30]], dtype=torch.float32)
    codes, sc = quantize_activations(big, desc, s)
    lo = float(desc.dtype.min)  # int8 saturates at -128, floats at -max
    assert dequantize_activations(codes, sc, desc).tolist() == [[qmax * 0.0625, lo * 0.0625, qmax * 0.0625]]
    xr = random_weight(m, k, seed=2) * 0.2
    codes, sc = quantize_activations(xr, desc, s)
    s_full = torch.full((m, k), 0.0625, dtype=torch.float64)
    _check_symmetric_bound(WeightDesc(desc.dtype), xr, dequantize_activations(codes, sc, desc), s_full, math.inf)
    with pytest.raises(DescError, match="static"):
        quantize_activations(x.to(torch.float32), desc)
    for bad in (torch.tensor([0.0]), torch.tensor([-1.0]), torch.tensor([math.inf]), torch.tensor([1.0, 2.0])):
        with pytest.raises(DescError, match="positive finite"):
            quantize_activations(x.to(torch.float32), desc, bad)


def test_mx_activations():
    desc = ActDesc.parse(MX_ACT)
    m, k = 4, 96
    g = gen(9)
    v = on_grid_values(desc.dtype, m, k, desc.scale, g)
    e = torch.randint(-20, 20, (m, 3), generator=g).to(torch.float64)
    x = v * expand(torch.exp2(e), desc.scale, m, k)
    codes, sc = quantize_activations(x.to(torch.float32), desc)
    assert sc.dtype == torch.uint8 and torch.equal(sc.to(torch.float64), e + 127)
    assert torch.equal(dequantize_activations(codes, sc, desc).to(torch.float64), x)
    xr = random_weight(m, k, seed=4)
    codes, sc = quantize_activations(xr, desc)
    s_full = expand(D.E8M0.decode_table()[sc.to(torch.int64)], desc.scale, m, k)
    _check_symmetric_bound(WeightDesc(desc.dtype), xr, dequantize_activations(codes, sc, desc), s_full, 8.0)


def test_nvfp4_activations_with_static_global_scale():
    desc = ActDesc.parse(NVFP4_ACT)
    m, k = 4, 64
    g = gen(13)
    v = on_grid_values(desc.dtype, m, k, desc.scale, g)
    sg = nice_scales((m, 4), g, lo=-6, hi=7)
    s2 = torch.tensor([2.0 ** -7], dtype=torch.float32)
    x = v * expand(sg, desc.scale, m, k) * 2.0 ** -7
    codes, sc = quantize_activations(x.to(torch.float32), desc, s2)
    assert sc.dtype == torch.uint8 and torch.equal(D.E4M3.decode_table()[sc.to(torch.int64)], sg)
    assert torch.equal(dequantize_activations(codes, sc, desc, s2).to(torch.float64), x)
    # random input with a calibrated global scale amax / (6 * 448)
    xr = random_weight(m, k, seed=8) * 1e-3
    s2r = (xr.abs().amax() / (6 * 448)).reshape(1)
    codes, sc = quantize_activations(xr, desc, s2r)
    back = dequantize_activations(codes, sc, desc, s2r)
    s_full = expand(D.E4M3.decode_table()[sc.to(torch.int64)], desc.scale, m, k) * float(s2r)
    _check_symmetric_bound(WeightDesc(desc.dtype), xr, back, s_full, 6.0 * (1 + 2.0 ** -4) / (1 - 2.0 ** -4) + 1e-6)
    # without the global scale the description cannot be applied
    with pytest.raises(DescError, match="second-level"):
        quantize_activations(xr, desc)
    with pytest.raises(DescError, match="second-level"):
        dequantize_activations(codes, sc, desc)


def test_tiny_groups_do_not_produce_nan():
    # a group whose amax/qmax underflows the scale dtype must still quantize (to ~0), not divide by zero
    desc = ActDesc.parse("a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32")
    x = torch.zeros(2, 32)
    x[0, 0] = 1e-9
    x[1, 16] = 3.0
    codes, sc = quantize_activations(x, desc, torch.tensor([3.0 / 2688]))
    back = dequantize_activations(codes, sc, desc, torch.tensor([3.0 / 2688]))
    assert torch.isfinite(back).all() and abs(back[1, 16].item() - 3.0) < 1e-6 and abs(back[0, 0].item()) < 1e-6
    w = torch.zeros(2, 32)
    w[0, 0] = 1e-30
    qw = quantize_weight(w, WeightDesc.parse("w:float4_e2m1,s:g16:float8_e4m3fn"))
    assert torch.isfinite(dequantize_weight(qw)).all()


def test_unquantized_activations_pass_through():
    x = torch.randn(3, 8, dtype=torch.bfloat16)
    out, s = quantize_activations(x, ActDesc())
    assert s is None and out is x
    assert dequantize_activations(x, None, ActDesc()).dtype == torch.float32


# ---------------------------------------------------------------------------------------------------- reference_gemm
def _exact_weight(desc: WeightDesc, n: int, k: int, seed: int):
    g = gen(seed)
    v = on_grid_values(desc.dtype, n, k, desc.scale, g)
    s = nice_scales(region_shape(desc.scale, n, k), g)
    w64 = v * expand(s, desc.scale, n, k)
    return w64


@pytest.mark.parametrize("text", ["w:uint4b8,s:g32:bfloat16", str(FP8_CHANNEL), "w:float4_e2m1,s:g32:float16"])
@pytest.mark.parametrize("use_perm", [False, True])
@pytest.mark.parametrize("use_bias", [False, True])
def test_reference_gemm_vs_float64(text, use_perm, use_bias):
    desc = WeightDesc.parse(text)
    n, k, m = 24, 96, 5
    w64 = _exact_weight(desc, n, k, seed=n + k)
    g = gen(17)
    perm = torch.randperm(k, generator=g) if use_perm else None
    bias = torch.randn(n, generator=g) if use_bias else None
    qw = quantize_weight(w64.to(torch.float32), desc, bias=bias, k_perm=perm)
    x = torch.randn(2, m, k, generator=g)
    y = reference_gemm(x, qw)
    assert y.shape == (2, m, n) and y.dtype == torch.float32
    x64 = x.reshape(-1, k).to(torch.float64)
    if perm is not None:
        x64 = x64[:, perm]  # storage column j holds original input channel perm[j]
    want = x64 @ w64.T
    if bias is not None:
        want = want + bias.to(torch.float64)
    tol = 1e-5 * (x64.abs() @ w64.abs().T) + 1e-6
    assert ((y.reshape(-1, n).to(torch.float64) - want).abs() <= tol).all()
    if use_perm:  # the permutation matters: ignoring it gives a different result
        assert not torch.allclose(y.reshape(-1, n).to(torch.float64), x.reshape(-1, k).to(torch.float64) @ w64.T
                                  + (0 if bias is None else bias.to(torch.float64)), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("act_text", [ACTS[1], ACTS[6], MX_ACT, NVFP4_ACT, STATIC_ACTS[0]])
def test_reference_gemm_with_activation_quantization(act_text):
    act = ActDesc.parse(act_text)
    desc = WeightDesc.parse("w:int8,s:channel:float32")
    n, k, m = 8, 64, 4
    w64 = _exact_weight(desc, n, k, seed=3)
    g = gen(23)
    perm = torch.randperm(k, generator=g)
    bias = torch.randn(n, generator=g)
    qw = quantize_weight(w64.to(torch.float32), desc, bias=bias, k_perm=perm)
    # activations on the activation grid in storage order (after k_perm), so quantization is lossless
    static = None
    if act.dynamic:
        v = on_grid_values(act.dtype, m, k, act.scale, g)
        s = nice_scales(region_shape(act.scale, m, k), g)
        if act.scale.dtype == D.E8M0:
            s = torch.exp2(torch.randint(-4, 4, s.shape, generator=g).to(torch.float64))
        x_store = v * expand(s, act.scale, m, k)
        if act.scale2 is not None:
            static = torch.tensor([0.25])
            x_store = x_store * 0.25
    else:
        static = torch.tensor([0.5])
        x_store = on_grid_values(act.dtype, m, k, None, g) * 0.5
    x = torch.empty_like(x_store)
    x[:, perm] = x_store  # x[:, perm] == x_store
    y = reference_gemm(x.to(torch.float32), qw, act, static_act_scale=static)
    want = x_store @ w64.T + bias.to(torch.float64)
    tol = 1e-5 * (x_store.abs() @ w64.abs().T) + 1e-6
    assert ((y.to(torch.float64) - want).abs() <= tol).all()
    # off the grid the activation quantization error shows up
    xr = torch.randn(m, k, generator=g) * 0.37
    yq = reference_gemm(xr, qw, act, static_act_scale=static).to(torch.float64)
    yf = reference_gemm(xr, qw).to(torch.float64)
    assert not torch.equal(yq, yf)


def test_reference_gemm_checks_k():
    qw = quantize_weight(torch.randn(4, 64), FP8_CHANNEL, name="o_proj")
    with pytest.raises(DescError, match="o_proj.*K=32"):
        reference_gemm(torch.randn(2, 32), qw)
