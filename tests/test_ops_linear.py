"""The torch-facing linear op on CPU: fallback numerics, the custom op under torch.compile, bad input."""

import pytest
import torch

from vllm_humming.desc import ActDesc, DescError, WeightDesc
from vllm_humming.ops import humming_linear, prepare_linear
from vllm_humming.reference import quantize_weight, reference_gemm


def test_fallback_matches_reference():
    qw = quantize_weight(torch.randn(48, 256), WeightDesc.parse("w:uint4,s:g64:bfloat16,zp:int"),
                         bias=torch.randn(48), k_perm=torch.randperm(256))
    pl = prepare_linear(qw, out_dtype=torch.float32)
    assert pl.backend == "torch" and "cpu" in pl.fallback_reason
    x = torch.randn(5, 256)
    torch.testing.assert_close(humming_linear(x, pl), reference_gemm(x, qw), rtol=1e-5, atol=1e-4)


def test_static_activation_scale_nvfp4():
    qw = quantize_weight(torch.randn(32, 128), WeightDesc.parse("nvfp4"))
    act = ActDesc.parse("a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32")
    s2 = torch.tensor([0.01])
    pl = prepare_linear(qw, act, out_dtype=torch.float32, static_act_scale=s2)
    x = torch.randn(3, 128)
    torch.testing.assert_close(humming_linear(x, pl), reference_gemm(x, qw, act, s2), rtol=1e-5, atol=1e-4)


def test_custom_op_traces_under_torch_compile():
    qw = quantize_weight(torch.randn(16, 128), WeightDesc.parse("w:uint4b8,s:g32:bfloat16"))
    pl = prepare_linear(qw, out_dtype=torch.float32)
    f = torch.compile(lambda x: humming_linear(x, pl) * 2, fullgraph=True, backend="aot_eager")
    x = torch.randn(4, 128)
    torch.testing.assert_close(f(x), reference_gemm(x, qw) * 2, rtol=1e-5, atol=1e-4)
    assert hasattr(torch.ops.humming, "linear")


def test_wrong_k_is_a_clear_error():
    qw = quantize_weight(torch.randn(16, 128), WeightDesc.parse("w:uint4b8,s:g32:bfloat16"), name="proj")
    pl = prepare_linear(qw)
    with pytest.raises(DescError, match="proj.*K=64.*K=128"):
        humming_linear(torch.randn(2, 64), pl)


def test_bad_out_dtype():
    qw = quantize_weight(torch.randn(16, 128), WeightDesc.parse("w:uint4b8,s:g32:bfloat16"))
    with pytest.raises(DescError, match="out_dtype"):
        prepare_linear(qw, out_dtype=torch.int8)


def test_integer_activations_are_a_clear_error():
    qw = quantize_weight(torch.randn(16, 128), WeightDesc.parse("w:uint4b8,s:g32:bfloat16"), name="proj")
    pl = prepare_linear(qw)
    with pytest.raises(DescError, match="proj.*floating dtype.*int32"):
        humming_linear(torch.ones(2, 128, dtype=torch.int32), pl)
