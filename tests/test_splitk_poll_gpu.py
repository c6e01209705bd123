"""GPU (sm_90a): the polled split-K end (gemm_wna16.cuh splitk_poll_end, plan.FLAG_SPLITK_POLL; opt-in through
HUMMING_SPLITK_POLL=1 since session 54's H100 A/B measured it no faster).

The partials are their own ready flags: producers store them into a workspace kept at kPollEmpty and leave; static
reducers (the last R splits of a tile) poll the words, sum every output in split order from split 0 -- the ticket
path's expressions in the ticket path's order -- and write kPollEmpty back.  So against the ticket path
(HUMMING_SPLITK_POLL=0) the outputs must be bit-identical, for every wgmma mainloop that reaches it (direct, cp.async,
TMA x), 1-4 reducers, 2-16 splits, tiles with fewer valid rows than the block, N past the last 16-row atom and K
tails; and after every call (eager, repeated, CUDA-graph replays, several layers in turn) the polled workspace must be
all kPollEmpty again, or the next call would sum stale words.  Outputs are poisoned with NaN before each call and
checked against the fp32 reference.
"""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops import gemm as gemm_mod
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.ops.plan import FLAG_SPLITK_POLL
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

from test_gemm_pipelines_gpu import _assert_graph_replays_match_eager

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                                 reason="the polled split-K end is a wgmma-kernel path: needs sm_90a (H100 / H200)")]

CASES = [  # (choice, M values)
    ("bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma", [9, 16]),     # the narrow layers' 16-token plan choice
    ("bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma", [16]),
    ("bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma", [17, 32]),
    ("bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma", [33, 64]),         # the narrow layers' 64-token plan choice (TMA x)
    ("bt64_wn8_tm1_wk1_ak1_s6_wgmma", [64]),                 # cp.async wgmma
    ("bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma", [100]),
]


def _poll_workspace_empty() -> bool:
    """Every polled workspace buffer (the current one and any a graph may still hold) is all kPollEmpty."""
    ok = True
    for key, bufs in gemm_mod._WORKSPACES.items():
        if key[-1] is True:
            for b in bufs:
                ok = ok and bool((b.view(torch.int32) == gemm_mod.POLL_EMPTY).all())
    return ok


def _run(layer, x, m, n, calls=3):
    ys = []
    for _ in range(calls):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ys.append(layer(x, out=out))
    torch.cuda.synchronize()
    return ys


@pytest.mark.parametrize("choice,m", [(c, m) for c, ms in CASES for m in ms], ids=str)
@pytest.mark.parametrize("splits", [2, 5, 11, 16])
def test_polled_end_bit_identical_to_ticket_path(choice, m, splits, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
    choice = KernelChoice.parse(choice)
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    n, k = 3000, 11 * 1024 + 64          # N16 = 3008: the last tile's float4 columns past N16 are never stored
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name="polled",
                         bias=torch.randn(n, device="cuda"))
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    ref = reference_gemm(x.float(), qw)
    for r in (1, 4):
        monkeypatch.setenv("HUMMING_SPLITK_REDUCERS", str(r))
        ys = {}
        for poll in ("0", "1"):
            monkeypatch.setenv("HUMMING_SPLITK_POLL", poll)
            layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})
            outs = _run(layer, x, m, n)
            info = layer.plan_info[m]
            assert info["splits"] > 1, info
            blocks = info["grid"][0] * info["grid"][1] * info["grid"][2]
            polled = bool(info["flags"] & FLAG_SPLITK_POLL)
            # polled only when asked, and surely when the grid has at most one block per SM (all resident at once)
            assert polled if (poll == "1" and blocks <= torch.cuda.get_device_properties(0).multi_processor_count) \
                else (poll == "1" or not polled), info
            assert not torch.isnan(outs[0]).any(), f"{choice.short()} poll={poll} R={r}: unwritten outputs"
            for y in outs[1:]:
                assert torch.equal(y, outs[0]), f"{choice.short()} poll={poll} R={r}: repeated calls differ"
            assert _poll_workspace_empty(), f"{choice.short()} R={r}: the polled workspace is not empty after a call"
            if poll == "1":
                _assert_graph_replays_match_eager(layer, x)
                assert _poll_workspace_empty(), f"{choice.short()} R={r}: not empty after graph replays"
            ys[poll] = outs[0]
        assert torch.equal(ys["1"], ys["0"]), f"{choice.short()} M={m} splits={splits} R={r}: polled end differs"
        rel = ((ys["1"].float() - ref).norm() / ref.norm()).item()
        assert rel < 1.2e-2, f"{choice.short()} M={m} splits={splits}: rel err {rel:.3e}"


