"""The WnA16 GEMM kernels themselves, run on the CPU emulation of the CUDA thread model (tests/host/cuda_emu.h:
std::threads per CUDA thread, ldmatrix / mma.sync / lop3 emulated at the fragment level), against the fp32 reference.

No GPU needed: the mma.sync kernels (cp.async mainloop and the direct decode kernel, split-K with the ticket
reduction, the MoE expert-indexed entries) are checked numerically in CI, not only compiled.  The emulation runs
blocks one after another, so split-K plans run with one reducer (several reducers wait on each other's tickets);
the direct wgmma decode runs on the emulation's synchronous wgmma (register A, descriptor B: session 55); the TMA /
bulk-copy / cluster kernels use PTX the emulation does not model and stay GPU-only (tests/test_gemm_gpu.py and
friends).  The tensor-core sums are emulated in double, so results match the reference to
the bf16 / fp16 rounding, not bit for bit with an H200.
"""

import os
import shutil
import sys

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops import gemm as G
from vllm_humming.ops.moe_gemm import moe_max_tiles, moe_routing
from vllm_humming.ops.plan import FLAG_REDUCERS_SHIFT, kernel_fit, plan_launches
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import arch_info, choose_kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "host"))

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("emu_gemm"))


def test_emulated_cp_async_lands_only_when_its_group_is_retired(tmp_path):
    """The emulation's cp.async (tests/host/cuda_emu.h) keeps the hardware's promise and no more: a copy's bytes land
    in shared memory at the cp.async.wait_group that retires its commit group -- not at issue, not at a wait before
    its commit, and wait_group N leaves the N newest groups in flight.  The decode kernel's pass over x once waited
    without committing the scale copies issued before it (session 38); this is what lets CPU tests see such bugs."""
    import emu_launch

    src = r"""#define HUMMING_EMULATE 1
#include "cuda_emu.h"
#include "humming/copy.cuh"
#include <cstdio>
int main() {
  alignas(16) unsigned char g[3][16], s[3][16];
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 16; ++j) { g[i][j] = (unsigned char)(1 + i); s[i][j] = 0xA5; }
  int seen[6];
  emu::launch(1, 32, [&] {
    if (threadIdx.x != 0) return;
    humming::copy16_async(s[0], g[0], true);
    humming::cp_async_wait<0>();                 // not committed yet: stays in flight
    seen[0] = s[0][0];
    humming::cp_async_commit();                  // group A = {0}
    humming::copy16_async(s[1], g[1], true);
    humming::cp_async_commit();                  // group B = {1}
    humming::copy16_async(s[2], g[2], false);    // zero-fill, uncommitted
    seen[1] = s[0][0];
    humming::cp_async_wait<1>();                 // retires A only
    seen[2] = s[0][0]; seen[3] = s[1][0];
    humming::cp_async_commit();                  // group C = {2}
    humming::cp_async_wait<0>();                 // retires B and C
    seen[4] = s[1][0]; seen[5] = s[2][0];
  });
  for (int i = 0; i < 6; ++i) printf("%d ", seen[i]);
  return 0;
}
"""
    exe = emu_launch.build(src, str(tmp_path / "cp_async_emu"))
    import subprocess
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    assert [int(v) for v in out] == [0xA5, 0xA5, 1, 0xA5, 2, 0]


def _layer(qw, dtype):
    """GemmLayer's load-time repack on the CPU (the part of GemmLayer that needs no GPU)."""
    layer = object.__new__(G.GemmLayer)
    layer.name, layer.desc, layer.dtype = qw.name, qw.desc, dtype
    layer.n, layer.k = qw.shape
    layer.device = torch.device("cpu")
    layer.fp = G.format_params(qw.desc)
    layer._repack(qw)
    return layer


