"""The MoE route kernels (kernels/include/humming/moe_route.cuh): their bodies run on the CPU emulation of the CUDA
threads (tests/host/cuda_emu.h) against the torch definitions in ops/moe_gemm.py and moe/fallback.py; sources and
NVRTC compiles for every arch.  On a GPU: tests/test_moe_gpu.py runs FusedMoeGemm, which launches them."""

import os
import shutil
import subprocess

import pytest
import torch

from vllm_humming.jit import compile_many
from vllm_humming.moe.fallback import activation_fn
from vllm_humming.ops.moe_gemm import moe_max_tiles, moe_routing
from vllm_humming.ops.moe_route import ACTIVATIONS, ALIGN_THREADS, ROW_THREADS, align_smem_bytes, route_specs

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]
_CT = {torch.bfloat16: "__nv_bfloat16", torch.float16: "__half", torch.float32: "float"}
GATHERS = [(torch.bfloat16, torch.bfloat16), (torch.float32, torch.bfloat16), (torch.float16, torch.float16)]

_PROGRAM = r"""#include "cuda_emu.h"
#include "humming/moe_route.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>

template <class V> static std::vector<V> read_n(size_t n) {
  std::vector<V> v(n);
  if (n && fread(v.data(), sizeof(V), n, stdin) != n) exit(3);
  return v;
}
template <class V> static void write_all(const std::vector<V>& v) { fwrite(v.data(), sizeof(V), v.size(), stdout); }
template <class T> static std::vector<T> read_as(size_t n) {
  auto f = read_n<float>(n);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = emu::from_f32<T>(f[i]);
  return v;
}
template <class T> static void write_as_float(const std::vector<T>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = emu::to_f32(v[i]);
  write_all(f);
}

template <class Id> static void align(int S, int E, int bt, int tiles, int map_len) {
  auto ids64 = read_n<long long>(S);
  std::vector<Id> ids(ids64.begin(), ids64.end());
  auto emap = read_n<int>(map_len);
  std::vector<int> slots(tiles * bt, -7), tile_expert(tiles, -7), slot_row(S, -7);
  std::vector<int> smem(humming::moe_align_smem_ints(S, E));
  emu::launch(1, ALIGN_THREADS, [&] {
    humming::moe_align<Id, ALIGN_THREADS>(ids.data(), map_len ? emap.data() : nullptr, map_len, S, E, bt, tiles,
                                          slots.data(), tile_expert.data(), slot_row.data(), smem.data());
  });
  write_all(slots);
  write_all(tile_expert);
  write_all(slot_row);
}

template <class TIn, class T, bool kWeightIn> static void gather(int tokens, int topk, int h, int ldx, int k8, int rows) {
  auto x = read_as<TIn>((size_t)tokens * ldx);
  auto slots = read_n<int>(rows);
  auto w = read_n<float>((size_t)tokens * topk);
  std::vector<T> xs((size_t)rows * k8);
  emu::launch(rows < 7 ? rows : 7, ROW_THREADS, [&] {
    humming::moe_gather_rows<TIn, T, kWeightIn, ROW_THREADS>(x.data(), ldx, slots.data(), w.data(), tokens * topk,
                                                             topk, h, k8, rows, xs.data());
  });
  write_as_float(xs);
}

template <class T, int kAct> static void act(int rows, int ld1, int n_out, int lda, float alpha, float limit) {
  auto h1 = read_as<T>((size_t)rows * ld1);
  std::vector<T> a((size_t)rows * lda);
  emu::launch(rows < 5 ? rows : 5, ROW_THREADS, [&] {
    humming::moe_act_rows<T, kAct, ROW_THREADS>(h1.data(), ld1, n_out, rows, a.data(), lda, alpha, limit);
  });
  write_as_float(a);
}

template <class T, bool kWeighted> static void combine(int rows, int ldo, int tokens, int topk, int n) {
  auto o = read_as<T>((size_t)rows * ldo);
  auto slot_row = read_n<int>((size_t)tokens * topk);
  auto w = read_n<float>((size_t)tokens * topk);
  std::vector<T> out((size_t)tokens * n);
  emu::launch(tokens < 5 ? tokens : 5, ROW_THREADS, [&] {
    humming::moe_combine<T, kWeighted, ROW_THREADS>(o.data(), ldo, slot_row.data(), w.data(), tokens, topk, n,
                                                    out.data());
  });
  write_as_float(out);
}

int main(int argc, char** argv) {
  std::vector<long long> a;
  for (int i = 2; i < argc; ++i) a.push_back(atoll(argv[i]));
  const int which = atoi(argv[1]);
  switch (which) {
CASES
    default: return 2;
  }
  return 0;
}
"""


