"""The expert-indexed MoE path without a GPU (vllm_humming.ops.moe_gemm): the routing (sort by expert, per-expert
padding to token tiles, tile -> expert), the orchestration of FusedMoeGemm (gather, two GEMMs, activation, re-sort
when the two sides' tiles differ, weighted scatter) against the plain-torch fallback with torch stand-ins for the two
kernels, the kernel choice, and the expert-indexed entries compiling for every arch."""

import os

import pytest
import torch

from vllm_humming.desc import DescError, WeightDesc
from vllm_humming.jit import compile_many
from vllm_humming.moe.fallback import torch_moe_fallback
from vllm_humming.ops.gemm import _spec, format_params, kernel_source
from vllm_humming.ops.moe_gemm import (FusedMoeGemm, moe_choice, moe_max_tiles, moe_routing, moe_unsupported_reason,
                                       tokens_per_expert)
from vllm_humming.reference import quantize_weight
from vllm_humming.tuning.heuristics import KernelChoice

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]
# MoE expert shapes (N x K of one side): Qwen3-30B-A3B w13 / w2, Mixtral w13 / w2, DeepSeek-V3-like w13 / w2, small
MOE_SHAPES = [(1536, 2048), (2048, 768), (28672, 4096), (4096, 14336), (4096, 7168), (7168, 2048), (512, 7168),
              (7168, 256)]
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384]


def _ids(t, topk, experts, gen):
    """Distinct experts per token, as routers pick them."""
    return torch.stack([torch.randperm(experts, generator=gen)[:topk] for _ in range(t)]).to(torch.int32)


