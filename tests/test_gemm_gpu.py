"""GPU correctness of the WnA16 GEMM kernels against the fp32 reference (pytest -m gpu; skipped without CUDA).

Every case: fresh random weights quantized with the reference quantizer, fresh random activations, the output buffer
poisoned with NaN before the call (every element must be written), compared with reference_gemm in fp32.
"""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops import prepare_linear
from vllm_humming.reference import quantize_weight, reference_gemm

from graph_util import capture_cuda_graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

FORMATS = [
    "w:uint4b8,s:g128:bfloat16",            # GPTQ int4 symmetric
    "w:int4,s:g128:bfloat16",               # signed int4 (two's complement codes)
    "w:uint4,s:g128:bfloat16,zp:int",       # AWQ-style asymmetric
    "w:uint4,s:g64:float16,zp:float",       # float zero points
    "w:uint3,s:g128:bfloat16,zp:int",
    "w:uint3b4,s:g128:bfloat16",            # INT3
    "w:uint2b2,s:g64:bfloat16",             # INT2
    "w:uint1,s:g32:bfloat16,zp:int",        # INT1 with zero points
    "w:uint5b16,s:g128:bfloat16",
    "w:uint6b32,s:g16:bfloat16",
    "w:uint7b64,s:g256:bfloat16",
    "w:uint8b128,s:channel:bfloat16",       # INT8 per channel (epilogue scale)
    "w:int8,s:g128:bfloat16",
    "w:uint8,s:channel:bfloat16,zp:int",    # 8-bit asymmetric (fp32 route in bf16)
    "w:float8_e4m3fn,s:channel:float32",
    "w:float8_e4m3fn,s:b128x128:float32",   # FP8 block
    "w:float8_e5m2,s:channel:bfloat16",
    "w:float4_e2m1,s:g32:float8_e8m0fnu",   # MXFP4
    "w:int4,s:g32:float8_e8m0fnu",          # MXINT4
    "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32",  # NVFP4
    "w:float6_e3m2,s:g32:bfloat16",
    "w:float6_e2m3,s:g32:bfloat16",
    "w:float5_e3m1,s:g64:bfloat16",
    "w:float4_e1m2,s:g128:bfloat16",
    "w:float7_e4m2,s:channel:bfloat16",
    "w:uint4b8,s:tensor:float32",
]

SHAPES = [(256, 512), (4096, 4096), (1000, 1088), (200, 8200)]
MS = [1, 17, 64, 257, 1024, 4096]


def _check(desc_str, n, k, m, dtype=torch.bfloat16, bias=False, tol=1.2e-2, prefill_m=None, weight_std=0.05,
           want_exp_fold=None):
    desc = WeightDesc.parse(desc_str)
    w = torch.randn(n, k, device="cuda") * weight_std
    b = torch.randn(n, device="cuda") if bias else None
    qw = quantize_weight(w, desc, name=f"test[{desc_str}]", bias=b)
    pl = prepare_linear(qw, out_dtype=dtype)
    assert pl.backend == "kernel", pl.fallback_reason
    if prefill_m is not None:
        pl.kernel.prefill_m = prefill_m
    if want_exp_fold is not None:
        assert want_exp_fold(pl.kernel.exp_fold), f"{desc_str} {dtype}: exponent fold k = {pl.kernel.exp_fold}"
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    y = pl.kernel(x, out=out)
    torch.cuda.synchronize()
    ref = reference_gemm(x.float(), qw)
    assert not torch.isnan(y).any(), "unwritten or NaN outputs"
    rel = ((y.float() - ref).norm() / ref.norm().clamp(min=1e-6)).item()
    assert rel < tol, f"{desc_str} N={n} K={k} M={m} {dtype}: rel err {rel:.3e}"
    return rel


@pytest.mark.parametrize("desc", FORMATS)
def test_formats_small(desc):
    for m in (1, 16, 17, 64, 257):
        _check(desc, 256, 512, m)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("desc", ["w:float4_e2m1,s:g32:float8_e8m0fnu", "w:float4_e1m2,s:g128:bfloat16",
                                  "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32",
                                  "w:float8_e4m3fn,s:b128x128:float32"])
