"""GPU: quantized activations (W8A8 / W4A8 / W4A4) -- the act-quant kernel bit for bit against the reference, and
whole layers (act-quant kernel + WnA16 GEMM) against the fp32 reference (pytest -m gpu; skipped without CUDA).

Every case: fresh random inputs, outputs poisoned with NaN before the call."""

import pytest
import torch

from vllm_humming import reference
from vllm_humming.desc import ActDesc, NAMED_FORMATS, WeightDesc
from vllm_humming.ops import prepare_linear
from vllm_humming.ops.act_quant import ActQuantizer, QuantActGemm
from graph_util import capture_cuda_graph
from test_act_quant import ACTS as CPU_ACTS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

# every description of the CPU tests but the e8m0-scaled fp8 one (test_act_quant.ACTS)
ACTS = [a for a in CPU_ACTS if a != "a:float8_e4m3fn,s:g16:float8_e8m0fnu,dynamic"]
MS = [1, 17, 64, 257, 1024, 4096]


def _scale(act):
    if not act.dynamic:
        return torch.tensor([0.0371])
    return torch.tensor([0.75]) if act.scale2 is not None else None


def _x(m, k, dtype, gen_seed):
    g = torch.Generator(device="cuda").manual_seed(gen_seed)
    x = torch.randn(m, k, device="cuda", generator=g)
    x = x * torch.exp2(torch.randint(-6, 7, (m, 1), device="cuda", generator=g).float())
    x[torch.rand(m, k, device="cuda", generator=g) < 0.01] *= 40
    return x.to(dtype)


@pytest.mark.parametrize("tin,tout", [(torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16),
                                      (torch.float32, torch.bfloat16)])
@pytest.mark.parametrize("act_s", ACTS)
def test_quantizer_is_bitwise_the_reference(act_s, tin, tout):
    act = ActDesc.parse(act_s)
    st = _scale(act)
    q = ActQuantizer(act, tout, "cuda", static_scale=st, name="t")
    for i, m in enumerate(MS):
        for k in (4096, 1000, 200, 4104):
            x = _x(m, k, tin, 1000 * i + k)
            out = torch.full((m, k), float("nan"), device="cuda", dtype=tout)
            got = q(x, out=out).cpu()
            # the reference on the CPU: torch's CUDA division by a Python scalar multiplies by its reciprocal (one
            # ulp off IEEE division now and then, which moves a scale); the CPU divides
            codes, s = reference.quantize_activations(x.float().cpu(), act, st)
            want = reference.dequantize_activations(codes, s, act, st).to(tout)
            assert not torch.isnan(got).any(), f"{act} M={m} K={k}: unwritten outputs"
            bad = (got.float() != want.float()).sum().item()
            assert bad == 0, f"{act} {tin}->{tout} M={m} K={k}: {bad} of {m * k} values differ"
    # a strided view (rows not contiguous) takes the element-by-element kernel
    x = _x(17, 1032, tin, 5)[:, :1000]
    got = q(x).cpu()
    codes, s = reference.quantize_activations(x.float().cpu(), act, st)
    assert torch.equal(got, reference.dequantize_activations(codes, s, act, st).to(tout))


LAYERS = [
    ("w8a8-fp8", None),                                                    # FP8 channel weights, fp8 per-token acts
    ("w8a8-int8", None),                                                   # int8 channel weights, int8 per-token
    ("nvfp4", None),                                                       # W4A4 NVFP4
    ("w:uint4b8,s:g128:bfloat16", "a:int8,s:token:float32,dynamic"),       # W4A8 int
    ("w:uint4b8,s:g128:bfloat16", "a:float8_e4m3fn,s:token:float32,dynamic"),   # W4A8 fp8
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", "a:float4_e2m1,s:g32:float8_e8m0fnu,dynamic"),   # MXFP4 W4A4
    ("w:int8,s:channel:float32", "a:int8,s:tensor:float32,static"),        # static per-tensor int8
    ("w:float8_e4m3fn,s:b128x128:float32", "a:float8_e4m3fn,s:g128:float32,dynamic"),  # DeepSeek-style fp8 blocks
]