def _cases():
    cases = ["    case 0: align<int>(a[0], a[1], a[2], a[3], a[4]); break;",
             "    case 1: align<long long>(a[0], a[1], a[2], a[3], a[4]); break;"]
    for i, (tin, t) in enumerate(GATHERS):
        for w_in in (0, 1):
            cases.append(f"    case {10 + 2 * i + w_in}: gather<{_CT[tin]}, {_CT[t]}, {'true' if w_in else 'false'}>"
                         f"(a[0], a[1], a[2], a[3], a[4], a[5]); break;")
    for code in sorted({c for c, _ in ACTIVATIONS.values()}):
        cases.append(f"    case {20 + code}: act<__nv_bfloat16, {code}>(a[0], a[1], a[2], a[3], a[4] / 1000.f, "
                     f"a[5] / 1000.f); break;")
    cases.append("    case 30: act<__half, 0>(a[0], a[1], a[2], a[3], a[4] / 1000.f, a[5] / 1000.f); break;")
    cases.append("    case 40: combine<__nv_bfloat16, true>(a[0], a[1], a[2], a[3], a[4]); break;")
    cases.append("    case 41: combine<__nv_bfloat16, false>(a[0], a[1], a[2], a[3], a[4]); break;")
    return "\n".join(cases)


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine")
    import emu_launch

    src = _PROGRAM.replace("CASES", _cases())
    src = src.replace("ALIGN_THREADS", str(ALIGN_THREADS)).replace("ROW_THREADS", str(ROW_THREADS))
    exe = emu_launch.build(src, str(tmp_path_factory.mktemp("moe_emu") / "moe_route_emu"))

    def run(which, args, *arrays):
        data = b"".join(a.contiguous().numpy().tobytes() for a in arrays)
        p = subprocess.run([str(exe), str(which)] + [str(int(v)) for v in args], input=data, capture_output=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout

    return run


ALIGN_CASES = [  # (tokens, topk, experts, bt, expert parallel)
    (1, 8, 64, 16, False), (1, 2, 8, 64, False), (3, 8, 256, 16, False), (17, 6, 60, 32, False),
    (64, 8, 128, 16, True), (100, 2, 8, 128, False), (257, 4, 32, 64, True), (1024, 8, 256, 128, False),
    (5, 1, 1, 16, False), (9, 8, 33, 8, True), (6, 4, 3, 16, False),   # the last: topk > E, repeated experts
]


@pytest.mark.parametrize("case", ALIGN_CASES, ids=[f"T{c[0]}k{c[1]}E{c[2]}bt{c[3]}{'ep' if c[4] else ''}"
                                                   for c in ALIGN_CASES])
@pytest.mark.parametrize("id_dtype", [torch.int32, torch.int64])
def test_align_is_moe_routing(emu, case, id_dtype):
    t, topk, e, bt, ep = case
    g = torch.Generator().manual_seed(t * 31 + e)
    emap = None
    if ep:
        # global experts 2E, this rank holds a random half; some ids are off-rank (-1 after the map)
        glob = 2 * e
        perm = torch.randperm(glob, generator=g)
        emap = torch.full((glob,), -1, dtype=torch.int32)
        emap[perm[:e]] = torch.arange(e, dtype=torch.int32)
        ids = torch.stack([torch.randperm(glob, generator=g)[:topk] for _ in range(t)])
    else:
        ids = torch.stack([torch.randperm(e, generator=g)[:topk] for _ in range(t)]) if topk <= e else \
            torch.randint(0, e, (t, topk), generator=g)
    ids = ids.to(id_dtype)
    s = t * topk
    tiles = moe_max_tiles(s, e, bt)
    want_slots, want_tiles = moe_routing(ids, e, bt, emap)
    out = emu(0 if id_dtype == torch.int32 else 1, [s, e, bt, tiles, 0 if emap is None else emap.numel()],
              ids.to(torch.int64), *([] if emap is None else [emap]))
    got = torch.frombuffer(bytearray(out), dtype=torch.int32)
    rows = tiles * bt
    slots, tile_e, slot_row = got[:rows], got[rows:rows + tiles], got[rows + tiles:]
    assert torch.equal(slots.long(), want_slots), "sorted_slots differ from moe_routing"
    assert torch.equal(tile_e, want_tiles), "tile_expert differs from moe_routing"
    # slot_row is the inverse of sorted_slots on the placed slots, -1 for the dropped
    inv = torch.full((s,), -1, dtype=torch.int32)
    placed = want_slots < s
    inv[want_slots[placed]] = torch.nonzero(placed).flatten().to(torch.int32)
    assert torch.equal(slot_row, inv)
    assert align_smem_bytes(s, e) <= 48 * 1024 or s > 8192


@pytest.mark.parametrize("gi", range(len(GATHERS)))
@pytest.mark.parametrize("w_in", [False, True])
def test_gather_is_the_torch_gather(emu, gi, w_in):
    tin, dt = GATHERS[gi]
    g = torch.Generator().manual_seed(gi)
    for t, topk, e, h, ldx, k8, bt in ((1, 8, 64, 72, 72, 72, 16), (17, 4, 8, 200, 208, 200, 32),
                                        (33, 2, 5, 130, 130, 136, 64)):
        ids = torch.randint(0, e, (t, topk), generator=g)
        slots, _ = moe_routing(ids, e, bt)
        x = (torch.randn(t, ldx, generator=g) * 3).to(tin)
        w = torch.rand(t, topk, generator=g)
        s = t * topk
        out = emu(10 + 2 * gi + int(w_in), [t, topk, h, ldx, k8, slots.numel()], x.float(), slots.to(torch.int32), w)
        got = torch.frombuffer(bytearray(out), dtype=torch.float32).reshape(-1, k8)
        # FusedMoeGemm's torch path
        xv = x[:, :h].to(dt)
        x_ext = torch.cat([xv, xv.new_zeros((1, h))])
        xs = x_ext.index_select(0, slots // topk)
        if w_in:
            w_ext = torch.cat([w.reshape(-1), torch.zeros(1)])
            xs = (xs.float() * w_ext.index_select(0, slots).unsqueeze(1)).to(dt)
        xs = torch.nn.functional.pad(xs, (0, k8 - h)).float()
        assert torch.equal(got, xs), f"T={t} h={h} k8={k8}"
        assert s == t * topk


_ACT_NAMES = {c: n for n, (c, _) in ACTIVATIONS.items()}


@pytest.mark.parametrize("code", sorted(_ACT_NAMES))
def test_activation_matches_activation_fn(emu, code):
    name = _ACT_NAMES[code]
    gated = ACTIVATIONS[name][1]
    g = torch.Generator().manual_seed(code)
    for rows, n13, pad in ((16, 256, 0), (7, 96, 8)):
        n_out = n13 // 2 if gated else n13
        lda = n_out + pad
        h1 = (torch.randn(rows, n13, generator=g) * 4).to(torch.bfloat16)
        kw = {"alpha": 1.702, "limit": 7.0} if name == "swigluoai" else {}
        out = emu(20 + code, [rows, n13, n_out, lda, 1702, 7000], h1.float())
        got = torch.frombuffer(bytearray(out), dtype=torch.float32).reshape(rows, lda)
        # the reference in float64 (torch's vectorized CPU gelu is itself a few fp32 ulps off its scalar path)
        want = activation_fn(name, h1.double(), **kw).to(torch.bfloat16).float()
        assert torch.equal(got[:, n_out:], torch.zeros(rows, pad))
        # the kernel's fp32 math vs float64: at most one bf16 ulp apart, rarely (plus a small absolute slack where
        # 1 + tanh / 1 + erf cancel for very negative gates: values ~1e-6)
        diff = (got[:, :n_out] - want).abs()
        ulp = want.abs() * 2.0 ** -7 + 2.0 ** -16
        assert bool((diff <= ulp).all()), f"{name}: max diff {diff.max().item()}"
        off = diff > 2.0 ** -16
        assert off.float().mean().item() < 0.02, f"{name}: {off.sum().item()} values off by an ulp"


def test_activation_fp16(emu):
    h1 = (torch.randn(9, 64) * 3).to(torch.float16)
    out = emu(30, [9, 64, 32, 40, 0, 0], h1.float())
    got = torch.frombuffer(bytearray(out), dtype=torch.float32).reshape(9, 40)
    want = activation_fn("silu", h1.float()).to(torch.float16).float()
    assert torch.allclose(got[:, :32], want, rtol=2 ** -10, atol=0) and not got[:, 32:].any()


@pytest.mark.parametrize("weighted", [True, False])
def test_combine_is_the_weighted_index_add(emu, weighted):
    g = torch.Generator().manual_seed(int(weighted))
    for t, topk, e, n, bt, ep in ((1, 8, 64, 96, 16, False), (19, 4, 8, 200, 32, True), (64, 2, 16, 64, 64, False)):
        ids = torch.randint(0, e, (t, topk), generator=g)
        emap = None
        if ep:   # half the experts off this rank: their slots are dropped
            emap = torch.where(torch.arange(e) % 2 == 0, torch.arange(e) // 2, torch.full((e,), -1))
            e_local = (e + 1) // 2
        else:
            e_local = e
        slots, _ = moe_routing(ids, e_local, bt, emap)
        rows = slots.numel()
        s = t * topk
        o = (torch.randn(rows, n, generator=g)).to(torch.bfloat16)
        w = torch.rand(t, topk, generator=g)
        slot_row = torch.full((s,), -1, dtype=torch.int32)
        placed = slots < s
        slot_row[slots[placed]] = torch.nonzero(placed).flatten().to(torch.int32)
        out = emu(40 if weighted else 41, [rows, n, t, topk, n], o.float(), slot_row, w)
        got = torch.frombuffer(bytearray(out), dtype=torch.float32).reshape(t, n)
        # FusedMoeGemm's torch path
        w_ext = torch.cat([w.reshape(-1), torch.zeros(1)])
        of = o.float()
        if weighted:
            of = of * w_ext.index_select(0, slots).unsqueeze(1)
        ref = torch.zeros(t + 1, n)
        ref.index_add_(0, slots // topk, of)
        want = ref[:t].to(torch.bfloat16).float()
        diff = (got - want).abs()
        assert bool((diff <= want.abs() * 2 ** -7 + 1e-30).all()), f"max diff {diff.max().item()}"


@pytest.mark.parametrize("arch", ARCHS)
def test_route_kernels_compile(arch, tmp_path):
    cache = os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path / "jit")
    specs = route_specs(torch.float16, arch)
    if arch != "sm_75":
        specs += route_specs(torch.bfloat16, arch)
    arts = compile_many(specs, cache_dir=cache)
    assert len(arts) == len(specs) and all(len(a.cubin) > 500 for a in arts)


def test_route_kernels_reject_bad_tensors(emulated):
    """Every MoeRouteKernels method checks what it hands a kernel: device, dtype, shape -- named in the error."""
    from vllm_humming.desc import DescError
    from vllm_humming.ops.moe_route import MoeRouteKernels

    k = MoeRouteKernels(torch.bfloat16, "cpu", name="bad")
    ids = torch.randint(0, 8, (3, 2))
    with pytest.raises(DescError, match="'bad'.*topk_ids must be"):
        k.align(ids.float(), 8, 16, moe_max_tiles(6, 8, 16))
    with pytest.raises(DescError, match="expert_map must be"):
        k.align(ids, 8, 16, moe_max_tiles(6, 8, 16), expert_map=torch.zeros(8))
    slots, tiles, srow = k.align(ids, 8, 16, moe_max_tiles(6, 8, 16))
    with pytest.raises(DescError, match="sorted_slots must be torch.int32"):
        k.gather(torch.randn(3, 64), slots.long(), None, 2, 64, False)
    with pytest.raises(DescError, match="x must be a 2-D tensor"):
        k.gather(torch.randn(3, 64, 1), slots, None, 2, 64, False)
    with pytest.raises(DescError, match="first GEMM's output must be torch.bfloat16"):
        k.activation(torch.randn(slots.numel(), 64), 0, 32, 32)
    o = torch.randn(slots.numel(), 64).to(torch.bfloat16)
    with pytest.raises(DescError, match="topk_weights must be torch.float32"):
        k.combine(o, srow, torch.rand(3, 2).double(), 3, 2, True)
    with pytest.raises(DescError, match="3 x 2 slot rows"):
        k.combine(o, srow[:4], torch.rand(3, 2), 3, 2, True)
    out = k.combine(o, srow, torch.rand(3, 2), 3, 2, True)
    assert out.shape == (3, 64) and torch.isfinite(out.float()).all()