def test_float_group_scales_past_the_exponent_fold(desc, dtype):
    """Weights 200x the usual: the float formats' group scales times 2^kExpAdjust overflow the compute dtype, so the
    layer's exponent fold leaves a 2^k (k > 0) to the epilogue's tensor scale (dequant.cuh) -- through every kernel
    path (decode, wgmma, stream-K, the expand + cuBLAS prefill) against the fp32 reference.  fp8 block scales stay
    small (k = 0)."""
    fold = (lambda k: k == 0) if desc.startswith("w:float8") else (lambda k: k > 0)
    for m in (1, 16, 17, 64, 257):
        _check(desc, 1000, 1088, m, dtype=dtype, weight_std=10.0, want_exp_fold=fold)
    _check(desc, 1000, 1088, 300, dtype=dtype, weight_std=10.0, prefill_m=257, want_exp_fold=fold)


@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("shape", SHAPES)
def test_int4_shapes(shape, m):
    _check("w:uint4b8,s:g128:bfloat16", *shape, m, bias=True)


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:float16", "w:float4_e2m1,s:g32:float8_e8m0fnu",
                                  "w:uint3,s:g64:float16,zp:int", "w:float8_e4m3fn,s:channel:float32",
                                  "w:uint8,s:channel:float16,zp:int"])
def test_fp16(desc):
    for m in (1, 33, 300):
        _check(desc, 512, 1024, m, dtype=torch.float16)


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:float16", "w:uint4,s:g128:float16,zp:int", "w:int4,s:channel:float16"])
def test_fp16_decode_defaults_wide_and_deep(desc):
    """fp16 activations through the heuristics' own M <= 8 choices on a wide and a deep layer (the mma.sync decode
    kernel, whose 4-bit decode is the one-shift raw_row16 route for fp16) and at 9-16 tokens (wgmma); bias on."""
    for n, k in [(28672, 4096), (4096, 14336)]:
        for m in (1, 5, 8, 13):
            _check(desc, n, k, m, dtype=torch.float16, bias=True)


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g128:bfloat16,zp:int", "w:int4,s:channel:bfloat16",
                                  "w:uint4,s:g64:bfloat16,zp:float", "w:uint4b8,s:g256:bfloat16",
                                  "w:uint4b8,s:g32:bfloat16"])
def test_bf16_decode_x16_where_the_plan_takes_it(desc):
    """bf16 activations through the heuristics' own M <= 8 choices on a wide and a deep layer: the plan launches the
    x16 twin of the mma.sync decode choice (bf16 x staged as fp16 per window and token, the one-shift int4 decode:
    heuristics.x16_sibling) at 1-2 tokens on the wide layer and 1-8 on the deep one (heuristics.x16_max_m), the bf16
    decode otherwise; fp16 activations and 8-bit codes never take it.  Against the fp32 reference, NaN-poisoned
    outputs, bias on."""
    from vllm_humming.tuning.heuristics import x16_max_m

    for n, k in [(28672, 4096), (4096, 14336)]:
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name=f"x16[{desc}]",
                             bias=torch.randn(n, device="cuda"))
        pl = prepare_linear(qw)
        assert pl.backend == "kernel", pl.fallback_reason
        for m in (1, 2, 3, 5, 8):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            y = pl.kernel(x, out=out)
            ref = reference_gemm(x.float(), qw)
            assert not torch.isnan(y).any(), "unwritten or NaN outputs"
            rel = ((y.float() - ref).norm() / ref.norm()).item()
            choice = pl.kernel.plan_info[m]["choice"]
            assert rel < 1.2e-2, f"{desc} {n}x{k} M={m} ({choice}): rel err {rel:.3e}"
            if pl.kernel.arch == "sm_90a":
                assert choice.endswith("_x16_direct") == (m <= x16_max_m(k)), f"{desc} {n}x{k} M={m}: {choice}"
                assert x16_max_m(k) == (8 if k > 4096 else 2)
    for desc2, dtype in [(desc.replace("bfloat16", "float16"), torch.float16), ("w:uint8b128,s:channel:bfloat16",
                                                                               torch.bfloat16)]:
        qw = quantize_weight(torch.randn(4096, 14336, device="cuda") * 0.05, WeightDesc.parse(desc2))
        pl = prepare_linear(qw, out_dtype=dtype)
        pl.kernel(torch.randn(1, 14336, device="cuda", dtype=dtype))
        assert "x16" not in pl.kernel.plan_info[1]["choice"], desc2


@pytest.mark.parametrize("desc", FORMATS[::3])
@pytest.mark.parametrize("m", [1024, 4096])
def test_formats_large_m(desc, m):
    _check(desc, 1000, 1088, m)                      # prefill path: expand to bf16 + cuBLAS
    _check(desc, 1000, 1088, m, prefill_m=1 << 30)   # the GEMM kernel itself at large M