def _run(workdir, layer, choice, m, sms, arch="sm_80", experts=None):
    """Launch ``choice`` on the emulation for M rows of x with the planner's grid (sms SMs: more SMs -> more K
    splits), one split-K reducer.  ``experts``: (tile_expert, per-expert strides) for the expert-indexed entry."""
    import emu_launch

    fp = layer.fp
    spec = G._spec(fp, choice, layer.dtype, arch, str(layer.desc), experts=experts is not None)
    kernel = emu_launch.EmuKernel(spec, workdir)
    info = arch_info(arch, sms)
    fit = kernel_fit(choice, G.stage_smem(choice, fp), 128, 0, info)
    lp = plan_launches(m, layer.n16, layer.k64, fp.bits, fp.group, fp.zero_mode, info, lambda tag: fit)
    g = torch.Generator().manual_seed(m * 7 + sms)
    x = torch.randn(m, layer.k8, generator=g).to(layer.dtype)
    y = torch.full((m, layer.n), float("nan"), dtype=layer.dtype)
    tickets = torch.zeros(4096, dtype=torch.int32)
    types = G._ARG_TYPES + (("ptr", "i64", "i64", "i32", "i32") if experts is not None else ())
    launcher = emu_launch.EmuLauncher(kernel, types)
    splits = 1
    for pl in lp.launches:
        ws = torch.zeros(max(1, pl.ws_numel), dtype=torch.float32)
        flags = (pl.flags & ~(0xF << FLAG_REDUCERS_SHIFT)) | (1 << FLAG_REDUCERS_SHIFT)
        extra = () if experts is None else experts
        launcher.launch(pl.grid, pl.choice.threads, pl.smem, None, x, layer.w, layer.gscale, layer.gzero,
                        layer.chscale, layer.tscale, layer.bias, y, ws, tickets, m, layer.n, layer.k8, layer.n16,
                        layer.k64, pl.atoms_per_split, flags, *extra)
        splits = max(splits, pl.grid[2] if len(pl.grid) > 2 else 1)
    assert not bool(tickets.any()), "the split-K tickets must be back at zero after the call"
    return x, y, splits


CASES = [  # (description, M, N, K, dtype, SMs)
    ("w:uint4b8,s:g128:bfloat16", 1, 256, 512, torch.bfloat16, 1),
    ("w:uint4b8,s:g128:bfloat16", 17, 256, 2048, torch.bfloat16, 8),        # split-K, ticket reduction
    ("w:uint4,s:g128:bfloat16,zp:int", 64, 128, 1024, torch.bfloat16, 1),
    ("w:uint4,s:g64:float16,zp:float", 17, 256, 512, torch.float16, 1),
    ("w:uint3b4,s:g128:bfloat16", 5, 128, 384, torch.bfloat16, 1),
    ("w:uint8b128,s:channel:bfloat16", 9, 200, 520, torch.bfloat16, 1),      # N, K not multiples of 64 / 128
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", 33, 256, 512, torch.bfloat16, 1),
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", 3, 128, 512, torch.float16, 1),
    ("w:float8_e4m3fn,s:channel:float32", 100, 200, 1088, torch.bfloat16, 1),
    ("w:float6_e3m2,s:g32:bfloat16", 16, 128, 256, torch.bfloat16, 1),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-M{c[1]}-{c[2]}x{c[3]}-{str(c[4])[6:]}-sm{c[5]}" for c in CASES])
def test_cp_async_kernel_on_the_emulation(workdir, case):
    desc_s, m, n, k, dtype, sms = case
    desc = WeightDesc.parse(desc_s)
    g = torch.Generator().manual_seed(n + k)
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, dtype)
    fp = layer.fp
    choice = choose_kernel("sm_80", m, fp.bits, fp.group, fp.zero_mode, sms, k=k, n=n,
                           float_family=fp.family == "float", pipeline="cp_async")
    x, y, splits = _run(workdir, layer, choice, m, sms)
    assert not bool(torch.isnan(y).any()), f"{choice.short()}: unwritten outputs"
    ref = reference_gemm(x[:, :k].float(), qw)
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{desc_s} {choice.short()} M={m}: rel err {rel:.3e}"
    if sms > 1:
        assert splits > 1, "the case meant to cover split-K planned a single split"


