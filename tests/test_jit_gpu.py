"""JIT engine on a GPU: compile -> load -> launch gives correct results on torch streams, through Launcher and the
generic launch, with >48 KiB dynamic shared memory, PTX output, inside torch.compile(fullgraph=True) via the custom-op
helper, inside captured CUDA graphs; launch overhead is measured and reported.  Skipped without CUDA."""

from __future__ import annotations

import time

import pytest
import torch

from graph_util import capture_cuda_graph

import vllm_humming.jit as jit
from vllm_humming.jit.selftest import SELFTEST_ARG_TYPES, SelftestConfig, selftest_reference, selftest_spec

pytestmark = pytest.mark.gpu

CONFIGS = [
    SelftestConfig(),                                                            # 64x64x32, 4 warps, static smem
    SelftestConfig(bm=16, bn=64, bk=64, warps_m=1, warps_n=4),                   # small-M bucket
    SelftestConfig(bm=128, bn=128, bk=128, warps_m=2, warps_n=4, dynamic_smem=True),  # 68 KiB dynamic smem
]


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("HUMMING_CACHE_DIR", str(tmp_path_factory.mktemp("jitcache")))
    mp.delenv("HUMMING_JIT_STRICT", raising=False)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def arch():
    a = jit.current_arch()
    assert a is not None
    return a