def test_polled_layers_in_turn_share_the_workspace(monkeypatch):
    """The plans on the narrow layers with the polled end on (16 / 64 tokens), three layers of different shapes called in
    turn and under one CUDA graph: each output equals its eager first call, and the workspace they share is empty
    after every call."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "1")
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    layers = []
    for n, k in ((6144, 4096), (4096, 14336), (1000, 4160)):
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name=f"turn{n}x{k}")
        layers.append((GemmLayer(qw, None, torch.bfloat16), qw, n, k))
    for m in (16, 64):
        xs = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _, _, _, k in layers]
        first = []
        for (layer, qw, n, k), x in zip(layers, xs):
            y = _run(layer, x, m, n, calls=1)[0]
            ref = reference_gemm(x.float(), qw)
            assert ((y.float() - ref).norm() / ref.norm()).item() < 1.2e-2, (n, k, m)
            first.append(y)
        assert any(lay.plan_info[m]["flags"] & FLAG_SPLITK_POLL for lay, _, _, _ in layers), \
            [lay.plan_info[m] for lay, _, _, _ in layers]
        for _ in range(3):
            for (layer, _, n, _), x, y0 in zip(layers, xs, first):
                assert torch.equal(_run(layer, x, m, n, calls=1)[0], y0)
                assert _poll_workspace_empty()
        outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _, _, n, _ in layers]
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for (layer, _, _, _), x, o in zip(layers, xs, outs):
                layer(x, out=o)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for (layer, _, _, _), x, o in zip(layers, xs, outs):
                layer(x, out=o)
        for _ in range(3):
            for o in outs:
                o.fill_(float("nan"))
            g.replay()
            torch.cuda.synchronize()
            for o, y0 in zip(outs, first):
                assert torch.equal(o, y0)
            assert _poll_workspace_empty()


@pytest.mark.parametrize("n,k", [(6144, 4096), (4096, 14336), (3000, 4160)])
def test_narrow16_polled_switch_plans(n, k, monkeypatch):
    """HUMMING_NARROW16_POLLED=1 (session 54's experiment switch): the layer's own plans at 9 / 16 tokens take the
    128-row tile with the polled end -- vs the fp32 reference with bias on NaN-poisoned outputs, repeated calls and a
    CUDA graph bit-identical, the workspace empty after every call."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.setenv("HUMMING_NARROW16_POLLED", "1")
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name="narrow16",
                         bias=torch.randn(n, device="cuda"))
    layer = GemmLayer(qw, None, torch.bfloat16)
    for m in (9, 16):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        ys = _run(layer, x, m, n)
        info = layer.plan_info[m]
        if info["choice"] == "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma" and info["splits"] > 1:
            assert info["flags"] & FLAG_SPLITK_POLL, info
        elif (n, k) != (3000, 4160):
            raise AssertionError(f"the switch's choice was not taken: {info}")
        assert not torch.isnan(ys[0]).any() and all(torch.equal(y, ys[0]) for y in ys[1:]), info
        ref = reference_gemm(x.float(), qw)
        assert ((ys[0].float() - ref).norm() / ref.norm()).item() < 1.2e-2, info
        assert _poll_workspace_empty()
        _assert_graph_replays_match_eager(layer, x)
        assert _poll_workspace_empty()