def test_direct_decode_kernel_on_the_emulation(workdir):
    """The mma.sync direct kernel (packed weights global -> registers, x staged once per block) at decode sizes."""
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    g = torch.Generator().manual_seed(3)
    qw = quantize_weight(torch.randn(256, 1024, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, torch.bfloat16)
    fp = layer.fp
    ran = 0
    for m in (1, 8, 16):
        choice = choose_kernel("sm_80", m, fp.bits, fp.group, fp.zero_mode, 4, k=1024, n=256, pipeline="direct")
        assert choice.direct and choice.mma == "sync"
        x, y, _ = _run(workdir, layer, choice, m, 4)
        ref = reference_gemm(x[:, :1024].float(), qw)
        rel = ((y.float() - ref).norm() / ref.norm()).item()
        assert not bool(torch.isnan(y).any()) and rel < 1.2e-2, f"{choice.short()} M={m}: {rel:.3e}"
        ran += 1
    assert ran == 3


PREFETCH_CASES = [  # (description, dtype, choice, prefetch budget in bytes, M, N, K)
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt8_wn3_tm1_wk4_ak64_s4_direct", 12288, 1, 200, 1024),
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt8_wn3_tm1_wk4_ak64_s4_direct", 1 << 20, 5, 256, 1024),
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt8_wn1_tm3_wk8_ak64_s2_direct", 1 << 20, 1, 96, 4032),
    ("w:uint3,s:g64:bfloat16,zp:int", torch.float16, "bt8_wn2_tm2_wk2_ak64_s3_direct", 8192, 3, 136, 960),
    ("w:uint8b128,s:channel:bfloat16", torch.bfloat16, "bt16_wn2_tm1_wk2_ak64_s4_direct", 16384, 16, 64, 520),
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", torch.bfloat16, "bt8_wn2_tm1_wk2_ak64_s4_direct", 1 << 20, 2, 64, 512),
    # the smem ring (HUMMING_DIRECT_SMEM_RING): depth 2 / 4 positions over longer sequences, a 3-bit cross-lane case
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt8_wn3_tm1_wk4_ak64_s4_direct", -12288, 1, 200, 4032),
    ("w:uint3,s:g64:bfloat16,zp:int", torch.float16, "bt8_wn2_tm2_wk2_ak64_s3_direct", -12288, 3, 136, 960),
    ("w:uint8b128,s:channel:bfloat16", torch.bfloat16, "bt16_wn2_tm1_wk2_ak64_s4_direct", -8192, 16, 64, 1544),
]


@pytest.mark.parametrize("case", PREFETCH_CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}-M{c[4]}" for c in PREFETCH_CASES])
def test_direct_smem_prefetch_experiment_on_the_emulation(workdir, monkeypatch, case):
    """HUMMING_DIRECT_SMEM_PREFETCH (experiment): each warp's first atoms staged in shared memory before the grid
    wait, the rest through the register ring -- partial and whole prefetches, K / N tails, zero points, floats; with
    HUMMING_DIRECT_SMEM_RING every atom through a warp-private shared-memory ring."""
    desc_s, dtype, short, budget, m, n, k = case
    ring = ",HUMMING_DIRECT_SMEM_RING" if budget < 0 else ""   # (a negative budget: the ring mode)
    budget = abs(budget)
    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", f"HUMMING_DIRECT_SMEM_PREFETCH={budget}{ring}")
    from vllm_humming.tuning.heuristics import KernelChoice
    desc = WeightDesc.parse(desc_s)
    g = torch.Generator().manual_seed(n * 3 + k)
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, dtype)
    choice = KernelChoice.parse(short)
    per = -(-k // 64)
    assert choice.direct_prefetch_atoms(per, layer.fp.bits, layer.fp.group) > 0, "the case must prefetch something"
    x, y, _ = _run(workdir, layer, choice, m, 1)
    assert not bool(torch.isnan(y).any()), f"{short}: unwritten outputs"
    ref = reference_gemm(x[:, :k].float(), qw)
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{desc_s} {short} prefetch {budget} M={m}: rel err {rel:.3e}"


def _check_wgmma_case(workdir, monkeypatch, case, seed_mul):
    """One (description, dtype, choice, M, N, K, forced splits) case of an sm_90a wgmma kernel on the emulation, one
    split-K reducer and the ticket end, against the fp32 reference with NaN-poisoned outputs."""
    from vllm_humming.tuning.heuristics import KernelChoice

    desc_s, dtype, short, m, n, k, splits = case
    monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "0")   # (the polled end needs its blocks resident together)
    desc = WeightDesc.parse(desc_s)
    g = torch.Generator().manual_seed(n * seed_mul + k)
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name="emu_wgmma")
    layer = _layer(qw, dtype)
    x, y, got_splits = _run(workdir, layer, KernelChoice.parse(short), m, 132, arch="sm_90a")
    assert got_splits == splits
    assert not bool(torch.isnan(y).any()), f"{short}: unwritten outputs"
    ref = reference_gemm(x[:, :k].float(), qw)
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{desc_s} {short} M={m} splits={splits}: rel err {rel:.3e}"