@pytest.mark.parametrize("desc", ["w:uint8b128,s:channel:bfloat16", "w:uint4b8,s:g128:bfloat16"])
def test_forced_choice_runs_above_the_prefill_threshold(desc):
    """A kernel choice forced for an M bucket runs at any M, also from the layer's prefill threshold on (the sweep
    times candidates that way); the same layer without it takes expand + cuBLAS there.  NaN-poisoned outputs vs the
    fp32 reference."""
    from vllm_humming.ops.gemm import GemmLayer
    from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

    qw = quantize_weight(torch.randn(1000, 1088, device="cuda") * 0.05, WeightDesc.parse(desc), name="forced_large_m")
    plain = GemmLayer(qw, None, torch.bfloat16)
    plain.prefill_m = 1024
    tile = KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma") if plain.arch == "sm_90a" else KernelChoice(64, 4, 2, 1, 1, 3)
    forced = plain.clone(choices={m_bucket(1024): tile})
    for layer, kernel in ((plain, False), (forced, True)):
        x = torch.randn(1024, 1088, device="cuda", dtype=torch.bfloat16)
        out = torch.full((1024, 1000), float("nan"), device="cuda", dtype=torch.bfloat16)
        y = layer(x, out=out)
        ref = reference_gemm(x.float(), qw)
        assert not torch.isnan(y).any()
        assert ((y.float() - ref).norm() / ref.norm()).item() < 1.2e-2
        assert layer.uses_prefill_path(1024) != kernel
        assert (layer.plan_info.get(1024, {}).get("choice") == tile.short()) == kernel, layer.plan_info


def test_act_order_k_perm():
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    k = 1024
    perm = torch.randperm(k, device="cuda")
    w = torch.randn(512, k, device="cuda") * 0.05
    qw = quantize_weight(w, desc, k_perm=perm)
    pl = prepare_linear(qw)
    for m in (1, 70):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = pl.kernel(x)
        ref = reference_gemm(x.float(), qw)
        assert ((y.float() - ref).norm() / ref.norm()).item() < 1e-2


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g128:bfloat16,zp:int", "w:uint8b128,s:channel:bfloat16"])
def test_misaligned_activations(desc):
    """x as a contiguous view at an odd storage offset (not 16-byte aligned): every kernel reads x in 16-byte pieces,
    so the layer copies it first -- the right result, not a misaligned-address fault."""
    qwd = WeightDesc.parse(desc)
    n, k = 1000, 1088
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, qwd)
    pl = prepare_linear(qw)
    for m in (1, 5, 17, 64, 257):
        flat = torch.randn(m * k + 1, device="cuda", dtype=torch.bfloat16)
        x = flat[1:].view(m, k)
        assert x.is_contiguous() and x.data_ptr() % 16 != 0
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        y = pl.kernel(x, out=out)
        torch.cuda.synchronize()
        ref = reference_gemm(x.float(), qw)
        assert not torch.isnan(y).any()
        rel = ((y.float() - ref).norm() / ref.norm()).item()
        assert rel < 1.2e-2, f"{desc} M={m}: rel err {rel:.3e}"


def test_cuda_graph_and_repeat():
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(6144, 4096, device="cuda") * 0.05, desc)
    pl = prepare_linear(qw)
    x = torch.randn(3, 4096, device="cuda", dtype=torch.bfloat16)
    y0 = pl.kernel(x)
    g, yg = capture_cuda_graph(lambda: pl.kernel(x))
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    assert torch.equal(yg, y0), "graph replay differs from eager (split-K must be deterministic)"


@pytest.fixture(scope="module", autouse=True)
def _precompile():
    """Compile every kernel this module launches in one parallel batch (first use would compile them one by one)."""
    from vllm_humming.jit import compile_many, current_arch
    from vllm_humming.ops.gemm import layer_kernel_specs

    arch = current_arch()
    specs = []
    for d in FORMATS:
        specs += layer_kernel_specs(d, 4096, 4096, arch)
    for d in ["w:uint4b8,s:g128:float16", "w:float4_e2m1,s:g32:float8_e8m0fnu", "w:uint3,s:g64:float16,zp:int",
              "w:float8_e4m3fn,s:channel:float32", "w:uint8,s:channel:float16,zp:int"]:
        specs += layer_kernel_specs(d, 4096, 4096, arch, dtype=torch.float16)
    for d in FORMATS[::3]:   # the GEMM kernel at large M (prefill path disabled)
        specs += layer_kernel_specs(d, 4096, 4096, arch, prefill_m=1 << 30)
    compile_many(specs)
    yield
