"""Row-parallel K sharding of canonical weights (pure torch, runs in the core stage)."""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.linear.shard import apply_gather, slice_k
from vllm_humming.reference import quantize_weight, reference_gemm


DESCS = ["w:uint4b8,s:g32:bfloat16", "w:uint4,s:g32:float16,zp:int", "w:int8,s:channel:float32",
         "w:float8_e4m3fn,s:b32x32:float32", "w:uint3b4,s:g16:bfloat16", "mxfp4"]


@pytest.mark.parametrize("desc", DESCS)
@pytest.mark.parametrize("act_order", [False, True])
@pytest.mark.parametrize("bounds", [(96, 192), (40, 150)])
def test_slice_k_matches_reference(desc, act_order, bounds):
    g = torch.Generator().manual_seed(0)
    n, k = 48, 192
    w = torch.randn(n, k, generator=g)
    d = WeightDesc.parse(desc)
    perm = torch.randperm(k, generator=g) if act_order else None
    # act-order: storage column j holds input channel perm[j]
    qw = quantize_weight(w[:, perm] if perm is not None else w, d, name="t", k_perm=perm)
    x = torch.randn(5, k, generator=g)
    start, stop = bounds
    full = reference_gemm(x * _mask(k, start, stop), qw)          # contribution of the shard's channels only
    sw = slice_k(qw, start, stop)
    xs = apply_gather(x[:, start:stop], sw.gather)
    got = reference_gemm(xs, sw.qw)
    torch.testing.assert_close(got, full, rtol=1e-5, atol=1e-4)
    if sw.gather is None and not act_order and d.scale.granularity != "channel":
        assert sw.qw.shape[1] == stop - start


def _mask(k, start, stop):
    m = torch.zeros(k)
    m[start:stop] = 1
    return m