WGMMA_DIRECT_CASES = [  # (description, dtype, choice, M, N, K, forced splits)
    # session 55's K-warpgroups: 17 atoms over 4 warpgroups (5 / 4 / 4 / 4 positions), odd N
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma", 16, 200, 1088, 1),
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma", 9, 128, 2048, 4),
    ("w:uint4,s:g64:float16,zp:int", torch.float16, "bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma", 5, 136, 960, 1),
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", torch.bfloat16, "bt8_wn4_tm1_wk2_ak256_s4_direct_wgmma", 3, 64, 512, 1),
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt16_wn4_tm2_wk2_ak256_s4_direct_wgmma", 17, 200, 512, 1),
    # the plans' own 16-token direct wgmma tiles (no K-warpgroups), split-K with the ticket end
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma", 16, 256, 1024, 2),
    ("w:uint3b4,s:g128:bfloat16", torch.bfloat16, "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma", 12, 256, 768, 3),
    # the 1-8-token narrow default (DECODE_WGMMA_PAIR) and the 17-32-token direct tile
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma", 1, 136, 1024, 2),
    ("w:uint4,s:g128:float16,zp:float", torch.float16, "bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma", 27, 128, 640, 1),
]


@pytest.mark.parametrize("case", WGMMA_DIRECT_CASES,
                         ids=[f"{c[2]}-M{c[3]}-{c[4]}x{c[5]}-s{c[6]}" for c in WGMMA_DIRECT_CASES])
def test_direct_wgmma_kernel_on_the_emulation(workdir, monkeypatch, case):
    """The direct wgmma decode (sm_90a) on the emulation's wgmma (cuda_emu.h emu::wgmma_rs: per-warp m16n8k16
    products reading the 128-byte-swizzled x tiles through the descriptor's address): the K-warpgroups' interleaved
    atom columns and their shared-memory sum, warpgroups with unequal position counts, K splits after the in-block
    sum (ticket end, one reducer: the emulation runs blocks one after another), zero points, fp16, MXFP4, two token
    tiles."""
    _check_wgmma_case(workdir, monkeypatch, case, seed_mul=5)


STAGED_WGMMA_CASES = [  # (description, dtype, choice, M, N, K, forced splits)
    # session 56's staged K-warpgroups (warpgroup row wk takes atom wk of every two-atom stage): odd stage counts,
    # a K tail inside the last stage, split-K after the in-block sum, zero points, fp16, two warpgroups along N
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt64_wn4_tm1_wk2_ak2_s4_wgmma", 64, 128, 1088, 1),
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt64_wn4_tm1_wk2_ak2_s4_wgmma", 37, 200, 2048, 3),
    ("w:uint4,s:g64:float16,zp:int", torch.float16, "bt64_wn8_tm1_wk2_ak2_s4_wgmma", 17, 256, 960, 1),
    ("w:uint3b4,s:g128:bfloat16", torch.bfloat16, "bt32_wn4_tm1_wk2_ak2_s3_wgmma", 20, 64, 1536, 2),
    # four-atom stages: two atoms per warpgroup row (fragment buffers per atom) or one with four rows; K = 1088 (17
    # atoms: the last stage holds one real atom), two scale groups per stage
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt64_wn4_tm1_wk2_ak4_s3_wgmma", 50, 136, 1088, 1),
    ("w:uint4,s:g64:float16,zp:int", torch.float16, "bt64_wn4_tm1_wk2_ak4_s2_wgmma", 64, 128, 2048, 2),
    ("w:float4_e2m1,s:g32:float8_e8m0fnu", torch.bfloat16, "bt64_wn4_tm1_wk4_ak4_s3_wgmma", 33, 64, 1280, 1),
    # the plans' own staged tile without K-warpgroups (cp.async x here; the plans' TMA x is GPU-only)
    ("w:uint4b8,s:g128:bfloat16", torch.bfloat16, "bt64_wn8_tm1_wk1_ak2_s4_wgmma", 64, 256, 1024, 2),
]