@pytest.mark.parametrize("bt", [8, 16, 64, 256])
def test_max_tiles_bounds_every_routing(bt):
    gen = torch.Generator().manual_seed(bt)
    for _ in range(200):
        experts = int(torch.randint(1, 300, (1,), generator=gen))
        topk = int(torch.randint(1, min(experts, 9) + 1, (1,), generator=gen))
        t = int(torch.randint(1, 300, (1,), generator=gen))
        ids = _ids(t, topk, experts, gen)
        counts = torch.bincount(ids.flatten().long(), minlength=experts)
        used = int((-(-counts // bt)).sum())
        assert used <= moe_max_tiles(t * topk, experts, bt)
    # tight: every slot on its own expert
    assert moe_max_tiles(5, 64, 8) == 5 and moe_max_tiles(64, 8, 8) == (64 + 8 * 7) // 8


@pytest.mark.parametrize("t,topk,experts,bt,ep", [(1, 8, 128, 8, False), (17, 2, 8, 16, False),
                                                   (64, 4, 64, 8, True), (257, 8, 32, 64, False),
                                                   (100, 6, 160, 16, True), (3, 1, 1, 256, False)])
def test_routing_is_a_sorted_padded_permutation(t, topk, experts, bt, ep):
    gen = torch.Generator().manual_seed(t * 31 + experts)
    if ep:
        # expert parallelism: 2x the experts globally, this rank holds the odd ones (global 2e+1 -> local e)
        glob = 2 * experts
        ids = _ids(t, topk, glob, gen)
        emap = torch.full((glob,), -1, dtype=torch.int32)
        emap[1::2] = torch.arange(experts, dtype=torch.int32)
        local = torch.where(ids % 2 == 1, ids // 2, torch.full_like(ids, -1))
    else:
        ids = _ids(t, topk, experts, gen)
        emap, local = None, ids
    slots, tiles = moe_routing(ids, experts, bt, emap)
    s = t * topk
    assert slots.dtype == torch.int64 and tiles.dtype == torch.int32
    assert slots.numel() == tiles.numel() * bt == moe_max_tiles(s, experts, bt) * bt
    flat = local.flatten().long()
    real = slots[slots < s]
    # every routed slot of this rank exactly once, no dropped slot
    want = (flat >= 0).nonzero().flatten()
    assert torch.equal(torch.sort(real).values, want)
    # each tile holds its expert's slots only (or padding), in slot order, experts ascending
    rows = tiles.repeat_interleave(bt).long()
    is_real = slots < s
    assert torch.equal(flat[slots[is_real]], rows[is_real])
    assert (rows[~is_real] >= -1).all()
    seen = rows[rows >= 0]
    assert torch.equal(seen, torch.sort(seen).values)
    for e in range(experts):
        mine = slots[is_real & (rows == e)]
        assert torch.equal(mine, torch.sort(mine).values)
    # padding tiles only after the last routed tile, and all padding
    last = int((tiles >= 0).nonzero().max()) if (tiles >= 0).any() else -1
    assert (tiles[last + 1:] == -1).all()
    assert not is_real[(last + 1) * bt:].any()
    # each expert's run is a whole number of tiles and holds ceil(count / bt) of them
    counts = torch.bincount(flat[flat >= 0], minlength=experts)
    per_tile = torch.bincount(tiles[tiles >= 0].long(), minlength=experts)
    assert torch.equal(per_tile, -(-counts // bt))


class _TorchSide:
    """A stand-in for ExpertGemm: y[r] = x[r] @ W_e(r)^T in fp32 for the tile's expert, rounded to the dtype; rows of
    padding tiles are NaN (they must never reach the output)."""

    def __init__(self, weights, bias, bt, dtype):
        self.wd = weights                       # [E, N, K] float32
        self.bias = bias
        self.experts, self.n, self.k = weights.shape
        self.k8 = -(-self.k // 8) * 8
        self._bt, self.dtype = bt, dtype
        self.calls = []

    def bt(self, tokens, topk):
        return self._bt

    def __call__(self, xs, tiles, tokens, topk):
        assert xs.shape == (tiles.numel() * self._bt, self.k8) and xs.is_contiguous()
        self.calls.append((tokens, topk))
        e = tiles.repeat_interleave(self._bt).long()
        w = self.wd[e.clamp(min=0)]
        y = torch.einsum("rk,rnk->rn", xs[:, : self.k].float(), w)
        if self.bias is not None:
            y = y + self.bias[e.clamp(min=0)]
        y[e < 0] = float("nan")
        return y.to(self.dtype)


class _TorchRoute:
    """A stand-in for ops.moe_route.MoeRouteKernels built from the torch definitions, so the six-launch
    orchestration (FusedMoeGemm._call_route_kernels: resorting between tile sizes, activation widths, weights on the
    input or at the end) runs on the CPU; the kernels themselves are checked in tests/test_moe_route.py."""

    def __init__(self, dtype):
        self.dtype = dtype

    def align(self, topk_ids, experts, bt, tiles, expert_map=None):
        slots, te = moe_routing(topk_ids, experts, bt, expert_map)
        assert slots.numel() == tiles * bt
        s = topk_ids.numel()
        srow = torch.full((s,), -1, dtype=torch.int32)
        placed = slots < s
        srow[slots[placed]] = torch.nonzero(placed).flatten().to(torch.int32)
        return slots.to(torch.int32), te, srow

    def gather(self, x, slots, w, topk, k8, on_input):
        x = x.to(self.dtype)
        s = w.numel()
        xs = torch.cat([x, x.new_zeros((1, x.shape[1]))]).index_select(0, slots.long() // topk)
        if on_input:
            w_ext = torch.cat([w.reshape(-1), torch.zeros(1)])
            xs = (xs.float() * w_ext.index_select(0, slots.long()).unsqueeze(1)).to(self.dtype)
        assert bool((slots <= s).all())
        return torch.nn.functional.pad(xs, (0, k8 - x.shape[1])).contiguous()

    def activation(self, h1, code, n_out, lda, alpha, limit):
        from vllm_humming.moe.fallback import activation_fn
        from vllm_humming.ops.moe_route import ACTIVATIONS

        name = {c: n for n, (c, _) in ACTIVATIONS.items()}[code]
        kw = {"alpha": alpha, "limit": limit} if name == "swigluoai" else {}
        a = activation_fn(name, h1.float(), **kw).to(self.dtype)
        assert a.shape[1] == n_out
        return torch.nn.functional.pad(a, (0, lda - n_out)).contiguous()

    def combine(self, o, srow, w, tokens, topk, weighted):
        out = torch.zeros(tokens, o.shape[1])
        for j in range(topk):
            r = srow.reshape(tokens, topk)[:, j].long()
            v = o.float()[r.clamp(min=0)] * (r >= 0).unsqueeze(1)
            if weighted:
                v = v * w.reshape(tokens, topk)[:, j:j + 1]
            out += v
        return out.to(self.dtype)


# (the emulation runs a std::thread per CUDA thread: small batches only)
@pytest.mark.parametrize("t,route", [(t, r) for t in (1, 17, 64, 257) for r in ("torch", "kernels", "emulated")
                                     if r != "emulated" or t <= 17])
@pytest.mark.parametrize("case", ["silu", "gelu_bias", "router_on_input", "ep_bt_differ", "no_mul"])
def test_fused_moe_matches_the_torch_fallback(t, case, route, request):
    """route: "torch" -- the torch routing ops; "kernels" -- the six-launch orchestration with torch stand-ins for the
    route kernels; "emulated" -- the real route kernels (ops/moe_route.py's launches) on the CPU emulation of CUDA
    threads (tests/host/emu_launch.py)."""
    gen = torch.Generator().manual_seed(t * 7 + len(case))
    experts, topk, hidden, inter = (16, 4, 72, 40)
    dt = torch.bfloat16
    act = {"gelu_bias": "gelu", "no_mul": "silu_no_mul"}.get(case, "silu")
    n13 = inter if case == "no_mul" else 2 * inter
    w13 = torch.randn(experts, n13, hidden, generator=gen) * 0.1
    w2 = torch.randn(experts, hidden, inter, generator=gen) * 0.1
    b13 = torch.randn(experts, n13, generator=gen) if case == "gelu_bias" else None
    b2 = torch.randn(experts, hidden, generator=gen) if case == "gelu_bias" else None
    x = torch.randn(t, hidden, generator=gen).to(dt)
    emap = None
    if case == "ep_bt_differ":
        glob = 2 * experts
        ids = _ids(t, topk, glob, gen)
        emap = torch.full((glob,), -1, dtype=torch.int32)
        emap[torch.randperm(glob, generator=gen)[:experts]] = torch.arange(experts, dtype=torch.int32)
    else:
        ids = _ids(t, topk, experts, gen)
    wts = torch.softmax(torch.randn(t, topk, generator=gen), -1)
    bt1, bt2 = (8, 16) if case == "ep_bt_differ" else (16, 16)
    sides = (_TorchSide(w13, b13, bt1, dt), _TorchSide(w2, b2, bt2, dt))
    moe = FusedMoeGemm(None, None, dt, name="model.layers.0.mlp.experts", sides=sides)
    if route == "kernels":
        moe._route_kernels = lambda slots: _TorchRoute(dt)
    elif route == "emulated":
        built = request.getfixturevalue("emulated")
        before = sum(k.launches for k in built.values())
        moe.device = torch.device("cpu")
    on_input = case == "router_on_input"
    got = moe(x, wts, ids, activation=act, expert_map=emap, apply_router_weight_on_input=on_input)
    want = torch_moe_fallback(x, w13, w2, wts, ids, activation=act, expert_map=emap,
                              apply_router_weight_on_input=on_input, w13_bias=b13, w2_bias=b2)
    assert got.shape == (t, hidden) and got.dtype == dt
    assert torch.isfinite(got).all()
    err = (got.float() - want.float()).abs().max().item()
    scale = want.float().abs().max().item() + 1e-6
    assert err <= 0.02 * scale, (err, scale)
    assert sides[0].calls == [(t, topk)] and sides[1].calls == [(t, topk)]
    if route == "emulated":   # align (twice when the sides' tiles differ), gather, activation, combine
        launches = sum(k.launches for k in built.values()) - before
        assert moe._route is not None and launches == (5 if case == "ep_bt_differ" else 4), launches


def test_fused_moe_rejects_bad_inputs():
    dt = torch.bfloat16
    sides = (_TorchSide(torch.zeros(4, 16, 32), None, 8, dt), _TorchSide(torch.zeros(4, 32, 8), None, 8, dt))
    moe = FusedMoeGemm(None, None, dt, name="L", sides=sides)
    with pytest.raises(DescError, match="hidden size 31"):
        moe(torch.zeros(3, 31, dtype=dt), torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.int32))
    with pytest.raises(DescError, match=r"must both be \[3, topk\]"):
        moe(torch.zeros(3, 32, dtype=dt), torch.ones(3, 3), torch.zeros(3, 2, dtype=torch.int32))
    assert moe(torch.zeros(0, 32, dtype=dt), torch.ones(0, 2), torch.zeros(0, 2, dtype=torch.int32)).shape == (0, 32)
    bad = (_TorchSide(torch.zeros(4, 16, 32), None, 8, dt), _TorchSide(torch.zeros(5, 32, 8), None, 8, dt))
    with pytest.raises(DescError, match="4 w13 experts but 5 w2 experts"):
        FusedMoeGemm(None, None, dt, name="L", sides=bad)
    bad = (_TorchSide(torch.zeros(4, 16, 32), None, 8, dt), _TorchSide(torch.zeros(4, 32, 5), None, 8, dt))
    with pytest.raises(DescError, match=r"w13 experts are \[16, 32\] and w2 experts \[32, 5\]"):
        FusedMoeGemm(None, None, dt, name="L", sides=bad)
    with pytest.raises(DescError, match="2-D .* floating tensor .* got torch.int64"):
        moe(torch.zeros(3, 32, dtype=torch.int64), torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.int32))
    with pytest.raises(DescError, match="integer expert ids .* got torch.float32 and torch.float32"):
        moe(torch.zeros(3, 32, dtype=dt), torch.ones(3, 2), torch.zeros(3, 2))
    with pytest.raises(DescError, match="into 16, but the w2 experts take 8 inputs"):
        moe(torch.zeros(3, 32, dtype=dt), torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.int32),
            activation="silu_no_mul")
    moe.device = torch.device("meta")
    with pytest.raises(DescError, match="x is on cpu, the experts on meta"):
        moe(torch.zeros(3, 32, dtype=dt), torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.int32))


def test_unsupported_experts_are_named():
    d = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    a = quantize_weight(torch.randn(64, 256), d, name="e0")
    b = quantize_weight(torch.randn(64, 256), d, name="e1", k_perm=torch.randperm(256))
    c = quantize_weight(torch.randn(32, 256), d, name="e2")
    assert "act-order" in moe_unsupported_reason([a, b], torch.bfloat16)
    assert "differ in description or shape" in moe_unsupported_reason([a, c], torch.bfloat16)
    assert "weights on cpu" in moe_unsupported_reason([a], torch.bfloat16)


def test_tokens_per_expert():
    assert tokens_per_expert(1, 8, 128) == 1
    assert tokens_per_expert(64, 8, 128) == 4
    assert tokens_per_expert(4096, 8, 128) == 256
    assert tokens_per_expert(3, 2, 1) == 6
    assert tokens_per_expert(0, 2, 8) == 0


FAMILIES = ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g128:bfloat16,zp:int", "w:float4_e2m1,s:g32:float8_e8m0fnu",
            "w:uint8b128,s:channel:bfloat16", "w:float8_e4m3fn,s:b128x128:float32",
            "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32"]


def _moe_specs(arch, families):
    dt = torch.float16 if arch == "sm_75" else torch.bfloat16
    specs, seen = [], set()
    for d in families:
        fp = format_params(WeightDesc.parse(d))
        for n, k in MOE_SHAPES:
            for t in TOKENS:
                c = moe_choice(arch, t, fp, n, k, 132)
                if (d, c) not in seen:
                    seen.add((d, c))
                    specs.append(_spec(fp, c, dt, arch, d, experts=True))
    return specs


@pytest.mark.parametrize("arch", ARCHS)
def test_moe_choices_are_token_tile_grids(arch):
    for d in FAMILIES:
        fp = format_params(WeightDesc.parse(d))
        for n, k in MOE_SHAPES:
            for t in TOKENS:
                c = moe_choice(arch, t, fp, n, k, 132)
                assert not (c.bulk or c.stream_k or c.tma_x), (arch, d, n, k, t, c.short())
                assert c.unsupported_reason(arch, k, fp.group) == "", (arch, d, n, k, t, c.short())


def test_stream_k_choices_have_no_expert_entry():
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    with pytest.raises(DescError, match="no expert-indexed entry"):
        kernel_source(fp, KernelChoice(64, 4, 2, 1, 1, 4, stream_k=True), torch.bfloat16, experts=True)
    name, src = kernel_source(fp, KernelChoice(64, 4, 2, 1, 1, 4), torch.bfloat16, experts=True)
    dense, _ = kernel_source(fp, KernelChoice(64, 4, 2, 1, 1, 4), torch.bfloat16)
    assert name.startswith("humming_moe_wna16_") and name != dense
    assert "tile_expert[blockIdx.x]" in src and "if (e < 0) return;" in src


@pytest.mark.parametrize("arch", ARCHS)
def test_expert_entries_compile(arch, tmp_path):
    """Every expert-indexed kernel moe_choice can pick for int4 g128 on this arch (all MoE shapes and token counts),
    plus the other families on sm_80 / sm_90a; wgmma ones without serialized MMAs."""
    cache = os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path / "jit")
    fams = FAMILIES if arch in ("sm_80", "sm_90a") else FAMILIES[:1]
    specs = _moe_specs(arch, fams)
    arts = compile_many(specs, cache_dir=cache)
    assert len(arts) == len(specs) and all(len(a.cubin) > 1000 for a in arts)
    for spec, art in zip(specs, arts):
        assert spec.name.startswith("humming_moe_")
        if spec.config["choice"].endswith("wgmma"):
            assert "serialized" not in art.log, (spec.config, art.log)


def test_build_fused_moe_says_why_not(monkeypatch):
    from vllm_humming.linear.shard import ShardedWeight
    from vllm_humming.ops.moe_gemm import build_fused_moe

    d = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    q13 = [quantize_weight(torch.randn(64, 256), d, name="e0.w13")]
    q2 = [quantize_weight(torch.randn(256, 32), d, name="e0.w2")]
    monkeypatch.setenv("HUMMING_MOE_KERNELS", "0")
    moe, why = build_fused_moe(q13, q2, torch.bfloat16, "cuda", "L")
    assert moe is None and "HUMMING_MOE_KERNELS=0" in why
    monkeypatch.delenv("HUMMING_MOE_KERNELS")          # default: on
    moe, why = build_fused_moe(q13, q2, torch.bfloat16, "cpu", "L")
    assert moe is None and "weights on cpu" in why
    moe, why = build_fused_moe(q13, [ShardedWeight(q2[0], torch.arange(32))], torch.bfloat16, "cuda", "L")
    assert moe is None and "cuts its scale groups" in why
    monkeypatch.setenv("HUMMING_FORCE_FALLBACK", "1")
    assert "fallback forced" in build_fused_moe(q13, q2, torch.bfloat16, "cuda", "L")[1]
    monkeypatch.delenv("HUMMING_FORCE_FALLBACK")
    monkeypatch.setenv("HUMMING_MOE_KERNELS", "yes")
    with pytest.raises(DescError, match="HUMMING_MOE_KERNELS must be 0 or 1"):
        build_fused_moe(q13, q2, torch.bfloat16, "cuda", "L")


def test_moe_bench_table_and_no_gpu_exit(capsys):
    from vllm_humming.bench import moe as bench_moe

    res = {"desc": "w:uint4b8,s:g128:bfloat16", "device": "X", "torch": "2", "method": "m",
           "records": [{"layer": "E128_top8_H2048_I768", "tokens": 1, "ours_us": 9.5, "ours_tbps": 2.1,
                        "bf16_grouped_us": 30.0, "x_bf16_grouped": 3.16, "ours_eager_us": 80.0,
                        "plan": {"choice": "bt8_wn8", "grid": (8, 12, 2)}},
                       {"layer": "E8_top2_H4096_I14336", "tokens": 4, "ours_error": "boom"}]}
    text = bench_moe.table(res)
    assert "E128_top8_H2048_I768" in text and "3.16" in text and "bt8_wn8 (8, 12, 2)" in text
    assert "err" in text.splitlines()[-1]
    if not torch.cuda.is_available():
        assert bench_moe.main(["--tokens", "1"]) == 2
