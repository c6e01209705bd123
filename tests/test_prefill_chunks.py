"""Chunked prefill (vllm_humming/ops/dequant_weight.py: prefill_chunk_rows, prefill_matmul, WeightExpander.expand_rows):
the weight is expanded band by band into one reused scratch buffer and each band runs through cuBLAS into a column
slice of the output.

CPU tests (always run): the band planning, the env override, argument checks, and prefill_matmul's band loop itself
driven by a CPU stand-in for the expansion kernel (same class, only the launch replaced by a copy of the dense weight's
rows), with torch's CPU matmul.
GPU tests (pytest -m gpu; skipped without CUDA): prefill_matmul against the fp32 reference for several N (not a
multiple of the band, not a multiple of 16), with and without bias, M in {128, 257}, output poisoned with NaN; bands
of expand_rows against the full expansion; no copies in torch's mm for the column slices; scratch reuse; CUDA graphs.
"""

from __future__ import annotations

import math

import pytest
import torch

from vllm_humming.desc import DescError, WeightDesc
from vllm_humming.ops import dequant_weight as dw
from vllm_humming.ops.dequant_weight import (PREFILL_CHUNK_MB, WeightExpander, prefill_chunk_mb, prefill_chunk_rows,
                                             prefill_matmul)


# ---------------------------------------------------------------------------------------------------- planning
def _budget_rows(k, esz, mb):
    return max(16, int(mb * (1 << 20)) // (k * esz) // 16 * 16)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_chunk_rows_properties(dtype):
    for n in (1, 15, 16, 17, 1000, 4096, 4112, 28672, 151936):
        for k in (64, 1001, 4096, 14336):
            for mb in (0.001, 1, 8, 16, 60.5, 1e6):
                rows = prefill_chunk_rows(n, k, dtype, mb)
                n16 = -(-n // 16) * 16
                b = _budget_rows(k, 2, mb)
                assert rows % 16 == 0 and 16 <= rows <= n16, (n, k, mb, rows)
                assert rows <= b, "the band never exceeds its budget (except the 16-row minimum)"
                # evening out keeps the band count of the plain budget and leaves no sliver
                bands = -(-n16 // rows)
                assert bands == -(-n16 // min(b, n16)), (n, k, mb, rows)
                assert n16 - (bands - 1) * rows > rows - 16 * bands, (n, k, mb, rows)


def test_chunk_rows_values():
    assert prefill_chunk_rows(28672, 4096, torch.bfloat16, 16) == 2048       # 16 MiB of bf16 rows of 8 KiB
    assert prefill_chunk_rows(28672, 4096, torch.bfloat16, 8) == 1024
    assert prefill_chunk_rows(4112, 4096, torch.bfloat16, 16) == 1376        # 3 bands of 1376, 1376, 1360
    assert prefill_chunk_rows(4096, 4096, torch.float16, 32) == 4096         # fits: one band
    assert prefill_chunk_rows(1000, 4096, torch.bfloat16, 1e6) == 1008       # one band, N rounded up to 16
    assert prefill_chunk_rows(1000, 4096, torch.bfloat16, 0) == 1008         # 0: no chunking
    assert prefill_chunk_rows(1000, 1 << 20, torch.bfloat16, 1) == 16        # a row wider than the budget: 16 rows
    assert prefill_chunk_rows(1, 64, torch.bfloat16, 1) == 16
    assert prefill_chunk_rows(5120, 3, torch.bfloat16, 0.01) == 1712         # int(0.01 MiB) // 6 B -> 1744 -> 3 bands


def test_chunk_rows_rejects_bad_arguments():
    with pytest.raises(DescError, match="bfloat16 or float16"):
        prefill_chunk_rows(16, 64, torch.float32, 16)
    for bad in (-1, float("nan"), float("inf"), True, "16"):
        with pytest.raises(DescError, match="chunk_mb"):
            prefill_chunk_rows(16, 64, torch.bfloat16, bad)
    for n, k in ((0, 64), (16, 0), (16.0, 64), (16, True)):
        with pytest.raises(DescError, match="positive int"):
            prefill_chunk_rows(n, k, torch.bfloat16, 16)


def test_chunk_mb_env(monkeypatch):
    monkeypatch.delenv("HUMMING_PREFILL_CHUNK_MB", raising=False)
    assert prefill_chunk_mb() == PREFILL_CHUNK_MB
    assert prefill_chunk_rows(28672, 4096, torch.bfloat16) == prefill_chunk_rows(28672, 4096, torch.bfloat16,
                                                                                 PREFILL_CHUNK_MB)
    monkeypatch.setenv("HUMMING_PREFILL_CHUNK_MB", " 4 ")
    assert prefill_chunk_mb() == 4.0
    assert prefill_chunk_rows(28672, 4096, torch.bfloat16) == 512
    monkeypatch.setenv("HUMMING_PREFILL_CHUNK_MB", "0")
    assert prefill_chunk_rows(28672, 4096, torch.bfloat16) == 28672
    for bad in ("abc", "-2", "nan", "inf"):
        monkeypatch.setenv("HUMMING_PREFILL_CHUNK_MB", bad)
        with pytest.raises(DescError, match="HUMMING_PREFILL_CHUNK_MB"):
            prefill_chunk_mb()


# ---------------------------------------------------------------------------------------------------- CPU band loop
class _CpuExpander(WeightExpander):
    """WeightExpander whose kernel launch is replaced by copying rows of a dense weight (CPU); everything else --
    expand_rows' checks, prefill_matmul's planning, scratch, slicing and cuBLAS-style calls -- is the real code."""

    def __init__(self, w: torch.Tensor, name: str = "cpu.proj"):
        self.name, self.dtype, self.device = name, w.dtype, w.device
        self.n, self.k = w.shape
        self.n16, self.k64 = -(-self.n // 16) * 16, -(-self.k // 64) * 64
        self._where = f"layer {name!r}"
        self._prefill_plans = {}
        self.dense = w
        self.calls = []

    def _launch_rows(self, n0, n1, out, ldo):
        assert n0 % 16 == 0 and 0 <= n0 < n1 <= self.n
        assert out.shape == (n1 - n0, self.k) and out.stride() in ((ldo, 1), (self.k, 1)) and ldo >= self.k
        self.calls.append((n0, n1, out.data_ptr(), ldo))
        out.copy_(self.dense[n0:n1])


def _dense(n, k, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, k, generator=g) * 0.05).to(dtype)


def _check_cpu(n, k, m, chunk_rows, bias, y_layout="contiguous", dtype=torch.bfloat16):
    w = _dense(n, k, dtype)
    ex = _CpuExpander(w)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(m, k, generator=g).to(dtype)
    b = (torch.randn(n, generator=g) * 0.1).to(dtype) if bias else None
    if y_layout == "contiguous":
        y = torch.full((m, n), float("nan"), dtype=dtype)
    else:                                        # a column slice of a wider buffer: row stride > N
        wide = torch.full((m, n + 40), float("nan"), dtype=dtype)
        y = wide[:, 8:8 + n]
    got = prefill_matmul(ex, x, b, y, chunk_rows=chunk_rows)
    assert got is y
    rows = min(chunk_rows, -(-n // 16) * 16)
    bands = [(c[0], c[1]) for c in ex.calls]
    assert bands == [(n0, min(n0 + rows, n)) for n0 in range(0, n, rows)], "bands must tile [0, N) in order"
    assert len({c[2] for c in ex.calls}) == 1, "every band is expanded into the same scratch buffer"
    assert {c[3] for c in ex.calls} == {-(-k // 8) * 8}, "scratch rows padded to 8 elements (16 bytes)"
    ref = x.float() @ w.float().t() + (b.float() if bias else 0)
    assert not torch.isnan(y).any(), "unwritten output columns"
    err = (y.float() - ref).abs().amax(dim=0) / ref.abs().amax(dim=0).clamp(min=1e-3)
    assert err.max().item() < 2e-2, f"N={n} K={k} M={m} rows={chunk_rows}: column error {err.max().item():.3e}"
    if y_layout != "contiguous":
        assert torch.isnan(wide[:, :8]).all() and torch.isnan(wide[:, 8 + n:]).all(), "wrote outside y"
    return ex


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("n,k,chunk_rows", [(256, 128, 64), (1000, 72, 96), (200, 1001, 48), (33, 64, 16),
                                            (40, 64, 1024)])
def test_cpu_band_loop(n, k, chunk_rows, bias):
    _check_cpu(n, k, 37, chunk_rows, bias)


def test_cpu_band_loop_strided_output_and_fp16():
    _check_cpu(300, 96, 9, 64, True, y_layout="wide")
    _check_cpu(300, 96, 9, 64, False, y_layout="wide", dtype=torch.float16)


def test_cpu_scratch_is_shared_and_grows_without_freeing(monkeypatch):
    monkeypatch.setattr(dw, "_SCRATCH", {})
    small = _CpuExpander(_dense(64, 64))
    big = _CpuExpander(_dense(128, 256, seed=3))
    x1, x2 = torch.randn(5, 64).bfloat16(), torch.randn(5, 256).bfloat16()
    prefill_matmul(small, x1, None, torch.empty(5, 64, dtype=torch.bfloat16), chunk_rows=32)
    prefill_matmul(small, x1, None, torch.empty(5, 64, dtype=torch.bfloat16), chunk_rows=32)
    (bufs,) = dw._SCRATCH.values()
    assert len(bufs) == 1 and bufs[0].numel() == 32 * 64
    assert {c[2] for c in small.calls} == {bufs[0].data_ptr()}, "second call reuses the buffer"
    prefill_matmul(big, x2, None, torch.empty(5, 128, dtype=torch.bfloat16), chunk_rows=64)
    assert len(bufs) == 2 and bufs[1].numel() == 64 * 256 and bufs[0].numel() == 32 * 64, "old buffer kept"
    small.calls.clear()
    prefill_matmul(small, x1, None, torch.empty(5, 64, dtype=torch.bfloat16), chunk_rows=32)
    assert {c[2] for c in small.calls} == {bufs[1].data_ptr()}, "a grown buffer is picked up by every layer"
    assert len(dw._SCRATCH) == 1
    half = _CpuExpander(_dense(64, 64, torch.float16))
    prefill_matmul(half, x1.half(), None, torch.empty(5, 64, dtype=torch.float16), chunk_rows=32)
    assert len(dw._SCRATCH) == 2, "one scratch per dtype"


def test_cpu_zero_rows_writes_nothing():
    ex = _CpuExpander(_dense(64, 64))
    y = torch.empty(0, 64, dtype=torch.bfloat16)
    assert prefill_matmul(ex, torch.empty(0, 64, dtype=torch.bfloat16), None, y) is y and not ex.calls


def test_prefill_matmul_rejects_bad_arguments():
    ex = _CpuExpander(_dense(64, 128), name="bad.proj")
    x = torch.randn(4, 128).bfloat16()
    y = torch.empty(4, 64, dtype=torch.bfloat16)
    cases = [
        (dict(x2=torch.randn(4, 100).bfloat16()), r"x must be a \[M, 128\]"),
        (dict(x2=torch.randn(2, 4, 128).bfloat16()), r"x must be a \[M, 128\]"),
        (dict(x2=x.float()), "x must be torch.bfloat16"),
        (dict(y=torch.empty(4, 63, dtype=torch.bfloat16)), r"y must be a torch.bfloat16 \[4, 64\]"),
        (dict(y=y.half()), r"y must be a torch.bfloat16 \[4, 64\]"),
        (dict(bias=torch.zeros(63, dtype=torch.bfloat16)), r"bias must be None or a torch.bfloat16 \[64\]"),
        (dict(bias=torch.zeros(64)), r"bias must be None"),
        (dict(chunk_rows=24), "multiple of 16"),
        (dict(chunk_rows=0), "multiple of 16"),
        (dict(chunk_rows=True), "multiple of 16"),
        (dict(chunk_rows=32.0), "multiple of 16"),
    ]
    for kw, msg in cases:
        args = dict(x2=x, bias=None, y=y, chunk_rows=None)
        args.update(kw)
        with pytest.raises(DescError, match=r"prefill matmul of layer 'bad\.proj': " + ".*" + msg):
            prefill_matmul(ex, **args)
    assert not ex.calls


def test_expand_rows_checks_and_arguments():
    ex = _CpuExpander(_dense(40, 72), name="rows.proj")
    for n0, n1 in ((8, 16), (0, 41), (16, 16), (-16, 8), (32, 20)):
        with pytest.raises(DescError, match=r"'rows\.proj'.*multiple of 16"):
            ex.expand_rows(n0, n1)
    with pytest.raises(DescError, match="ints"):
        ex.expand_rows(0, 16.0)
    with pytest.raises(DescError, match=r"\[8, 72\]"):
        ex.expand_rows(32, 40, out=torch.empty(16, 72, dtype=torch.bfloat16))
    with pytest.raises(DescError, match="contiguous"):
        ex.expand_rows(0, 16, out=torch.empty(72, 16, dtype=torch.bfloat16).t())
    with pytest.raises(DescError, match="pair"):
        ex(rows=(0, 16, 32))
    assert not ex.calls
    got = ex.expand_rows(32, 40)                           # last band, N % 16 != 0
    assert got.shape == (8, 72) and torch.equal(got, ex.dense[32:40]) and ex.calls[-1][3] == 72
    buf = torch.empty(16, 80, dtype=torch.bfloat16)
    assert ex(out=buf[:, :72], rows=(16, 32)) is not None and ex.calls[-1][:2] == (16, 32)
    assert ex.calls[-1][3] == 80 and torch.equal(buf[:, :72], ex.dense[16:32])
    full = ex()
    assert ex.calls[-1][:2] == (0, 40) and torch.equal(full, ex.dense)


def test_generated_kernel_takes_the_row_band():
    from vllm_humming.ops.dequant_weight import _ARG_TYPES, dequant_source
    from vllm_humming.ops.gemm import format_params

    _, src = dequant_source(format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16")), torch.bfloat16)
    assert "int K64, int row_begin, int row_end)" in src
    assert "tscale, out, N, K, ldo, N16, K64, row_begin,\n                                   row_end);" in src
    assert _ARG_TYPES == ("ptr",) * 6 + ("i32",) * 7


def test_header_defaults_to_the_whole_matrix(tmp_path, monkeypatch):
    """A caller that passes no row band (the device function's defaults) still compiles (NVRTC, no GPU)."""
    from vllm_humming.jit import KernelSpec, clear_memory_cache, compile_kernel

    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "jit"))
    clear_memory_cache()
    src = """#include "humming/dequant_weight.cuh"
using T = __nv_bfloat16;
extern "C" __global__ void __launch_bounds__(128) humming_test_dequant_defaults(
    const uint32_t* w, const T* gscale, const T* gzero, const float* chscale, const float* tscale, T* out, int N,
    int K, int ldo, int N16, int K64) {
  humming::dequant_weight<T, humming::IntFamily<T, 4>, 128, 0, 8, 4>(w, gscale, gzero, chscale, tscale, out, N, K,
                                                                    ldo, N16, K64);
}
"""
    try:
        art = compile_kernel(KernelSpec(name="humming_test_dequant_defaults", source=src, arch="sm_80"))
        assert art.cubin[:4] == b"\x7fELF"
    finally:
        clear_memory_cache()


# ---------------------------------------------------------------------------------------------------- GPU
FORMATS = [
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16),                             # GPTQ int4
    ("w:uint4,s:g128:bfloat16,zp:int", torch.bfloat16),                        # AWQ
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", torch.bfloat16),   # NVFP4 (epilogue scale folded in)
    ("w:uint4,s:g64:float16,zp:float", torch.float16),                         # fp16
]
_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _layer(desc, dtype, n, k, bias=False, seed=0):
    from vllm_humming.ops.gemm import GemmLayer
    from vllm_humming.reference import quantize_weight

    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(n, k, device="cuda", generator=g) * 0.05
    b = torch.randn(n, device="cuda", generator=g) * 0.1 if bias else None
    qw = quantize_weight(w, WeightDesc.parse(desc), name=f"prefill[{desc}]", bias=b)
    return qw, GemmLayer(qw, None, dtype)


def _reference(qw, x, bias):
    from vllm_humming.reference import dequantize_weight

    ref = x.float() @ dequantize_weight(qw).float().t()
    return ref + bias.float() if bias is not None else ref


def _assert_close(got, ref, what):
    assert not torch.isnan(got).any(), f"{what}: unwritten (NaN) outputs"
    diff = (got.float() - ref).abs()
    rel = (diff.norm() / ref.norm().clamp(min=1e-12)).item()
    assert rel < 1e-2, f"{what}: rel err {rel:.3e}"
    # per output column (= weight row): a band written to the wrong place is off by O(1), far above rounding
    col = diff.norm(dim=0) / ref.norm(dim=0).clamp(min=1e-6)
    assert col.max().item() < 3e-2, f"{what}: column {int(col.argmax())} off by {col.max().item():.3e}"


@pytest.mark.gpu
@_gpu
@pytest.mark.parametrize("m", [128, 257])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("n,k,chunk_rows", [
    (1024, 512, 256),      # N a multiple of the band
    (1000, 1088, 256),     # N not a multiple of 16 nor of the band
    (4128, 1024, 1024),    # N % band = 32
    (200, 1001, 64),       # K not a multiple of 8 (padded scratch rows), N % 16 = 8
    (560, 512, None),      # default band (one band here)
])
@pytest.mark.parametrize("desc,dtype", FORMATS)
def test_gpu_prefill_matmul_matches_reference(desc, dtype, n, k, chunk_rows, bias, m):
    qw, layer = _layer(desc, dtype, n, k, bias=bias)
    ex = WeightExpander(layer)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    y = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    got = prefill_matmul(ex, x, layer.bias, y, chunk_rows=chunk_rows)
    torch.cuda.synchronize()
    assert got is y
    what = f"{desc} N={n} K={k} M={m} rows={chunk_rows} bias={bias}"
    _assert_close(y, _reference(qw, x, layer.bias), what)
    # and against cuBLAS on the fully expanded weight (same operand, same GEMM up to blocking)
    full = torch.nn.functional.linear(x, ex(), layer.bias)
    _assert_close(y, full.float(), what + " vs full expansion")


@pytest.mark.gpu
@_gpu
def test_gpu_env_band_size_and_strided_output(monkeypatch):
    qw, layer = _layer(*FORMATS[0], 1000, 1024, bias=True, seed=4)
    ex = WeightExpander(layer)
    x = torch.randn(300, 1024, device="cuda", dtype=layer.dtype)
    monkeypatch.setenv("HUMMING_PREFILL_CHUNK_MB", "0.25")          # 128 rows of 2 KiB -> 8 bands
    assert prefill_chunk_rows(1000, 1024, layer.dtype) == 128
    wide = torch.full((300, 1100), float("nan"), device="cuda", dtype=layer.dtype)
    y = wide[:, 50:1050]
    prefill_matmul(ex, x, layer.bias, y)
    torch.cuda.synchronize()
    _assert_close(y, _reference(qw, x, layer.bias), "env band, strided y")
    assert torch.isnan(wide[:, :50]).all() and torch.isnan(wide[:, 1050:]).all()


@pytest.mark.gpu
@_gpu
def test_gpu_expand_rows_equals_full_expansion():
    for desc, dtype in FORMATS[:3]:
        for n, k in ((1000, 1088), (200, 1001)):
            _, layer = _layer(desc, dtype, n, k, seed=5)
            ex = WeightExpander(layer)
            full = ex()
            for n0, n1 in ((0, 16), (16, 48), (96, 200), (n // 16 * 16, n) if n % 16 else (n - 16, n)):
                out = torch.full((n1 - n0, k), float("nan"), device="cuda", dtype=dtype)
                ex.expand_rows(n0, n1, out)
                flat = torch.full(((n1 - n0) * k + 1,), float("nan"), device="cuda", dtype=dtype)
                ex(out=flat[1:].view(n1 - n0, k), rows=(n0, n1))          # misaligned: element stores
                torch.cuda.synchronize()
                assert torch.equal(out, full[n0:n1]), f"{desc} rows [{n0}, {n1})"
                assert torch.equal(flat[1:].view(n1 - n0, k), full[n0:n1]) and torch.isnan(flat[0])


@pytest.mark.gpu
@_gpu
def test_gpu_column_slices_need_no_copies_and_scratch_is_reused():
    """torch's mm/addmm writes the column slice y[:, n0:n1] in place (no clone / copy back), and repeated calls of
    several layers allocate nothing after the first."""
    from torch.profiler import ProfilerActivity, profile

    _, a = _layer(*FORMATS[0], 2048, 1024, seed=6)
    _, b = _layer(*FORMATS[1], 1536, 1024, seed=7)
    ea, eb = WeightExpander(a), WeightExpander(b)
    x = torch.randn(256, 1024, device="cuda", dtype=a.dtype)
    ya = torch.empty(256, 2048, device="cuda", dtype=a.dtype)
    yb = torch.empty(256, 1536, device="cuda", dtype=a.dtype)
    prefill_matmul(ea, x, None, ya, chunk_rows=512)
    prefill_matmul(eb, x, None, yb, chunk_rows=512)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        prefill_matmul(ea, x, None, ya, chunk_rows=512)
        prefill_matmul(eb, x, None, yb, chunk_rows=512)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before, "the scratch is allocated once and reused"
    names = [e.key for e in prof.key_averages()]
    assert "aten::mm" in names
    copies = [nm for nm in names if nm in ("aten::copy_", "aten::clone", "aten::contiguous")]
    assert not copies, f"torch copied the column slices: {copies}"
    pa = ea._prefill_plans[(512, dw._scratch_key(ea.device))]
    pb = eb._prefill_plans[(512, dw._scratch_key(eb.device))]
    assert pa.buf is pb.buf and len(pa.bands) == 4 and len(pb.bands) == 3


@pytest.mark.gpu
@_gpu
def test_gpu_cuda_graph_replay():
    qw, layer = _layer(*FORMATS[0], 1000, 1024, bias=True, seed=8)
    ex = WeightExpander(layer)
    x = torch.randn(128, 1024, device="cuda", dtype=layer.dtype)
    y_eager = prefill_matmul(ex, x, layer.bias, torch.empty(128, 1000, device="cuda", dtype=layer.dtype),
                             chunk_rows=256)
    y = torch.full((128, 1000), float("nan"), device="cuda", dtype=layer.dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):                   # warm-up off the default stream (cuBLAS handles, kernels loaded)
        prefill_matmul(ex, x, layer.bias, y, chunk_rows=256)
    torch.cuda.current_stream().wait_stream(s)
    y.fill_(float("nan"))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        prefill_matmul(ex, x, layer.bias, y, chunk_rows=256)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    _assert_close(y, _reference(qw, x, layer.bias), "graph replay")
    assert not math.isnan(y_eager.float().sum().item())