@pytest.mark.parametrize("case", STAGED_WGMMA_CASES,
                         ids=[f"{c[2]}-M{c[3]}-{c[4]}x{c[5]}-s{c[6]}" for c in STAGED_WGMMA_CASES])
def test_staged_wgmma_kernel_on_the_emulation(workdir, monkeypatch, case):
    """The cp.async wgmma kernel (gemm_wna16.cuh, sm_90a) on the emulation's wgmma: the staged K-warpgroups (warpgroup
    row wk consumes atoms wk, wk + warps_k, ... of every stage into its own accumulators, summed in shared memory
    before the split-K end) against the fp32 reference, NaN-poisoned outputs."""
    _check_wgmma_case(workdir, monkeypatch, case, seed_mul=3)


def test_moe_expert_entry_on_the_emulation(workdir):
    """The expert-indexed entry (ops/moe_gemm.py): each token tile reads its expert and offsets every weight
    tensor by that expert's strides; padding tiles leave their rows untouched."""
    desc = WeightDesc.parse("w:uint4,s:g128:bfloat16,zp:int")
    experts, n, k, tokens, topk = 4, 128, 256, 5, 2
    g = torch.Generator().manual_seed(9)
    qws = [quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name=f"e{i}") for i in range(experts)]
    layers = [_layer(q, torch.bfloat16) for q in qws]
    stacked = object.__new__(G.GemmLayer)
    stacked.__dict__.update(layers[0].__dict__)
    for attr in ("w", "gscale", "gzero"):
        setattr(stacked, attr, torch.stack([getattr(lay, attr) for lay in layers]).contiguous())
    strides = (layers[0].w.numel(), layers[0].gscale.numel(), 0, 0)
    fp = stacked.fp
    choice = choose_kernel("sm_80", 8, fp.bits, fp.group, fp.zero_mode, 1, k=k, n=n, pipeline="cp_async")
    ids = torch.stack([torch.randperm(experts, generator=g)[:topk] for _ in range(tokens)])
    slots, tiles = moe_routing(ids, experts, choice.bt)
    rows = slots.numel()
    assert rows == moe_max_tiles(tokens * topk, experts, choice.bt) * choice.bt

    import emu_launch

    spec = G._spec(fp, choice, torch.bfloat16, "sm_80", str(desc), experts=True)
    kernel = emu_launch.EmuKernel(spec, workdir)
    info = arch_info("sm_80", 1)
    fit = kernel_fit(choice, G.stage_smem(choice, fp), 128, 0, info)
    lp = plan_launches(rows, stacked.n16, stacked.k64, fp.bits, fp.group, fp.zero_mode, info, lambda tag: fit)
    x = torch.randn(tokens, k, generator=g).to(torch.bfloat16)
    xs = torch.cat([x, x.new_zeros(1, k)]).index_select(0, slots // topk).contiguous()
    y = torch.full((rows, n), float("nan"), dtype=torch.bfloat16)
    launcher = emu_launch.EmuLauncher(kernel, G._ARG_TYPES + ("ptr", "i64", "i64", "i32", "i32"))
    for pl in lp.launches:
        ws = torch.zeros(max(1, pl.ws_numel), dtype=torch.float32)
        launcher.launch(pl.grid, pl.choice.threads, pl.smem, None, xs, stacked.w, stacked.gscale, stacked.gzero,
                        None, None, None, y, ws, torch.zeros(4096, dtype=torch.int32), rows, n, stacked.k8,
                        stacked.n16, stacked.k64, pl.atoms_per_split,
                        (pl.flags & ~(0xF << FLAG_REDUCERS_SHIFT)) | (1 << FLAG_REDUCERS_SHIFT), tiles, *strides)
    row_expert = tiles.repeat_interleave(choice.bt).long()
    real = row_expert >= 0
    assert bool(torch.isnan(y[~real]).all()), "padding tiles must not be written"
    assert not bool(torch.isnan(y[real]).any())
    for r in torch.nonzero(real).flatten().tolist():
        e = int(row_expert[r])
        ref = reference_gemm(xs[r:r + 1].float(), qws[e])
        rel = ((y[r].float() - ref[0]).norm() / ref.norm().clamp(min=1e-6)).item()
        assert rel < 1.5e-2, f"row {r} (expert {e}): rel err {rel:.3e}"


LAYERS = [  # (weight description or named format, activation description or None, N, K, dtype)
    ("w4a16-int4-g128", None, 256, 512, torch.bfloat16),
    ("w:uint4,s:g128:float16,zp:int", None, 200, 328, torch.float16),
    ("w8a8-int8", None, 128, 256, torch.bfloat16),
    ("w8a8-fp8", None, 128, 256, torch.bfloat16),
    ("nvfp4", None, 128, 256, torch.bfloat16),
    ("w:uint4b8,s:g128:bfloat16", "a:int8,s:token:float32,dynamic", 256, 384, torch.bfloat16),
    ("w:int8,s:channel:float32", "a:int8,s:tensor:float32,static", 128, 200, torch.bfloat16),
]


@pytest.mark.parametrize("layer", LAYERS, ids=[f"{l[0]}|{l[1]}" for l in LAYERS])
def test_prepare_linear_end_to_end_on_the_emulation(emulated, layer):
    """prepare_linear -> GemmLayer / QuantActGemm -> the planner, the bound launches, the act-quant kernel and the
    GEMM kernel, all through the same Python code as on a GPU, on the CPU emulation (an sm_80-like device)."""
    from vllm_humming.desc import NAMED_FORMATS, ActDesc
    from vllm_humming.ops import humming_linear, prepare_linear
    from vllm_humming.ops.act_quant import QuantActGemm

    built = emulated
    wname, aname, n, k, dtype = layer
    if wname in NAMED_FORMATS:
        wdesc, act = NAMED_FORMATS[wname]
    else:
        wdesc = WeightDesc.parse(wname)
        act = ActDesc.parse(aname) if aname else ActDesc("float16" if dtype == torch.float16 else "bfloat16")
    g = torch.Generator().manual_seed(n * k)
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, wdesc, name=f"emu.{wname}",
                         bias=torch.randn(n, generator=g) * 0.1)
    st = None
    if act.quantized and not act.dynamic:
        st = torch.tensor([0.0371])
    elif act.scale2 is not None:
        st = torch.tensor([1.0 / 448 / 6 * 3])
    pl = prepare_linear(qw, act if act.quantized else None, out_dtype=dtype, static_act_scale=st)
    assert pl.backend == "kernel", pl.fallback_reason
    assert isinstance(pl.kernel, QuantActGemm) == act.quantized
    before = set(built)
    for m in (1, 17, 64):
        x = torch.randn(m, k, generator=g).to(dtype)
        out = torch.full((m, n), float("nan"), dtype=dtype)
        y = pl.kernel(x, out=out)
        assert not bool(torch.isnan(y).any()), f"M={m}: unwritten outputs"
        ref = reference_gemm(x.float(), qw, act if act.quantized else None, pl.static_act_scale)
        rel = ((y.float() - ref).norm() / ref.norm()).item()
        assert rel < 1.5e-2, f"{wname} {aname} M={m}: rel err {rel:.3e} ({pl.kernel.plan_info.get(m)})"
        assert torch.equal(humming_linear(x, pl), y)
    assert any(name.startswith("humming_wna16") for name in built)
    # what warmup() / compile_in_background() compile covers every GEMM kernel these calls built
    gemm_built = {name for name in built if name not in before and name.startswith("humming_wna16")}
    assert gemm_built <= {s.name for s in pl.kernel.all_specs()}, gemm_built