def _layer(wname, aname, n, k, dtype, bias=False):
    if aname is None:
        wdesc, act = NAMED_FORMATS[wname]
    else:
        wdesc, act = WeightDesc.parse(wname), ActDesc.parse(aname)
    w = torch.randn(n, k, device="cuda") * 0.05
    b = torch.randn(n, device="cuda") if bias else None
    qw = reference.quantize_weight(w, wdesc, name=f"{wname}|{aname}", bias=b)
    st = _scale(act)
    if act.scale2 is not None:
        st = torch.tensor([float(1.0 / 448 / 6 * 3)])
    pl = prepare_linear(qw, act, out_dtype=dtype, static_act_scale=st)
    assert pl.backend == "kernel", pl.fallback_reason
    assert isinstance(pl.kernel, QuantActGemm)
    return qw, act, pl


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("wname,aname", LAYERS)
def test_layers_match_the_fp32_reference(wname, aname, dtype):
    for n, k in ((256, 512), (4096, 4096), (1000, 1088)):
        qw, act, pl = _layer(wname, aname, n, k, dtype, bias=(n == 1000))
        for m in MS:
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            y = pl.kernel(x, out=out)
            torch.cuda.synchronize()
            assert not torch.isnan(y).any(), f"{wname} {aname} N={n} K={k} M={m}: unwritten or NaN outputs"
            ref = reference.reference_gemm(x.float(), qw, act, pl.static_act_scale)
            rel = ((y.float() - ref).norm() / ref.norm().clamp(min=1e-6)).item()
            assert rel < 1.5e-2, f"{wname} {aname} N={n} K={k} M={m} {dtype}: rel err {rel:.3e}"
            # the layer is exactly the GEMM on the quantizer's values (which the test above pins to the reference)
            xq = pl.kernel.quantizer(x)
            assert torch.equal(y, pl.kernel.gemm(xq)), f"{wname} {aname} M={m}: layer != GEMM(act quant)"


def test_graph_capture_replays_new_inputs():
    qw, act, pl = _layer("w8a8-fp8", None, 2048, 1024, torch.bfloat16)
    pl.kernel.warmup()
    x = torch.randn(9, 1024, device="cuda", dtype=torch.bfloat16)
    g, yg = capture_cuda_graph(lambda: pl.kernel(x))
    for _ in range(3):
        x.copy_(torch.randn_like(x) * 3)
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(yg, pl.kernel(x))


def test_dynamic_tensor_scale_sees_every_row():
    """Dynamic per-tensor: the absmax partials cover all rows (one outlier in the last row moves every value)."""
    act = ActDesc.parse("a:float8_e4m3fn,s:tensor:float32,dynamic")
    q = ActQuantizer(act, torch.bfloat16, "cuda")
    for m in (1, 300, 5000):
        x = torch.randn(m, 512, device="cuda", dtype=torch.bfloat16)
        x[-1, -1] = 1000.0
        codes, s = reference.quantize_activations(x.float().cpu(), act)
        assert torch.equal(q(x).cpu(), reference.dequantize_activations(codes, s, act).to(torch.bfloat16))


def test_bad_inputs_are_named():
    act = ActDesc.parse("a:int8,s:token:float32,dynamic")
    q = ActQuantizer(act, torch.bfloat16, "cuda", name="layer7")
    with pytest.raises(Exception, match="layer7"):
        q(torch.zeros(2, 64, dtype=torch.int32, device="cuda"))
    with pytest.raises(Exception, match="layer7"):
        q(torch.zeros(2, 64, device="cpu"))
    with pytest.raises(Exception, match="static activation scale is missing"):
        ActQuantizer(ActDesc.parse("a:int8,s:tensor:float32,static"), torch.bfloat16, "cuda", name="l")
    with pytest.raises(Exception, match="positive finite"):
        ActQuantizer(ActDesc.parse("a:int8,s:tensor:float32,static"), torch.bfloat16, "cuda",
                     static_scale=torch.tensor([0.0]), name="l")
