"""GPU: the split-K end shared by several blocks (splitk_epilogue's reducers, gemm_wna16.cuh).

With R reducers the last R blocks of a tile to arrive each sum a 1/R share of it, every output in split order from
split 0 -- so the result must be bit-identical to the last block summing alone (HUMMING_SPLITK_REDUCERS=1), for every
R, split count and mainloop that reaches the ticket path (cp.async mma.sync / wgmma, direct mma.sync / wgmma), with
tiles that have fewer valid rows than the block (M = 17, 33), N not a multiple of the block's rows and K tails.  The
tickets must be back at zero after every call: repeated calls and CUDA-graph replays equal the first call.
Outputs are poisoned with NaN before each call and checked against the fp32 reference.
"""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

from test_gemm_pipelines_gpu import _assert_graph_replays_match_eager

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _sm90():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


CASES = [  # (choice, M values)
    (KernelChoice.parse("bt16_wn4_tm2_wk1_ak2_s4"), [9, 16]),                       # cp.async mma.sync
    (KernelChoice.parse("bt64_wn4_tm2_wk1_ak1_s4"), [33, 64]),
    (KernelChoice(16, 1, 2, 8, 32, 4, "direct"), [9, 16]),                          # direct mma.sync, 8 K-warps
]
CASES_SM90 = [
    (KernelChoice.parse("bt64_wn8_tm1_wk1_ak1_s6_wgmma"), [17, 33, 64]),             # cp.async wgmma
    (KernelChoice.parse("bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"), [9, 16]),          # direct wgmma
    (KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"), [16]),
]


def _cases():
    out = []
    for choice, ms in CASES + (CASES_SM90 if _sm90() else []):
        for m in ms:
            out.append((choice, m))
    return out


@pytest.mark.parametrize("choice,m", _cases(), ids=lambda v: v.short() if isinstance(v, KernelChoice) else str(v))
@pytest.mark.parametrize("n,k,splits", [(4000, 14336 + 64, 8), (2000, 4096, 3), (1500, 8192 - 64, 5)])
def test_reducers_bit_identical(choice, m, n, k, splits, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name="reducers",
                         bias=torch.randn(n, device="cuda"))
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    ref = reference_gemm(x.float(), qw)
    outs, used = {}, {}
    for r in (1, 2, 3, 4):
        monkeypatch.setenv("HUMMING_SPLITK_REDUCERS", str(r))
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})
        ys = []
        for _ in range(3):   # repeated calls: the ticket is reset by every call
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            ys.append(layer(x, out=out))
        torch.cuda.synchronize()
        info = layer.plan_info[m]
        assert info["splits"] > 1, info   # (the direct kernel rounds a forced count to whole units)
        used[r] = info["reducers"]
        assert not torch.isnan(ys[0]).any(), f"{choice.short()} R={r}: unwritten outputs"
        for y in ys[1:]:
            assert torch.equal(y, ys[0]), f"{choice.short()} R={r}: repeated calls differ"
        outs[r] = ys[0]
        if r == 4:
            _assert_graph_replays_match_eager(layer, x)
    # R > 1 needs a one-wave grid (splitk_reducers): certain when the grid has at most one block per SM
    blocks = -(-m // choice.bt) * -(-n // choice.block_n) * info["splits"]
    assert used[1] == 1 and (blocks > 132 or used[4] == min(4, info["splits"])), used
    rel = ((outs[1].float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{choice.short()} N={n} K={k} M={m}: rel err {rel:.3e}"
    for r in (2, 3, 4):
        assert torch.equal(outs[r], outs[1]), f"{choice.short()} N={n} K={k} M={m} splits={splits}: R={r} differs"


@pytest.mark.parametrize("defines", ["HUMMING_SPLITK_INFLIGHT=16", "HUMMING_SPLITK_ACQREL_TICKET",
                                     "HUMMING_SPLITK_INFLIGHT=16,HUMMING_SPLITK_ACQREL_TICKET"])
@pytest.mark.parametrize("choice,m", _cases(), ids=lambda v: v.short() if isinstance(v, KernelChoice) else str(v))
def test_splitk_end_experiments_bit_identical(choice, m, defines, monkeypatch):
    """Session 53's split-K end experiments (HUMMING_DEBUG_DEFINES; more loads in flight per thread, one acq_rel
    ticket atomic) sum the same expressions in the same order: bit-identical to the default, for 1 and 4 reducers,
    with 11 / 16 splits (more than the default's 8 loads in flight), poisoned outputs, repeated calls, CUDA graph."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    n, k = 3000, 11 * 1024 + 64
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name="splitk_end",
                         bias=torch.randn(n, device="cuda"))
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    ref = reference_gemm(x.float(), qw)
    for splits in (11, 16):
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
        for r in (1, 4):
            monkeypatch.setenv("HUMMING_SPLITK_REDUCERS", str(r))
            ys = {}
            for d in ("", defines):
                monkeypatch.setenv("HUMMING_DEBUG_DEFINES", d)
                layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})
                outs = []
                for _ in range(2):
                    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                    outs.append(layer(x, out=out))
                torch.cuda.synchronize()
                assert layer.plan_info[m]["splits"] > 1, layer.plan_info[m]
                assert not torch.isnan(outs[0]).any() and torch.equal(outs[0], outs[1]), (choice.short(), d, r)
                if d:
                    _assert_graph_replays_match_eager(layer, x)
                ys[d] = outs[0]
            assert torch.equal(ys[defines], ys[""]), f"{choice.short()} M={m} splits={splits} R={r} {defines}: differs"
            rel = ((ys[""].float() - ref).norm() / ref.norm()).item()
            assert rel < 1.2e-2, f"{choice.short()} M={m}: rel err {rel:.3e}"