@pytest.mark.parametrize("activation", ["silu", "swigluoai"])
def test_fused_moe_end_to_end_on_the_emulation(emulated, activation):
    """A whole MoE layer on the kernel path -- the route kernels and both expert-indexed GEMMs, planned and bound by
    ExpertGemm as on a GPU -- on the CPU emulation, against the plain-torch experts (expert parallelism and router
    weights on the input included)."""
    from vllm_humming.moe.fallback import torch_moe_fallback
    from vllm_humming.ops.moe_gemm import FusedMoeGemm

    built = emulated
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    experts, topk, hidden, inter = 6, 2, 256, 128
    g = torch.Generator().manual_seed(len(activation))
    q13 = [quantize_weight(torch.randn(2 * inter, hidden, generator=g) * 0.05, desc, name=f"w13[{e}]")
           for e in range(experts)]
    q2 = [quantize_weight(torch.randn(hidden, inter, generator=g) * 0.05, desc, name=f"w2[{e}]")
          for e in range(experts)]
    d13 = torch.stack([q.dequantize(torch.float32) for q in q13])
    d2 = torch.stack([q.dequantize(torch.float32) for q in q2])
    moe = FusedMoeGemm(q13, q2, torch.bfloat16, name="emu.moe")
    glob = 2 * experts
    emap = torch.full((glob,), -1, dtype=torch.int32)
    emap[torch.randperm(glob, generator=g)[:experts]] = torch.arange(experts, dtype=torch.int32)
    for t, on_input, ep in ((1, False, False), (7, True, False), (9, False, True)):
        x = torch.randn(t, hidden, generator=g).to(torch.bfloat16)
        ids = torch.stack([torch.randperm(glob if ep else experts, generator=g)[:topk] for _ in range(t)])
        wts = torch.softmax(torch.randn(t, topk, generator=g), -1)
        kw = dict(activation=activation, expert_map=emap if ep else None, apply_router_weight_on_input=on_input)
        got = moe(x, wts, ids.to(torch.int32), **kw)
        want = torch_moe_fallback(x, d13, d2, wts, ids, **kw)
        err = (got.float() - want.float()).abs().max().item()
        assert err <= 2.5e-2 * (want.float().abs().max().item() + 1e-6), (t, on_input, ep, err)
    assert moe._route is not None
    kinds = {name.split("_")[1] for name in built}
    assert "moe" in kinds


