"""GPU correctness of the expert-indexed MoE kernels (vllm_humming.ops.moe_gemm) against the fp32 reference
(pytest -m gpu; skipped without CUDA).

Every case: fresh random experts quantized with the reference quantizer, fresh random activations and routing, the
whole layer compared with the plain-torch fallback on the dequantized experts (fp32 GEMMs, the intermediate rounded
to the activation dtype as the kernels' output is); one side's output buffer poisoned with NaN before the call (every
row of a routed tile must be written, rows of padding tiles never).
"""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.moe.fallback import torch_moe_fallback
from vllm_humming.ops.moe_gemm import FusedMoeGemm, build_fused_moe, moe_routing
from vllm_humming.reference import quantize_weight

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

FORMATS = [
    "w:uint4b8,s:g128:bfloat16",            # GPTQ int4
    "w:uint4,s:g128:bfloat16,zp:int",       # AWQ
    "w:uint3b4,s:g128:bfloat16",            # GPTQ int3
    "w:uint8b128,s:channel:bfloat16",       # int8 per channel (epilogue scale)
    "w:float4_e2m1,s:g32:float8_e8m0fnu",   # MXFP4
    "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32",  # NVFP4 (per-expert global scale)
    "w:float8_e4m3fn,s:b128x128:float32",   # FP8 blocks
]
TOKENS = [1, 17, 64, 257, 1024]
# (experts, topk, hidden, intermediate): a Qwen3-MoE-like layer cut down, and odd sizes (K not a multiple of 128)
LAYERS = [(64, 8, 1024, 384), (8, 2, 1088, 200)]


def _experts(desc, e, n, k, std=0.05, bias=False):
    qws, dense = [], []
    for i in range(e):
        w = torch.randn(n, k, device="cuda") * std
        b = torch.randn(n, device="cuda") * 0.1 if bias else None
        q = quantize_weight(w, desc, name=f"expert{i}", bias=b)
        qws.append(q)
        dense.append(q.dequantize(torch.float32))
    return qws, torch.stack(dense)


def _route(t, topk, experts):
    ids = torch.stack([torch.randperm(experts, device="cuda")[:topk] for _ in range(t)]).to(torch.int32)
    wts = torch.softmax(torch.randn(t, topk, device="cuda"), -1)
    return ids, wts


def _close(got, want, tol):
    assert torch.isfinite(got).all()
    err = (got.float() - want.float()).abs().max().item()
    scale = want.float().abs().max().item() + 1e-6
    assert err <= tol * scale, (err, scale)


@pytest.mark.parametrize("desc_str", FORMATS)
@pytest.mark.parametrize("layer", LAYERS, ids=lambda l: "x".join(map(str, l)))
def test_fused_moe_matches_reference(desc_str, layer):
    desc = WeightDesc.parse(desc_str)
    experts, topk, hidden, inter = layer
    dt = torch.bfloat16
    q13, d13 = _experts(desc, experts, 2 * inter, hidden)
    q2, d2 = _experts(desc, experts, hidden, inter)
    moe = FusedMoeGemm(q13, q2, dt, name=f"moe[{desc_str}]")
    for t in TOKENS:
        x = torch.randn(t, hidden, device="cuda").to(dt)
        ids, wts = _route(t, topk, experts)
        got = moe(x, wts, ids)
        want = torch_moe_fallback(x, d13, d2, wts, ids)
        _close(got, want, 2.5e-2)