def _inputs(m, n, k, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    return a, b


def _close(c, a, b, alpha):
    torch.testing.assert_close(c, selftest_reference(a, b, alpha), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.tag)
@pytest.mark.parametrize("mnk", [(1, 64, 64), (77, 130, 96), (256, 192, 520)], ids=lambda t: "x".join(map(str, t)))
def test_launcher_result_matches_torch(arch, cfg, mnk):
    m, n, k = mnk
    fn = jit.load_kernel(jit.compile_kernel(selftest_spec(arch, cfg)))
    a, b = _inputs(m, n, k)
    c = torch.full((m, n), float("nan"), device="cuda")
    launcher = jit.Launcher(fn, SELFTEST_ARG_TYPES)
    launcher.launch(cfg.grid(m, n), cfg.threads, cfg.launch_smem, torch.cuda.current_stream().cuda_stream,
                    a, b, c, m, n, k, 0.5)
    torch.cuda.synchronize()
    _close(c, a, b, 0.5)


def test_generic_launch_side_stream_and_attributes(arch):
    cfg = SelftestConfig()
    art = jit.compile_kernel(selftest_spec(arch, cfg))
    fn = jit.load_kernel(art)
    assert jit.load_kernel(art) is fn and jit.load_kernel(art, device=torch.cuda.current_device()) is fn
    assert 0 < fn.num_regs <= 255 and fn.max_threads_per_block >= cfg.threads
    assert fn.static_smem >= cfg.smem_bytes
    m, n, k = 33, 70, 48
    a, b = _inputs(m, n, k, seed=1)
    c = torch.zeros(m, n, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # stream=None -> torch's current stream, i.e. `side` here
        fn.launch(cfg.grid(m, n), cfg.threads, 0, None, (a, b, c, m, n, k, 2.0))
    side.synchronize()
    _close(c, a, b, 2.0)


def test_ptx_output_loads_and_runs(arch):
    cfg = SelftestConfig()
    fn = jit.load_kernel(jit.compile_kernel(selftest_spec(arch, cfg, output="ptx")))
    m, n, k = 40, 64, 64
    a, b = _inputs(m, n, k, seed=2)
    c = torch.zeros(m, n, device="cuda")
    jit.Launcher(fn, SELFTEST_ARG_TYPES).launch(cfg.grid(m, n), cfg.threads, 0, None, a, b, c, m, n, k, 1.0)
    torch.cuda.synchronize()
    _close(c, a, b, 1.0)


def test_incompatible_binary_is_refused(arch):
    other = "sm_75" if not arch.startswith("sm_7") else "sm_90a"
    with pytest.raises(jit.JitError, match="cannot run on device"):
        jit.load_kernel(jit.compile_kernel(selftest_spec(other)))


def test_launch_error_names_the_cuda_error(arch):
    fn = jit.load_kernel(jit.compile_kernel(selftest_spec(arch)))
    a, b = _inputs(16, 64, 32)
    c = torch.zeros(16, 64, device="cuda")
    with pytest.raises(jit.CudaError, match="CUDA_ERROR_INVALID_VALUE") as ei:
        fn.launch((1, 1, 1), 2048, 0, None, (a, b, c, 16, 64, 32, 1.0))  # 2048 threads per block: invalid
    assert "humming_selftest" in str(ei.value) and "block=(2048, 1, 1)" in str(ei.value)
    torch.cuda.synchronize()  # the context is still usable


def test_cuda_graph_capture_and_replay(arch):
    cfg = SelftestConfig()
    fn = jit.load_kernel(jit.compile_kernel(selftest_spec(arch, cfg)))
    launcher = jit.Launcher(fn, SELFTEST_ARG_TYPES)
    m, n, k = 48, 96, 64
    a, b = _inputs(m, n, k, seed=3)
    c = torch.zeros(m, n, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside capture, as torch recommends
        launcher.launch(cfg.grid(m, n), cfg.threads, 0, None, a, b, c, m, n, k, 1.0)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launcher.launch(cfg.grid(m, n), cfg.threads, 0, None, a, b, c, m, n, k, 1.0)
    launcher[6] = 3.0  # changing the launcher after capture must not change the captured launch
    a2, b2 = _inputs(m, n, k, seed=4)
    a.copy_(a2)
    b.copy_(b2)
    c.zero_()
    graph.replay()
    torch.cuda.synchronize()
    _close(c, a2, b2, 1.0)


@pytest.fixture(scope="module")
def selftest_op(arch):
    from vllm_humming.jit.torch_op import define_op

    cfg = SelftestConfig()
    launcher = jit.Launcher(jit.load_kernel(jit.compile_kernel(selftest_spec(arch, cfg))), SELFTEST_ARG_TYPES)

    def impl(a, b, alpha: float):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[0]
        c = torch.empty(m, n, device=a.device, dtype=torch.float32)
        launcher.launch(cfg.grid(m, n), cfg.threads, 0, torch.cuda.current_stream().cuda_stream,
                        a, b, c, m, n, k, alpha)
        return c

    def fake(a, b, alpha: float):
        return a.new_empty(a.shape[0], b.shape[0], dtype=torch.float32)

    return define_op("test_jit_selftest_gemm", "(Tensor a, Tensor b, float alpha) -> Tensor", impl=impl, fake=fake)


def test_custom_op_opcheck_and_torch_compile_fullgraph(selftest_op):
    a, b = _inputs(37, 64, 96, seed=5)
    torch.library.opcheck(selftest_op, (a, b, 0.25))

    def f(x, w):
        return torch.relu(selftest_op(x, w, 0.25)) * 2 + 1

    compiled = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(a, b), torch.relu(selftest_reference(a, b, 0.25)) * 2 + 1,
                               rtol=1e-4, atol=1e-3)
    a2, b2 = _inputs(150, 64, 96, seed=6)
    torch.testing.assert_close(compiled(a2, b2), torch.relu(selftest_reference(a2, b2, 0.25)) * 2 + 1,
                               rtol=1e-4, atol=1e-3)


def test_custom_op_inside_cuda_graph(selftest_op):
    a, b = _inputs(64, 128, 64, seed=7)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        selftest_op(a, b, 1.0)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = selftest_op(a, b, 1.0)
    a2, b2 = _inputs(64, 128, 64, seed=8)
    a.copy_(a2)
    b.copy_(b2)
    graph.replay()
    torch.cuda.synchronize()
    _close(out, a2, b2, 1.0)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_second_device(arch):
    cfg = SelftestConfig()
    art = jit.compile_kernel(selftest_spec(jit.current_arch(1), cfg))
    fn = jit.load_kernel(art, device=1)
    assert fn.device == 1
    with torch.cuda.device(1):
        a, b = _inputs(20, 64, 32)
        c = torch.zeros(20, 64, device="cuda")
        jit.Launcher(fn, SELFTEST_ARG_TYPES).launch(cfg.grid(20, 64), cfg.threads, 0, None, a, b, c, 20, 64, 32, 1.0)
        torch.cuda.synchronize()
        _close(c, a, b, 1.0)


def test_launch_overhead_report(arch):
    """Host time per launch of a no-op kernel (report; the target is <= 15 us, asserted loosely)."""
    src = 'extern "C" __global__ void humming_test_noop(float* x, int n) { if (n < 0) x[0] = 1.f; }\n'
    fn = jit.load_kernel(jit.compile_kernel(jit.KernelSpec(name="humming_test_noop", source=src, arch=arch)))
    x = torch.zeros(1, device="cuda")
    launcher = jit.Launcher(fn, ("ptr", "i32"))
    h = torch.cuda.current_stream().cuda_stream
    iters = 3000

    def timed(body):
        for _ in range(200):
            body()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            body()
        dt = (time.perf_counter() - t0) / iters * 1e6
        torch.cuda.synchronize()
        return dt

    us_prepared = timed(lambda: launcher.launch_prepared(1, 32, 0, h))
    us_launcher = timed(lambda: launcher.launch(1, 32, 0, h, x, 1))
    us_launcher_stream = timed(lambda: launcher.launch(1, 32, 0, torch.cuda.current_stream().cuda_stream, x, 1))
    us_generic = timed(lambda: fn.launch(1, 32, 0, None, (x, 1)))
    us_torch = timed(lambda: x.add_(0))
    print(f"\nlaunch overhead (us/call): launch_prepared {us_prepared:.2f}, Launcher.launch {us_launcher:.2f}, "
          f"Launcher.launch + current_stream() {us_launcher_stream:.2f}, KernelFunction.launch {us_generic:.2f}; "
          f"torch x.add_(0) for comparison {us_torch:.2f}")
    assert us_launcher < 40, f"Launcher.launch takes {us_launcher:.1f} us per call (target <= 15 us)"


# ---------------------------------------------------------------------------------------------------------------
# direct ctypes launch path vs cuda.bindings, programmatic dependent launch (vllm_humming.jit.launch)

import ctypes  # noqa: E402

_PDL_SRC = r'''
extern "C" __global__ void humming_test_pdl_step(const float* __restrict__ x, float* __restrict__ y, int n, float a,
                                                 long long spin) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // let the next PDL launch start right away
    asm volatile("griddepcontrol.wait;" ::: "memory");               // ... but x comes from the previous kernel
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long t0, t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0));
    do {                                                               // keep this kernel running a while
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    } while (t - t0 < spin);
    if (i < n) y[i] = x[i] * a + 1.0f;
}
'''


def _pdl_fn(arch):
    from vllm_humming.jit.spec import parse_arch

    if parse_arch(arch)[0] < 90:
        pytest.skip("programmatic dependent launch needs sm_90+")
    return jit.load_kernel(jit.compile_kernel(jit.KernelSpec(name="humming_test_pdl_step", source=_PDL_SRC,
                                                             arch=arch)))


def _pdl_chain_reference(x0, steps, a):
    y = x0.clone()
    for _ in range(steps):
        y = y * a + 1.0
    return y


def test_ctypes_and_bindings_paths_give_the_same_result(arch):
    from vllm_humming.jit import launch as L

    assert L.direct_launch_available(), L._direct_why
    cfg = SelftestConfig(bm=16, bn=64, bk=64, warps_m=1, warps_n=4)
    fn = jit.load_kernel(jit.compile_kernel(selftest_spec(arch, cfg)))
    m, n, k = 45, 200, 128
    a, b = _inputs(m, n, k, seed=9)
    outs = {}
    for path in ("ctypes", "bindings"):
        launcher = jit.Launcher(fn, SELFTEST_ARG_TYPES, launch_path=path)
        assert launcher.launch_path == path and launcher.mode == ("ctypes" if path == "ctypes" else "raw")
        c = outs[path] = torch.full((m, n), float("nan"), device="cuda")
        launcher.launch(cfg.grid(m, n), cfg.threads, 0, None, a, b, c, m, n, k, 0.75)
    torch.cuda.synchronize()
    _close(outs["ctypes"], a, b, 0.75)
    assert torch.equal(outs["ctypes"], outs["bindings"])


def test_pdl_chain_is_correct(arch):
    fn = _pdl_fn(arch)
    n, steps, alpha = 50_000, 8, 0.5
    x0 = torch.randn(n, device="cuda")
    bufs = [x0] + [torch.full((n,), float("nan"), device="cuda") for _ in range(steps)]
    grid, block = (n + 255) // 256, 256
    for path in ("ctypes", "bindings"):
        launcher = jit.Launcher(fn, ("ptr", "ptr", "i32", "f32", "i64"), pdl=True, launch_path=path)
        assert launcher.pdl and launcher.mode == ("ctypes-pdl" if path == "ctypes" else "raw-pdl")
        for t in bufs[1:]:
            t.fill_(float("nan"))
        for i in range(steps):
            launcher.launch(grid, block, 0, None, bufs[i], bufs[i + 1], n, alpha, 20_000)
        torch.cuda.synchronize()
        torch.testing.assert_close(bufs[-1], _pdl_chain_reference(x0, steps, alpha), rtol=1e-5, atol=1e-5)
    # the generic launch with pdl, mixed with ordinary launches on the same stream
    out = torch.full((n,), float("nan"), device="cuda")
    fn.launch(grid, block, 0, None, (x0, bufs[1], n, alpha, ctypes.c_int64(20_000)), pdl=True)
    fn.launch(grid, block, 0, None, (bufs[1], out, n, alpha, ctypes.c_int64(0)), pdl=True)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _pdl_chain_reference(x0, 2, alpha), rtol=1e-5, atol=1e-5)


def test_pdl_launches_inside_a_cuda_graph(arch):
    fn = _pdl_fn(arch)
    n, steps, alpha = 4096, 4, 2.0
    launcher = jit.Launcher(fn, ("ptr", "ptr", "i32", "f32", "i64"), pdl=True)
    x0 = torch.randn(n, device="cuda")
    bufs = [x0] + [torch.zeros(n, device="cuda") for _ in range(steps)]
    grid = (n + 127) // 128

    def run():
        for i in range(steps):
            launcher.launch(grid, 128, 0, None, bufs[i], bufs[i + 1], n, alpha, 5_000)

    graph, _ = capture_cuda_graph(run)
    x0.copy_(torch.randn(n, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(bufs[-1], _pdl_chain_reference(x0, steps, alpha), rtol=1e-5, atol=1e-4)


def test_launch_path_overhead_report(arch):
    """Host us per Launcher.launch of a no-op kernel: cuda.bindings vs the direct ctypes path (and PDL); print only."""
    from vllm_humming.jit import launch as L

    src = 'extern "C" __global__ void humming_test_noop2(float* x, int n) { if (n < 0) x[0] = 1.f; }\n'
    fn = jit.load_kernel(jit.compile_kernel(jit.KernelSpec(name="humming_test_noop2", source=src, arch=arch)))
    x = torch.zeros(1, device="cuda")
    h = torch.cuda.current_stream().cuda_stream
    iters = 5000
    launchers = {"bindings": jit.Launcher(fn, ("ptr", "i32"), launch_path="bindings"),
                 "ctypes": jit.Launcher(fn, ("ptr", "i32"), launch_path="ctypes"),
                 "bindings+pdl": jit.Launcher(fn, ("ptr", "i32"), launch_path="bindings", pdl=True),
                 "ctypes+pdl": jit.Launcher(fn, ("ptr", "i32"), launch_path="ctypes", pdl=True)}
    res = {}
    for _ in range(2):  # two rounds, keep the best: the first one warms caches
        for name, launcher in launchers.items():
            launch = launcher.launch
            for _ in range(200):
                launch(1, 32, 0, h, x, 1)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                launch(1, 32, 0, h, x, 1)
            dt = (time.perf_counter() - t0) / iters * 1e6
            torch.cuda.synchronize()
            res[name] = min(res.get(name, dt), dt)
    print(f"\nhost us per Launcher.launch (entry points from {L._direct_api().source}): "
          + ", ".join(f"{k} {v:.2f}" for k, v in res.items()))
