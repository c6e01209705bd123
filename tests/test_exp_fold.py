"""The exponent fold (dequant.cuh, GemmLayer._repack): float formats' group scales carry 2^kExpAdjust so the kernels'
operand dequant is one multiply per pair; checked on the CPU (the GPU tests run every float format through it)."""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import _fold_exponent, format_params


def _adj(desc, dt):
    d = WeightDesc.parse(desc).dtype
    return (127 if dt == torch.bfloat16 else 15) - ((1 << (d.exp_bits - 1)) - 1)


@pytest.mark.parametrize("dt", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("desc,top,want_k", [
    # MXFP4-like power-of-two scales below 2: S * 2^126 fits bf16, S * 2^14 fits fp16 -> nothing left to the epilogue
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", 1.0, {torch.bfloat16: 0, torch.float16: 0}),
    # NVFP4 e4m3 block scales reach 448 = 2^8.8: 448 * 2^126 overflows bf16 (max < 2^128), 448 * 2^14 fp16 -> k = 7
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", 448.0, {torch.bfloat16: 7, torch.float16: 7}),
    # fp8 block scales (fp32, small): 2^-10 * 2^120 fits bf16, 2^-10 * 2^8 fits fp16
    ("w:float8_e4m3fn,s:b128x128:float32", 2.0 ** -10, {torch.bfloat16: 0, torch.float16: 0}),
])
def test_fold_is_exact_and_finite(desc, top, want_k, dt):
    fp = format_params(WeightDesc.parse(desc))
    adj = _adj(desc, dt)
    g = torch.Generator().manual_seed(0)
    s = torch.rand(6, 32, generator=g) * top
    s[0, 0] = top
    s[1, 1] = 0.0
    folded, k = _fold_exponent(s, fp, dt)
    assert k == want_k[dt]
    f = folded.to(dt)
    assert torch.isfinite(f.float()).all()
    # a power-of-two scaling: folded * 2^(k - adj) is S rounded once to dt's mantissa -- never worse than S.to(dt)
    # (the fold only raises scales, so none becomes subnormal; small fp16 scales even gain their lost bits)
    back = f.double() * 2.0 ** (k - adj)
    half_ulp = 2.0 ** -8 if dt == torch.bfloat16 else 2.0 ** -11
    nz = s != 0
    assert ((back[nz] - s.double()[nz]).abs() <= half_ulp * s.double()[nz].abs()).all()
    assert (back[~nz] == 0).all()
    # with one less the top scale overflows (k is the smallest that fits)
    if k > 0:
        assert not torch.isfinite(torch.tensor(top * 2.0 ** (adj - k + 1)).to(dt))


def test_no_scales_no_fold():
    fp = format_params(WeightDesc.parse("w:float4_e2m1,s:g32:float8_e8m0fnu"))
    folded, k = _fold_exponent(torch.zeros(2, 16), fp, torch.bfloat16)
    assert k == 0 and not folded.any()
