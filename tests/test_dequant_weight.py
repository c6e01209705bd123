"""Weight expansion kernel (kernels/include/humming/dequant_weight.cuh, vllm_humming/ops/dequant_weight.py): the
repacked GEMM weight -> a row-major [N, K] bf16/fp16 matrix for cuBLAS prefill.

CPU tests (always run): every instantiation compiles with NVRTC for sm_80 / sm_89 / sm_90a (fresh cache), the PTX
writes with 16-byte global stores and spills nothing, the generated source / byte accounting / argument checks.
GPU tests (pytest -m gpu; skipped without CUDA): expanded weights against the fp32 reference dequantization for many
formats and odd shapes, output poisoned with NaN first so every element must be written; strided / misaligned
outputs; F.linear on the expanded weight against the GEMM kernel.
"""

from __future__ import annotations

import dataclasses
import re
from types import SimpleNamespace

import pytest
import torch

from vllm_humming.desc import DescError, WeightDesc
from vllm_humming.ops.dequant_weight import (WARPS, WeightExpander, dequant_source, dequant_spec, expand_bytes,
                                             expand_weight)
from vllm_humming.ops.gemm import format_params
from vllm_humming.ops.repack import plane_split

# (description, compute dtype): the formats named in the brief
BRIEF_FORMATS = [
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16),                             # int4 g128 symmetric (GPTQ)
    ("w:uint4,s:g128:bfloat16,zp:int", torch.bfloat16),                        # uint4 + integer zero (AWQ)
    ("w:uint4,s:g64:float16,zp:float", torch.float16),                         # uint4 + float zero, fp16
    ("w:uint3b4,s:g128:bfloat16", torch.bfloat16),                             # int3 (two bit planes)
    ("w:uint8b128,s:channel:bfloat16", torch.bfloat16),                        # int8 channel (fp32 route, epilogue)
    ("w:float8_e4m3fn,s:b128x128:float32", torch.bfloat16),                    # fp8 block 128x128
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", torch.bfloat16),                    # MXFP4
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", torch.bfloat16),   # NVFP4 (g16 + tensor epilogue)
    ("w:float6_e3m2,s:g32:bfloat16", torch.bfloat16),
]
# more families / plane splits / zero modes / epilogues (compiled for sm_90a here, checked numerically on GPU)
MORE_FORMATS = [
    ("w:int4,s:g128:bfloat16", torch.bfloat16),
    ("w:uint3,s:g128:bfloat16,zp:int", torch.bfloat16),
    ("w:uint2b2,s:g64:bfloat16", torch.bfloat16),
    ("w:uint1,s:g32:bfloat16,zp:int", torch.bfloat16),
    ("w:uint5b16,s:g128:bfloat16", torch.bfloat16),
    ("w:uint6b32,s:g16:bfloat16", torch.bfloat16),
    ("w:uint7b64,s:g256:bfloat16", torch.bfloat16),
    ("w:int8,s:g128:bfloat16", torch.bfloat16),
    ("w:uint8,s:channel:bfloat16,zp:int", torch.bfloat16),                     # channel zero on the group path
    ("w:float8_e4m3fn,s:channel:float32", torch.bfloat16),
    ("w:float8_e5m2,s:channel:bfloat16", torch.bfloat16),
    ("w:int4,s:g32:float8_e8m0fnu", torch.bfloat16),                           # MXINT4
    ("w:float6_e2m3,s:g32:bfloat16", torch.bfloat16),
    ("w:float5_e3m1,s:g64:bfloat16", torch.bfloat16),
    ("w:float4_e1m2,s:g128:bfloat16", torch.bfloat16),
    ("w:float7_e4m2,s:channel:bfloat16", torch.bfloat16),
    ("w:uint4b8,s:tensor:float32", torch.bfloat16),
    ("w:uint4b8,s:g128:float16", torch.float16),
    ("w:uint3,s:g64:float16,zp:int", torch.float16),
    ("w:uint8,s:channel:float16,zp:int", torch.float16),
    ("w:float8_e4m3fn,s:channel:float32", torch.float16),
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", torch.float16),
]
ARCHS = ("sm_80", "sm_89", "sm_90a")
# the MORE_FORMATS whose code paths the brief formats do not cover (compiled on CPU too; keeps the suite fast)
_MORE_PATHS = [
    ("w:uint1,s:g32:bfloat16,zp:int", torch.bfloat16),        # 1-bit plane
    ("w:uint5b16,s:g128:bfloat16", torch.bfloat16),           # planes 4 + 1
    ("w:uint6b32,s:g16:bfloat16", torch.bfloat16),            # planes 4 + 2, a group per k16 step
    ("w:uint7b64,s:g256:bfloat16", torch.bfloat16),           # planes 4 + 2 + 1
    ("w:uint8,s:channel:bfloat16,zp:int", torch.bfloat16),    # 8-bit codes (fp32 route) with integer zeros
    ("w:uint3,s:g64:float16,zp:int", torch.float16),          # fp16 magic with integer zeros
    ("w:float8_e4m3fn,s:channel:float32", torch.float16),     # fp8 in fp16
]


