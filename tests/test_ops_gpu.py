"""GPU: the linear op under torch.compile(fullgraph=True) and CUDA graphs, and its eager host overhead."""

import time

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops import humming_linear, prepare_linear
from vllm_humming.reference import quantize_weight

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _layer(n=1024, k=2048):
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    pl = prepare_linear(qw)
    assert pl.backend == "kernel", pl.fallback_reason
    pl.kernel.warmup()
    return pl


def test_torch_compile_fullgraph_and_graph_replay():
    pl = _layer()
    x = torch.randn(7, 2048, device="cuda", dtype=torch.bfloat16)
    ref = humming_linear(x, pl)
    f = torch.compile(lambda t: humming_linear(t, pl) + 1.0, fullgraph=True)
    torch.testing.assert_close(f(x), ref + 1.0, rtol=0, atol=0)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        f(x)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        yg = f(x)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(yg, humming_linear(x, pl) + 1.0, rtol=0, atol=0)


@pytest.mark.parametrize("m", [1, 16])
def test_eager_host_overhead(m):
    """Host time per eager call (the GPU is not the bottleneck for this small layer); printed for the record."""
    pl = _layer(1024, 1024)
    x = torch.randn(m, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        humming_linear(x, pl)
    torch.cuda.synchronize()
    n = 500
    t0 = time.perf_counter()
    for _ in range(n):
        humming_linear(x, pl)
    host_us = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    print(f"\n[humming] eager host overhead M={m}: {host_us:.1f} us per call")
    assert host_us < 60, f"eager host overhead {host_us:.1f} us per call"



@pytest.mark.parametrize("desc,n,k", [("w:uint4b8,s:g128:bfloat16", 6144, 4096),
                                       ("w:uint4b8,s:g128:bfloat16", 28672, 4096),
                                       ("w:uint3b4,s:g128:bfloat16", 4096, 14336),
                                       ("w:float4_e2m1,s:g32:float8_e8m0fnu", 2048, 4096)])
def test_background_compile_covers_every_call(desc, n, k, monkeypatch):
    """What the vLLM integration does after preparing a layer with HUMMING_JIT_BACKGROUND=1
    (ops.linear.compile_in_background: every M bucket's kernels, the plans' alternatives and the prefill expansion on
    the background thread; the same set warmup() compiles): once it has finished, calls at any token count -- decode
    buckets, the alternatives their plans launch, the prefill path -- run NVRTC no more and match the reference."""
    from vllm_humming import jit
    from vllm_humming.jit import background
    from vllm_humming.ops import compile_in_background
    from vllm_humming.reference import reference_gemm

    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "1")   # (opt-in)
    monkeypatch.delenv("HUMMING_JIT_STRICT", raising=False)
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc))
    pl = prepare_linear(qw)
    assert pl.backend == "kernel", pl.fallback_reason
    fut = compile_in_background(pl)
    if fut is not None:   # (None: this process already submitted every one of them)
        assert fut.result(timeout=600) is not None
    background.wait_background(timeout=600)
    jit.clear_memory_cache()
    jit.reset_stats()
    for m in (1, 2, 3, 8, 16, 17, 64, 257, 2048):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        if m == 2048:   # (the prefill path: expansion kernel + cuBLAS)
            y = humming_linear(x, pl)
        else:
            pl.kernel(x, out=y)
        torch.cuda.synchronize()
        ref = reference_gemm(x, qw)
        assert torch.isfinite(y).all(), (desc, n, k, m)
        torch.testing.assert_close(y.float(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())
    torch.cuda.synchronize()
    assert jit.stats()["nvrtc_compiles"] == 0, (desc, n, k, jit.stats())


@pytest.mark.parametrize("n,k", [(6144, 4096), (28672, 4096), (4096, 14336)])
def test_first_decode_call_loads_only_the_kernels_it_launches(n, k):
    """A cold layer's first one-token call compiles and loads only what its plan launches (the prefetch grid or the
    x16 twin on these layers), not also the M bucket's own kernel: the cold first call pays one NVRTC compile.  The
    outputs (NaN-poisoned before the call) match the fp32 reference; later 3- and 16-token calls load what they
    launch."""
    from vllm_humming.reference import reference_gemm

    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    pl = prepare_linear(qw)
    assert pl.backend == "kernel", pl.fallback_reason
    layer = pl.kernel
    assert not layer._buckets
    launched = set()
    for m in (1, 3, 16):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        layer(x, out=y)
        torch.cuda.synchronize()
        ref = reference_gemm(x, qw)
        assert torch.isfinite(y).all(), (n, k, m)
        torch.testing.assert_close(y.float(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())
        info = layer.plan_info[m]
        launched |= {info["choice"]} | ({info["tail"]["choice"]} if "tail" in info else set())
        loaded = {bk.choice.short() for bk in layer._buckets.values()}
        assert loaded == launched, (n, k, m, loaded, launched)
    if torch.cuda.get_device_capability() == (9, 0):
        # on sm_90a every one of these layers launches an alternative at one token (prefetch grid / x16 twin)
        assert layer.plan_info[1]["choice"] != layer._choice(1).short()