def _sm80_cases():
    """Every choice the heuristics can emit on sm_80 for int4 g128 (cp.async tiles of 8-64 tokens, the direct decode
    kernel with and without the x16 staging), and one cp.async + one direct choice for every other family of
    tests/test_gemm_compile.py's FAMILIES: the kernels CI compiles, run."""
    from test_gemm_compile import FAMILIES
    from vllm_humming.tuning.heuristics import all_choices

    out = []
    for i, d in enumerate(FAMILIES):
        fp = G.format_params(WeightDesc.parse(d))
        cs = all_choices("sm_80", fp.bits, fp.group, fp.zero_mode, float_family=fp.family == "float")
        if i:
            cs = [next(c for c in cs if not c.direct)] + [c for c in cs if c.direct][:1]
        out += [(d, c) for c in cs]
    return out


SM80_CASES = _sm80_cases()


@pytest.mark.parametrize("case", SM80_CASES, ids=[f"{d}-{c.short()}" for d, c in SM80_CASES])
def test_every_sm80_choice_runs_on_the_emulation(workdir, case):
    desc_s, choice = case
    desc = WeightDesc.parse(desc_s)
    m = min(17, choice.bt) if not choice.direct else min(choice.bt, 5)
    n, k = 256, 512
    g = torch.Generator().manual_seed(choice.bt * 131 + len(desc_s))
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, torch.bfloat16)
    x, y, _ = _run(workdir, layer, choice, m, 1)
    assert not bool(torch.isnan(y).any()), f"{choice.short()}: unwritten outputs"
    ref = reference_gemm(x[:, :k].float(), qw)
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{desc_s} {choice.short()} M={m}: rel err {rel:.3e}"


def test_prefill_path_on_the_emulation(monkeypatch, emulated):
    """From prefill_m tokens on a layer expands its weight with the dequant kernel (dequant_weight.cuh) and runs the
    matmul on the expanded matrix: that kernel on the emulation, whole and band by band."""
    from vllm_humming.ops import prepare_linear

    for desc_s in ("w:uint4,s:g128:bfloat16,zp:int", "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32",
                   "w:uint3b4,s:g64:bfloat16"):
        desc = WeightDesc.parse(desc_s)
        g = torch.Generator().manual_seed(len(desc_s))
        qw = quantize_weight(torch.randn(200, 320, generator=g) * 0.05, desc, name="emu.prefill")
        pl = prepare_linear(qw)
        assert pl.backend == "kernel", pl.fallback_reason
        pl.kernel.prefill_m = 16
        for chunk in ("0", "0.03"):          # one band, then ~16-row bands
            monkeypatch.setenv("HUMMING_PREFILL_CHUNK_MB", chunk)
            x = torch.randn(40, 320, generator=g).to(torch.bfloat16)
            assert pl.kernel.uses_prefill_path(40)
            y = pl.kernel(x)
            ref = reference_gemm(x.float(), qw)
            rel = ((y.float() - ref).norm() / ref.norm()).item()
            assert rel < 1.2e-2, f"{desc_s} chunk {chunk} MB: rel err {rel:.3e}"