@pytest.mark.parametrize("t", [1, 17, 257])
def test_every_routed_row_is_written_and_padding_tiles_are_not(t):
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    experts, topk, hidden, inter = 32, 4, 512, 256
    dt = torch.bfloat16
    q13, d13 = _experts(desc, experts, 2 * inter, hidden)
    q2, _ = _experts(desc, experts, hidden, inter)
    moe = FusedMoeGemm(q13, q2, dt, name="poison")
    side = moe.w13
    ids, _ = _route(t, topk, experts)
    bt = side.bt(t, topk)
    slots, tiles = moe_routing(ids, experts, bt)
    x = torch.randn(t, hidden, device="cuda").to(dt)
    xs = torch.cat([x, x.new_zeros(1, hidden)]).index_select(0, slots // topk).contiguous()
    out = torch.full((slots.numel(), side.n), float("nan"), dtype=dt, device="cuda")
    side(xs, tiles, t, topk, out=out)
    rows = tiles.repeat_interleave(bt).long()
    real = rows >= 0
    assert torch.isfinite(out[real]).all()
    assert torch.isnan(out[~real]).all()
    ref = torch.einsum("rk,rnk->rn", xs[real].float(), d13[rows[real]])
    _close(out[real], ref, 1.5e-2)


def test_bias_router_on_input_and_expert_map():
    desc = WeightDesc.parse("w:uint4,s:g128:bfloat16,zp:int")
    experts, topk, hidden, inter = 16, 4, 768, 256
    dt = torch.bfloat16
    q13, d13 = _experts(desc, experts, 2 * inter, hidden, bias=True)
    q2, d2 = _experts(desc, experts, hidden, inter, bias=True)
    b13 = torch.stack([q.bias.float() for q in q13])
    b2 = torch.stack([q.bias.float() for q in q2])
    moe = FusedMoeGemm(q13, q2, dt, name="bias")
    glob = 2 * experts
    emap = torch.full((glob,), -1, dtype=torch.int32, device="cuda")
    emap[torch.randperm(glob, device="cuda")[:experts]] = torch.arange(experts, dtype=torch.int32, device="cuda")
    for t in (1, 64, 300):
        x = torch.randn(t, hidden, device="cuda").to(dt)
        ids, wts = _route(t, topk, glob)
        for on_input in (False, True):
            got = moe(x, wts, ids, expert_map=emap, apply_router_weight_on_input=on_input)
            want = torch_moe_fallback(x, d13, d2, wts, ids, expert_map=emap, apply_router_weight_on_input=on_input,
                                      w13_bias=b13, w2_bias=b2)
            _close(got, want, 2.5e-2)


def test_cuda_graph_replay():
    """The routing and both GEMMs capture in one CUDA graph (no host sync) and replay on new inputs."""
    desc = WeightDesc.parse("w:float4_e2m1,s:g32:float8_e8m0fnu")
    experts, topk, hidden, inter, t = 64, 8, 1024, 512, 8
    dt = torch.bfloat16
    q13, d13 = _experts(desc, experts, 2 * inter, hidden)
    q2, d2 = _experts(desc, experts, hidden, inter)
    moe = FusedMoeGemm(q13, q2, dt, name="graph")
    x = torch.randn(t, hidden, device="cuda").to(dt)
    ids, wts = _route(t, topk, experts)
    moe(x, wts, ids)                                   # compile + plan outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = moe(x, wts, ids)
    for _ in range(3):
        x.copy_(torch.randn(t, hidden, device="cuda").to(dt))
        new_ids, new_wts = _route(t, topk, experts)
        ids.copy_(new_ids)
        wts.copy_(new_wts)
        g.replay()
        torch.cuda.synchronize()
        _close(y, torch_moe_fallback(x, d13, d2, wts, ids), 2.5e-2)


def test_build_refuses_act_order_and_names_why(monkeypatch):
    monkeypatch.setenv("HUMMING_MOE_KERNELS", "1")
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    q13 = [quantize_weight(torch.randn(256, 512, device="cuda"), desc, name="g", k_perm=torch.randperm(512, device="cuda"))]
    q2 = [quantize_weight(torch.randn(512, 128, device="cuda"), desc, name="d")]
    moe, why = build_fused_moe(q13, q2, torch.bfloat16, "cuda", "layer")
    assert moe is None and "act-order" in why
    q13 = [quantize_weight(torch.randn(256, 512, device="cuda"), desc, name="g")]
    moe, why = build_fused_moe(q13, q2, torch.bfloat16, "cuda", "layer")
    assert moe is not None and why == ""


def test_per_expert_exponent_folds():
    """MXFP4 experts of very different magnitudes: the large ones' group scales need the exponent fold (a per-tensor
    2^k, gemm._fold_exponent), the small ones none -- the stacked per-expert tensor scale must pair each expert with
    its own k (1.0 where it has none)."""
    desc = WeightDesc.parse("w:float4_e2m1,s:g32:float8_e8m0fnu")
    experts, topk, hidden, inter = 8, 2, 512, 256
    dt = torch.bfloat16
    q13, d13, q2, d2 = [], [], [], []
    for i in range(experts):
        big = 4000.0 if i % 2 else 1.0
        a = quantize_weight(torch.randn(2 * inter, hidden, device="cuda") * 0.05 * big, desc, name=f"e{i}.w13")
        b = quantize_weight(torch.randn(hidden, inter, device="cuda") * 0.05 / big, desc, name=f"e{i}.w2")
        q13.append(a), q2.append(b), d13.append(a.dequantize()), d2.append(b.dequantize())
    moe = FusedMoeGemm(q13, q2, dt, name="folds")
    assert moe.w13.tscale is not None and (moe.w13.tscale[1::2] > 1).all() and (moe.w13.tscale[0::2] == 1).all()
    d13, d2 = torch.stack(d13), torch.stack(d2)
    for t in (1, 64):
        x = torch.randn(t, hidden, device="cuda").to(dt)
        ids, wts = _route(t, topk, experts)
        _close(moe(x, wts, ids), torch_moe_fallback(x, d13, d2, wts, ids), 2.5e-2)


@pytest.mark.parametrize("activation", ["silu", "gelu", "gelu_tanh", "swigluoai", "silu_no_mul", "relu2_no_mul"])
def test_route_kernels_match_the_torch_route(monkeypatch, activation):
    """The six-launch path (ops/moe_route.py: align, gather, activation, combine around the GEMMs) against the same
    layer on the torch routing ops (HUMMING_MOE_ROUTE_KERNELS=0), token counts on both sides of the align kernel's
    slot limit, and the fallback on the dequantized experts."""
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    experts, topk, hidden, inter = 32, 4, 512, 256
    dt = torch.bfloat16
    n13 = inter if activation.endswith("_no_mul") else 2 * inter
    q13, d13 = _experts(desc, experts, n13, hidden)
    q2, d2 = _experts(desc, experts, hidden, inter)
    moe = FusedMoeGemm(q13, q2, dt, name=f"route[{activation}]")
    kw = {"alpha": 1.702, "limit": 7.0} if activation == "swigluoai" else None
    for t in (1, 17, 300, 2048, 2049):          # 2049 x 4 slots > ALIGN_MAX_SLOTS: the torch routing either way
        x = torch.randn(t, hidden, device="cuda").to(dt)
        ids, wts = _route(t, topk, experts)
        got = moe(x, wts, ids, activation=activation, activation_kw=kw)
        monkeypatch.setenv("HUMMING_MOE_ROUTE_KERNELS", "0")
        ref = moe(x, wts, ids, activation=activation, activation_kw=kw)
        monkeypatch.delenv("HUMMING_MOE_ROUTE_KERNELS")
        _close(got, ref, 1e-2)
        _close(got, torch_moe_fallback(x, d13, d2, wts, ids, activation=activation), 2.5e-2)
    assert moe._route is not None


def test_align_kernel_is_moe_routing():
    from vllm_humming.ops.moe_gemm import moe_max_tiles
    from vllm_humming.ops.moe_route import MoeRouteKernels

    k = MoeRouteKernels(torch.bfloat16, "cuda", "align")
    for t, topk, e, bt in ((1, 8, 64, 16), (17, 6, 60, 32), (257, 8, 256, 64), (1024, 8, 256, 128), (4, 2, 8, 16)):
        ids, _ = _route(t, topk, e)
        for idt in (torch.int32, torch.int64):
            tiles = moe_max_tiles(t * topk, e, bt)
            slots, te, srow = k.align(ids.to(idt), e, bt, tiles)
            want_slots, want_te = moe_routing(ids, e, bt)
            assert torch.equal(slots.long(), want_slots) and torch.equal(te, want_te), (t, topk, e, bt, idt)
            placed = want_slots < t * topk
            assert torch.equal(srow[want_slots[placed]].long(), torch.nonzero(placed).flatten())