def _fp(desc: str):
    return format_params(WeightDesc.parse(desc))


# ---------------------------------------------------------------------------------------------------- CPU
@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A private JIT cache: every compile in the test really runs NVRTC."""
    from vllm_humming.jit import clear_memory_cache

    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "jitcache"))
    monkeypatch.delenv("HUMMING_JIT_STRICT", raising=False)
    clear_memory_cache()
    yield
    clear_memory_cache()


def test_compiles_for_every_target(fresh_cache):
    from vllm_humming.jit import compile_many

    assert all(p in MORE_FORMATS for p in _MORE_PATHS)
    specs = [dequant_spec(_fp(d), dt, a, d) for a in ARCHS for d, dt in BRIEF_FORMATS]
    specs += [dequant_spec(_fp(d), dt, "sm_90a", d) for d, dt in MORE_FORMATS if (d, dt) in _MORE_PATHS]
    arts = compile_many(specs)
    assert len(arts) == len(specs)
    for spec, art in zip(specs, arts):
        assert art.cubin[:4] == b"\x7fELF", spec.config
        assert art.spec.arch == spec.arch and not art.cached


@pytest.mark.parametrize("desc,dtype", [BRIEF_FORMATS[0], BRIEF_FORMATS[2], BRIEF_FORMATS[4], BRIEF_FORMATS[7],
                                        MORE_FORMATS[6]])
def test_ptx_stores_16_bytes_and_never_spills(desc, dtype, fresh_cache):
    from vllm_humming.jit import compile_kernel

    spec = dataclasses.replace(dequant_spec(_fp(desc), dtype, "sm_90a"), output="ptx")
    ptx = compile_kernel(spec).cubin.decode(errors="replace")
    assert "st.global.v4.u32" in ptx, "the row writes must be 16-byte stores"
    assert "ld.shared.v4.u32" in ptx
    assert not re.search(r"\.local|ld\.local|st\.local", ptx), "the kernel must not use local memory"
    # the packed weight is read once: the lane's 16-byte loads of its first plane's words (layout.cuh) are the
    # only 16-byte global loads
    first_plane = plane_split(_fp(desc).bits)[0][0]
    assert len(re.findall(r"ld\.global(?:\.nc)?\.v4\.[ub]32", ptx)) == first_plane // 4


def test_source_names_and_checks():
    n1, s1 = dequant_source(_fp("w:uint4b8,s:g128:bfloat16"), torch.bfloat16)
    n1b, s1b = dequant_source(_fp("w:uint4b8,s:g128:bfloat16"), torch.bfloat16)
    n2, _ = dequant_source(_fp("w:uint4b8,s:g128:bfloat16"), torch.float16)
    n3, _ = dequant_source(_fp("w:uint4b8,s:g64:bfloat16"), torch.bfloat16)
    n4, _ = dequant_source(_fp("w:uint4b8,s:g128:bfloat16"), torch.bfloat16, warps=8)
    assert (n1, s1) == (n1b, s1b) and len({n1, n2, n3, n4}) == 4
    assert f"extern \"C\" __global__ void __launch_bounds__({32 * WARPS}) {n1}(" in s1
    assert "humming::dequant_weight<__nv_bfloat16, humming::IntFamily<__nv_bfloat16, 4>, 128, 0, 8, 4>" in s1
    assert "int K64, int row_begin, int row_end)" in s1, "the kernel takes the band of weight rows to expand"
    with pytest.raises(DescError, match="bfloat16 or float16"):
        dequant_source(_fp("w:uint4b8,s:g128:bfloat16"), torch.float32)
    with pytest.raises(DescError, match="multiple of 16"):
        dequant_source(dataclasses.replace(_fp("w:uint4b8,s:g128:bfloat16"), group=40), torch.bfloat16)
    with pytest.raises(DescError, match="zero_mode"):
        dequant_source(dataclasses.replace(_fp("w:uint4b8,s:channel:bfloat16"), zero_mode=1), torch.bfloat16)
    with pytest.raises(TypeError, match="FormatParams"):
        dequant_source("w:uint4b8,s:g128:bfloat16", torch.bfloat16)


def test_expand_bytes():
    rd, wr = expand_bytes(_fp("w:uint4b8,s:g128:bfloat16"), 4096, 4096)
    assert wr == 4096 * 4096 * 2 and rd == 4096 * 4096 // 2 + 32 * 4096 * 2
    rd, wr = expand_bytes(_fp("w:uint4,s:g128:bfloat16,zp:int"), 1000, 1088)      # padded to 1008 x 1088
    assert wr == 1000 * 1088 * 2 and rd == 1008 * 1088 // 2 + 9 * 1008 * 2 * 2
    rd, _ = expand_bytes(_fp("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32"), 16, 64)
    assert rd == 16 * 64 // 2 + 4 * 16 * 2 + 4
    rd, _ = expand_bytes(_fp("w:uint8b128,s:channel:bfloat16"), 16, 64)
    assert rd == 16 * 64 + 16 * 4


def _fake_layer(**kw):
    fp = _fp("w:uint4b8,s:g128:bfloat16")
    base = dict(w=torch.zeros(2, 1, 128, dtype=torch.int32), gscale=torch.zeros(1, 16, dtype=torch.bfloat16),
                gzero=None, chscale=None, tscale=None, n=16, k=128, n16=16, k64=128, fp=fp, dtype=torch.bfloat16,
                device=torch.device("cpu"), arch="sm_90a", name="fake.proj", desc="w:uint4b8,s:g128:bfloat16")
    base.update(kw)
    return SimpleNamespace(**base)


def test_expander_rejects_bad_layers_before_touching_a_gpu():
    with pytest.raises(DescError, match=r"'fake\.proj'.*runs on CUDA"):
        WeightExpander(_fake_layer())
    with pytest.raises(DescError, match="bfloat16 or float16"):
        WeightExpander(_fake_layer(dtype=torch.float32))
    with pytest.raises(DescError, match="FormatParams"):
        WeightExpander(_fake_layer(fp="int4"))
    with pytest.raises(DescError, match="padded sizes"):
        WeightExpander(_fake_layer(device=torch.device("cuda"), k64=64))
    with pytest.raises(DescError, match="empty weight"):
        WeightExpander(_fake_layer(device=torch.device("cuda"), n=0, n16=0))
    broken = _fake_layer()
    del broken.w
    with pytest.raises(DescError, match="no attribute 'w'"):
        WeightExpander(broken)
    with pytest.raises(DescError, match=r"w \(packed weight\) is on cpu"):
        WeightExpander(_fake_layer(device=torch.device("cuda")))


# ---------------------------------------------------------------------------------------------------- GPU
SHAPES = [(256, 512), (1000, 1088), (200, 8200)]


@pytest.fixture(scope="module")
def precompiled():
    from vllm_humming.jit import compile_many, current_arch

    arch = current_arch()
    compile_many([dequant_spec(_fp(d), dt, arch, d) for d, dt in BRIEF_FORMATS + MORE_FORMATS])


def _layer(desc: str, dtype, n: int, k: int, seed: int = 0):
    from vllm_humming.ops.gemm import GemmLayer
    from vllm_humming.reference import quantize_weight

    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(n, k, device="cuda", generator=g) * 0.05
    qw = quantize_weight(w, WeightDesc.parse(desc), name=f"test[{desc}]")
    return qw, GemmLayer(qw, None, dtype)


def _check_against_reference(desc, dtype, n, k):
    from vllm_humming.reference import dequantize_weight

    qw, layer = _layer(desc, dtype, n, k)
    out = torch.full((n, k), float("nan"), device="cuda", dtype=dtype)
    got = WeightExpander(layer)(out=out)
    torch.cuda.synchronize()
    assert got is out
    ref = dequantize_weight(qw).float()
    assert not torch.isnan(got).any(), f"{desc} N={n} K={k}: unwritten (NaN) elements"
    assert torch.isfinite(got.float()).all()
    diff = (got.float() - ref).abs()
    rel = (diff.norm() / ref.norm().clamp(min=1e-12)).item()
    assert rel < 1e-2, f"{desc} N={n} K={k} {dtype}: rel err {rel:.3e}"
    # element-wise: a misplaced element is off by the size of a weight, far above two 16-bit roundings
    bound = 2e-2 * ref.abs() + 2e-2 * ref.abs().amax(dim=1, keepdim=True) + 1e-6
    bad = (diff > bound).nonzero()
    assert bad.numel() == 0, f"{desc} N={n} K={k}: {bad.shape[0]} elements off, first at {bad[:4].tolist()}"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("desc,dtype", BRIEF_FORMATS)
@pytest.mark.usefixtures("precompiled")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_brief_formats(desc, dtype, shape):
    _check_against_reference(desc, dtype, *shape)


@pytest.mark.parametrize("desc,dtype", MORE_FORMATS)
@pytest.mark.usefixtures("precompiled")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_more_formats(desc, dtype):
    _check_against_reference(desc, dtype, 1000, 1088)


@pytest.mark.usefixtures("precompiled")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_strided_misaligned_and_partial_outputs():
    for desc, dtype in (BRIEF_FORMATS[0], BRIEF_FORMATS[7]):
        for n, k in ((48, 1001), (33, 200), (1000, 1088)):
            _, layer = _layer(desc, dtype, n, k, seed=1)
            ex = WeightExpander(layer)
            base = ex()                                           # fresh contiguous [N, K]
            assert base.shape == (n, k) and base.is_contiguous() and not torch.isnan(base).any()
            # a view into a wider buffer: columns past K stay untouched
            buf = torch.full((n, k + 24), 7.0, device="cuda", dtype=dtype)
            ex(out=buf[:, :k])
            # a misaligned start: every row takes the element-store path
            flat = torch.full((n * k + 1,), float("nan"), device="cuda", dtype=dtype)
            mis = flat[1:].view(n, k)
            ex(out=mis)
            torch.cuda.synchronize()
            assert torch.equal(buf[:, :k], base) and (buf[:, k:] == 7.0).all()
            assert torch.equal(mis, base) and torch.isnan(flat[0])


@pytest.mark.usefixtures("precompiled")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_linear_on_expanded_weight_matches_gemm_kernel():
    for desc, dtype in (BRIEF_FORMATS[0], BRIEF_FORMATS[4], BRIEF_FORMATS[7], BRIEF_FORMATS[2]):
        _, layer = _layer(desc, dtype, 1000, 1088, seed=2)
        if hasattr(layer, "prefill_m"):
            layer.prefill_m = 1 << 62          # keep the layer on its mma.sync kernel for this M
        x = torch.randn(300, 1088, device="cuda", dtype=dtype)
        y_kernel = layer(x)
        y_cublas = torch.nn.functional.linear(x, expand_weight(layer))
        torch.cuda.synchronize()
        rel = ((y_cublas.float() - y_kernel.float()).norm() / y_kernel.float().norm()).item()
        assert rel < 5e-3, f"{desc}: F.linear on the expanded weight vs GEMM: rel {rel:.3e}"


@pytest.mark.usefixtures("precompiled")
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_current_stream_graph_and_out_checks():
    _, layer = _layer(*BRIEF_FORMATS[1], 512, 1024, seed=3)
    ex = WeightExpander(layer)
    ref = ex()
    scratch = torch.empty(512, 1024, device="cuda", dtype=layer.dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        ex(out=scratch)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert torch.equal(scratch, ref)
    graph_out = torch.full_like(ref, float("nan"))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        ex(out=graph_out)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(graph_out, ref)
    with pytest.raises(DescError, match=r"\[512, 1024\]"):
        ex(out=torch.empty(512, 1000, device="cuda", dtype=layer.dtype))
    with pytest.raises(DescError, match="bfloat16"):
        ex(out=torch.empty(512, 1024, device="cuda", dtype=torch.float16))
    with pytest.raises(DescError, match="contiguous"):
        ex(out=torch.empty(1024, 512, device="cuda", dtype=layer.dtype).t())