def _other_arch_cases():
    """The mma.sync choices other archs' heuristics emit for int4 g128 beyond sm_80's (fp16 on sm_75).  Their bulk
    (mbarrier) choices on sm_100a / sm_120a are not modelled by the emulation."""
    from vllm_humming.tuning.heuristics import all_choices

    seen = set(all_choices("sm_80", 4, 128, 0, float_family=False))
    out = []
    for arch in ("sm_75", "sm_86", "sm_89", "sm_100a", "sm_120a"):
        for c in all_choices(arch, 4, 128, 0, float_family=False):
            if c.bulk or c.stream_k or c.cluster or c.tma_x or c.mma != "sync":
                continue
            if c in seen and arch != "sm_75":
                continue
            seen.add(c)
            out.append((arch, c))
    return out


OTHER_ARCH_CASES = _other_arch_cases()


@pytest.mark.parametrize("case", OTHER_ARCH_CASES, ids=[f"{a}-{c.short()}" for a, c in OTHER_ARCH_CASES])
def test_other_arch_choices_run_on_the_emulation(workdir, case):
    arch, choice = case
    dtype = torch.float16 if arch == "sm_75" else torch.bfloat16
    desc = WeightDesc.parse("w:uint4b8,s:g128:float16" if dtype == torch.float16 else "w:uint4b8,s:g128:bfloat16")
    m = min(17, choice.bt) if not choice.direct else min(choice.bt, 5)
    g = torch.Generator().manual_seed(choice.bt)
    qw = quantize_weight(torch.randn(256, 512, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, dtype)
    x, y, _ = _run(workdir, layer, choice, m, 1, arch=arch)
    assert not bool(torch.isnan(y).any())
    ref = reference_gemm(x[:, :512].float(), qw)
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{arch} {choice.short()} M={m}: rel err {rel:.3e}"


ONE_TOKEN_CASES = [  # (choice, N, K, SMs: the planner's K splits follow from them)
    ("bt8_wn14_tm1_wk2_ak256_s4_x16_direct", 448, 1024, 4),        # "mid_x16": the 224-row tile, two K splits
    ("bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct", 440, 4032, 2),  # "ring_x16": the ring wraps; an N tail
]


@pytest.mark.parametrize("case", ONE_TOKEN_CASES, ids=[c[0] for c in ONE_TOKEN_CASES])
def test_one_token_tiles_on_the_emulation(workdir, case):
    """heuristics.one_token_tiles' kernels as the sm_90a plan launches them (bf16 staged as fp16, the 224-row
    tile with K splits / through its shared-memory ring) at 1 token -- and 2, beyond what the plan asks of them."""
    from vllm_humming.tuning.heuristics import KernelChoice, one_token_tiles

    short, n, k, sms = case
    choice = KernelChoice.parse(short)
    assert choice in [c for _, c in one_token_tiles(KernelChoice.parse("bt8_wn14_tm1_wk2_ak256_s4_direct"), 4, 28672,
                                                    4096, False)
                      + one_token_tiles(KernelChoice.parse("bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"), 4, 14336, 4096,
                                        False)]
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    g = torch.Generator().manual_seed(n + k)
    qw = quantize_weight(torch.randn(n, k, generator=g) * 0.05, desc, name="emu")
    layer = _layer(qw, torch.bfloat16)
    for m in (1, 2):
        x, y, splits = _run(workdir, layer, choice, m, sms, arch="sm_90a")
        assert not bool(torch.isnan(y).any()), f"{short} M={m}: unwritten outputs"
        ref = reference_gemm(x[:, :k].float(), qw)
        rel = ((y.float() - ref).norm() / ref.norm()).item()
        assert rel < 1.2e-2, f"{short} M={m}: rel err {rel:.3e}"
        assert splits == (2 if not choice.pf_ring else 1), splits
