"""GPU: the direct decode kernel (gemm_wna16_direct.cuh: weights global -> registers, x / scales / window sums of x
in shared memory, accumulator-side zero and scale) against the fp32 reference, with forced execution choices.

What the cases reach: K-warps interleaved per unit (1, 2, 4, 8), units of 1 / 2 / 4 atoms (channel or <= 64-column
groups, g128, g256) with ring depths that are and are not multiples of the unit, K tails (a partial atom, a partial
unit, a last split shorter than the others), N not a multiple of the block's rows, several token tiles with 1..kBT
valid rows (row clamping), forced split counts, every weight family and zero mode in bf16 and fp16.  Outputs are
poisoned with NaN before each call; two calls must be bit-identical (deterministic window sums and split sums).
"""

import dataclasses

import pytest
import torch

from vllm_humming.desc import DescError, WeightDesc
from vllm_humming.ops.gemm import GemmLayer
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import SMEM_PF_MAX_M, SMEM_PREFETCH_KB_BY_M, KernelChoice, m_bucket

from test_gemm_pipelines_gpu import _assert_graph_replays_match_eager, _check_layer
from test_gemm_pipelines_gpu import _run as _run_checked

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

DIRECT8 = [KernelChoice(8, 1, 2, 8, 64, 4, "direct"), KernelChoice(8, 2, 2, 4, 32, 3, "direct"),
           KernelChoice(8, 4, 1, 1, 16, 6, "direct"), KernelChoice(8, 1, 4, 2, 64, 2, "direct")]
DIRECT16 = [KernelChoice(16, 1, 2, 8, 32, 4, "direct"), KernelChoice(16, 2, 1, 2, 16, 3, "direct")]
# sm_90a: wgmma math (operand-side dequant, x read by descriptor from per-atom swizzled tiles)
DIRECT_WGMMA = [KernelChoice(16, 4, 1, 1, 64, 4, "direct", "wgmma"), KernelChoice(16, 8, 2, 1, 32, 3, "direct", "wgmma"),
                KernelChoice(32, 8, 1, 1, 16, 2, "direct", "wgmma"), KernelChoice(64, 4, 2, 1, 8, 5, "direct", "wgmma"),
                KernelChoice(128, 8, 2, 1, 4, 2, "direct", "wgmma")]


def _wgmma_ok():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)

FORMATS = ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int", "w:uint3b4,s:g128:bfloat16",
           "w:uint8b128,s:channel:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu",
           "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:uint4,s:g32:float16,zp:float",
           "w:uint2b2,s:g256:bfloat16", "w:float8_e4m3fn,s:b128x128:float32", "w:uint6b32,s:g16:bfloat16",
           "w:uint7b64,s:g256:bfloat16", "w:uint1,s:g32:bfloat16,zp:int", "w:uint4b8,s:channel:bfloat16",
           "w:uint8,s:g64:float16,zp:int", "w:int4,s:g128:float16", "w:float6_e3m2,s:g32:bfloat16",
           "w:uint5b16,s:g128:bfloat16"]


def _run(desc_str, n, k, m, choice, dtype=torch.bfloat16, splits=None, monkeypatch=None):
    """test_gemm_pipelines_gpu._run (NaN-poisoned outputs, the fp32 reference, two calls bit-identical), with the split
    count forced through HUMMING_DEBUG_SPLITS when ``splits`` is given."""
    if splits is not None:
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
    try:
        return _run_checked(desc_str, n, k, m, choice, dtype=dtype)
    finally:
        if splits is not None:
            monkeypatch.delenv("HUMMING_DEBUG_SPLITS")


@pytest.mark.parametrize("choice", DIRECT8 + DIRECT16, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 3, 8, 16, 17])
def test_direct_int4_shapes(choice, m):
    """K tails (1088: 17 atoms, an odd number of g128 units; 8200: a zero-filled partial atom), N not a multiple of
    the block's rows (1000, 200), small layers (16 x 128), several token tiles (M=17 on 8- and 16-token tiles)."""
    if m > 8 and choice.bt == 8 and m != 17:
        pytest.skip("8-token tiles serve M <= 8 (M=17: three tiles)")
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [1, 7, 16])
def test_direct_formats(desc, m):
    choice = DIRECT8[0] if m <= 8 else DIRECT16[0]
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(1000, 2048 + 64), (256, 4096)]:
        _run(desc, n, k, m, choice, dtype=dtype)


@pytest.mark.parametrize("splits", [1, 2, 3, 5, 64])
@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint2b2,s:g256:bfloat16", "w:uint8b128,s:channel:bfloat16"])
def test_direct_forced_splits(splits, desc, monkeypatch):
    """Splits whose last range is shorter than the others or holds nothing but zero-loaded units, one split (the
    whole K in one block), more splits than units."""
    for choice in (DIRECT8[0], DIRECT8[1], DIRECT16[1]):
        m = 2 if choice.bt == 8 else 11
        _run(desc, 512, 4096 + 192, m, choice, splits=splits, monkeypatch=monkeypatch)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", DIRECT_WGMMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 9, 16, 33, 64, 130])
def test_direct_wgmma_int4_shapes(choice, m, monkeypatch):
    """Token rows past M (zero-filled x rows under the descriptor), several token tiles, K tails, odd N, ranges
    shorter than the ring and than one fragment-buffer pair (tail atoms), split-K."""
    if m > 2 * choice.bt:
        pytest.skip("a few token tiles per choice are enough")
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [5, 16, 40])
def test_direct_wgmma_formats(desc, m, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    choice = DIRECT_WGMMA[0] if m <= 16 else DIRECT_WGMMA[2] if m <= 32 else DIRECT_WGMMA[3]
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(1000, 2048 + 64), (256, 4096)]:
        _run(desc, n, k, m, choice, dtype=dtype)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("splits", [1, 3, 64])
def test_direct_wgmma_forced_splits(splits, monkeypatch):
    for choice in DIRECT_WGMMA[:3]:
        _run("w:uint4b8,s:g128:bfloat16", 512, 4096 + 192, 13, choice, splits=splits, monkeypatch=monkeypatch)
        _run("w:uint4,s:g32:float16,zp:float", 512, 4096 + 192, 13, choice, dtype=torch.float16, splits=splits,
             monkeypatch=monkeypatch)


# K-warpgroups of the direct wgmma kernel (session 55): warpgroup row wk takes atom columns wk, wk + warps_k, ... of
# the block's range, all reading one x tile; reduce_k sums them in shared memory before the split-K end.
DIRECT_WGMMA_WK = [KernelChoice.parse("bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma"),
                   KernelChoice.parse("bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma"),
                   KernelChoice.parse("bt8_wn4_tm1_wk2_ak256_s4_direct_wgmma"),
                   KernelChoice.parse("bt32_wn8_tm1_wk2_ak256_s3_direct_wgmma"),
                   KernelChoice.parse("bt16_wn4_tm2_wk2_ak256_s4_direct_wgmma")]


def _run_k_warpgroup_cases(choice, m, splits, monkeypatch, short_k):
    """The K-warpgroup tests' layers (direct and staged wgmma): int4 g128 on 6144x4096, 1000x4160 (65 atoms) and
    200 x short_k, uint4 with zero points in fp16, MXFP4 -- each against the fp32 reference (_run)."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(6144, 4096), (1000, 4160), (200, short_k)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice, splits=splits, monkeypatch=monkeypatch)
    _run("w:uint4,s:g64:float16,zp:int", 1000, 2048 + 64, m, choice, dtype=torch.float16, splits=splits,
         monkeypatch=monkeypatch)
    _run("w:float4_e2m1,s:g32:float8_e8m0fnu", 520, 3072, m, choice, splits=splits, monkeypatch=monkeypatch)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", DIRECT_WGMMA_WK, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 9, 16, 17])
@pytest.mark.parametrize("splits", [1, 3])
def test_direct_wgmma_k_warpgroups(choice, m, splits, monkeypatch):
    """K-warpgroups against the fp32 reference: ranges whose atom count is not a multiple of warps_k (K = 4160: 65
    atoms, and the 3-split ranges' short last one -- warpgroups with one position fewer), K shorter than the
    warpgroups (128: some warpgroups have no atom at all), odd N, one and several K splits (the split-K end after the
    in-block sum), zero points and fp16, poisoned outputs, bit-identical repeats."""
    if m > 2 * choice.bt:
        pytest.skip("a few token tiles per choice are enough")
    _run_k_warpgroup_cases(choice, m, splits, monkeypatch, short_k=128)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_direct_wgmma_k_warpgroups_graph_and_poll(monkeypatch):
    """One split per tile (no workspace at all) and the polled split-K end after the in-block sum: CUDA-graph replays
    equal the eager call bit for bit."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(6144, 4096, device="cuda") * 0.05, desc, name="graph_wk")
    for splits, poll in (("1", "0"), ("2", "1"), ("4", "0")):
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", splits)
        monkeypatch.setenv("HUMMING_SPLITK_POLL", poll)
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(16): DIRECT_WGMMA_WK[0]})
        x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
        _assert_graph_replays_match_eager(layer, x)
        ref = reference_gemm(x.float(), qw)
        y = layer(x)
        assert layer.plan_info[16]["splits"] == int(splits), layer.plan_info[16]
        assert ((y.float() - ref).norm() / ref.norm()).item() < 1.2e-2


# Staged wgmma K-warpgroups (session 56): the cp.async / TMA-x wgmma kernel (gemm_wna16.cuh) with two or four
# warpgroup rows, row wk taking atoms wk, wk + warps_k, ... of every two- or four-atom stage, summed in shared memory
# before the split-K end.  (The file holds the decode kernels' K-warp tests; these tiles serve 33-64+ tokens.)
STAGED_WGMMA_WK = [KernelChoice.parse("bt64_wn4_tm1_wk2_ak2_s4_tma_wgmma"),
                   KernelChoice.parse("bt64_wn8_tm1_wk2_ak2_s4_tma_wgmma"),
                   KernelChoice.parse("bt64_wn4_tm1_wk2_ak2_s4_wgmma"),
                   KernelChoice.parse("bt128_wn4_tm1_wk2_ak2_s3_tma_wgmma"),
                   KernelChoice.parse("bt64_wn4_tm1_wk2_ak4_s3_tma_wgmma"),
                   KernelChoice.parse("bt64_wn4_tm1_wk4_ak4_s3_tma_wgmma")]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", STAGED_WGMMA_WK, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [17, 64, 257])
@pytest.mark.parametrize("splits", [1, 3])
def test_staged_wgmma_k_warpgroups(choice, m, splits, monkeypatch):
    """Against the fp32 reference, NaN-poisoned outputs, bit-identical repeats: a last stage whose second atom is past
    K (K = 4160: 65 atoms; 1088: 17 -- warpgroup row 1 consumes a zero-filled atom there), odd N, one and three K
    splits, zero points and fp16, MXFP4, several token tiles (M = 257)."""
    _run_k_warpgroup_cases(choice, m, splits, monkeypatch, short_k=1088)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_staged_wgmma_k_warpgroups_graph(monkeypatch):
    """One and two splits (no workspace / the ticket end after the in-block sum): CUDA-graph replays equal the eager
    call bit for bit."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(6144, 4096, device="cuda") * 0.05, desc, name="graph_staged_wk")
    for splits in ("1", "2"):
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", splits)
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(64): STAGED_WGMMA_WK[0]})
        x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
        _assert_graph_replays_match_eager(layer, x)
        ref = reference_gemm(x.float(), qw)
        y = layer(x)
        assert layer.plan_info[64]["splits"] == int(splits), layer.plan_info[64]
        assert ((y.float() - ref).norm() / ref.norm()).item() < 1.2e-2


@pytest.mark.parametrize("stages", [2, 3, 5, 6])
@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g256:bfloat16,zp:int"])
def test_direct_ring_depth_vs_unit(stages, desc):
    """Ring depths that are not a multiple of the unit (g128: 2 atoms, g256: 4): the loop body is lcm(depth, unit)."""
    _run(desc, 700, 3072 + 128, 4, KernelChoice(8, 2, 2, 2, 32, stages, "direct"))


def test_direct_cuda_graph_replay():
    """Split tickets reset by the last block: graph replays give the eager result bit for bit."""
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(3000, 4096, device="cuda") * 0.05, desc, name="graph_direct")
    layer = GemmLayer(qw, None, torch.bfloat16, choices={8: DIRECT8[0]})
    _assert_graph_replays_match_eager(layer, torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16))


def test_direct_large_activations_fp16():
    """Accumulator-side zeros cancel the magic number against sum(x) (fp16: 1024 + code): activations of a few
    hundred in fp16 stay within the usual tolerance of the reference, with and without a bias in x's mean."""
    for shift in (0.0, 3.0):
        desc = WeightDesc.parse("w:uint4,s:g128:float16,zp:int")
        qw = quantize_weight(torch.randn(512, 4096, device="cuda") * 0.05, desc, name="fp16_large_x")
        layer = GemmLayer(qw, None, torch.float16, choices={8: DIRECT8[0]})
        x = ((torch.randn(5, 4096, device="cuda") + shift) * 100).to(torch.float16)
        ref = reference_gemm(x.float(), qw)
        y = layer(x)
        rel = ((y.float() - ref).norm() / ref.norm()).item()
        assert rel < 1.2e-2, f"shift {shift}: rel err {rel:.3e}"


# Thread block clusters (sm_90+): the K splits of a tile as one cluster, summed through distributed shared memory
# (cluster_splitk_epilogue) -- mma.sync with 1 / 2 / 4 K-warps, wgmma with 8 and 16 tokens, clusters of 2 / 4 / 8.
DIRECT_CLUSTER = [KernelChoice(8, 4, 2, 2, 256, 4, "direct", cluster=8), KernelChoice(8, 2, 2, 4, 64, 3, "direct", cluster=4),
                  KernelChoice(16, 2, 1, 1, 64, 3, "direct", cluster=2)]
DIRECT_CLUSTER_WGMMA = [KernelChoice(8, 8, 1, 1, 256, 4, "direct", "wgmma", cluster=8),
                        KernelChoice(16, 8, 1, 1, 256, 4, "direct", "wgmma", cluster=4),
                        KernelChoice(16, 4, 2, 1, 64, 2, "direct", "wgmma", cluster=2)]


def _cluster_ok():
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9


@pytest.mark.skipif(not _cluster_ok(), reason="thread block clusters need sm_90+")
@pytest.mark.parametrize("choice", DIRECT_CLUSTER + DIRECT_CLUSTER_WGMMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 3, 8, 16, 17])
def test_direct_cluster_int4_shapes(choice, m, monkeypatch):
    """Every split count of the cluster, K tails (4288: a last split shorter than the others; 8200: a partial atom;
    576: splits that hold nothing), N not a multiple of the block's rows, several token tiles."""
    if choice.wgmma and not _wgmma_ok():
        pytest.skip("wgmma needs sm_90a (H100/H200)")
    if m > choice.bt and m != 17:
        pytest.skip("a token tile serves M <= bt (M=17: several tiles)")
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 4288), (200, 8200), (6144, 576), (16, 14336)]:
        if choice.runs_shape(k, 128):
            _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


@pytest.mark.skipif(not _cluster_ok(), reason="thread block clusters need sm_90+")
@pytest.mark.parametrize("desc", FORMATS)
def test_direct_cluster_formats(desc, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    choices = DIRECT_CLUSTER[:1] + (DIRECT_CLUSTER_WGMMA[:2] if _wgmma_ok() else [])
    for choice in choices:
        for n, k in [(1000, 2048 + 64), (256, 4096)]:
            _run(desc, n, k, 2 if choice.bt == 8 else 13, choice, dtype=dtype)


@pytest.mark.skipif(not _cluster_ok(), reason="thread block clusters need sm_90+")
@pytest.mark.parametrize("k", [4096, 14336])
def test_direct_cluster_equals_ticket_path(k, monkeypatch):
    """8-token tiles: the cluster sums the same partials in the same split order as the ticket path (fp32 partials in
    global memory, the last block sums them), so the outputs are bit-identical; CUDA-graph replays match eager."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(3000, k, device="cuda") * 0.05, desc, name="cluster_vs_ticket")
    x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
    for clustered in [c for c in DIRECT_CLUSTER + DIRECT_CLUSTER_WGMMA if c.bt == 8 and (_wgmma_ok() or not c.wgmma)]:
        ticket = KernelChoice(clustered.bt, clustered.warps_n, clustered.tiles_m, clustered.warps_k, clustered.atoms_k,
                              clustered.stages, "direct", clustered.mma)
        layer_c = GemmLayer(qw, None, torch.bfloat16, choices={8: clustered})
        y_c = layer_c(x)
        assert layer_c.plan_info[1]["splits"] == clustered.cluster
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(clustered.cluster))
        layer_t = GemmLayer(qw, None, torch.bfloat16, choices={8: ticket})
        y_t = layer_t(x)
        monkeypatch.delenv("HUMMING_DEBUG_SPLITS")
        assert layer_t.plan_info[1]["atoms_per_split"] == layer_c.plan_info[1]["atoms_per_split"]
        assert torch.equal(y_c, y_t), f"{clustered.short()}: cluster and ticket reductions differ"
        _assert_graph_replays_match_eager(layer_c, x)


@pytest.mark.parametrize("choice", [KernelChoice(8, 4, 2, 2, 256, 4, "direct"), KernelChoice(8, 2, 2, 4, 32, 3, "direct"),
                                    KernelChoice(16, 2, 1, 2, 16, 3, "direct")], ids=lambda c: c.short())
def test_direct_refill_after_math_experiment(choice, monkeypatch):
    """The HUMMING_REFILL_AFTER_MATH experiment (the mma.sync direct kernel consumes a ring slot in place and refills
    it after its math) computes the same outputs as the default order, bit for bit, on K tails, odd N and g128 / g256
    units."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 1000, 4288), ("w:uint4,s:g256:bfloat16,zp:int", 600, 8200)]:
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name="refill")
        x = torch.randn(min(choice.bt, 5), k, device="cuda", dtype=torch.bfloat16)
        y0 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(x.shape[0]): choice})(x)
        monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_REFILL_AFTER_MATH")
        y1 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(x.shape[0]): choice})(x)
        monkeypatch.delenv("HUMMING_DEBUG_DEFINES")
        assert torch.equal(y0, y1), f"{choice.short()} {desc}: the refill order changed the result"
        assert not torch.isnan(y1).any()


@pytest.mark.parametrize("budget", [8192, 73728, -32768])   # negative: the smem ring (HUMMING_DIRECT_SMEM_RING)
@pytest.mark.parametrize("choice", [KernelChoice(8, 3, 1, 4, 64, 4, "direct"), KernelChoice(8, 1, 3, 8, 64, 2, "direct"),
                                    KernelChoice(8, 4, 2, 2, 64, 4, "direct", x16=True),
                                    KernelChoice(16, 2, 1, 2, 16, 3, "direct")], ids=lambda c: c.short())
def test_direct_smem_prefetch_experiment(choice, budget, monkeypatch):
    """The HUMMING_DIRECT_SMEM_PREFETCH experiment (each warp's first atoms copied to shared memory before the grid
    wait, read from there before the register ring takes over) computes the same outputs as the ring alone, bit for
    bit (same atoms, same order): partial and whole prefetches, the whole stream through a warp-private smem ring, K
    tails, odd N, g128 units, integer zero points."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 1000, 4288), ("w:uint4,s:g64:bfloat16,zp:int", 600, 8200),
                       ("w:uint4b8,s:g128:bfloat16", 6144, 4096)]:
        if choice.x16 and "zp" in desc:
            continue   # (x16 choices are forced for zero-point-free int4 here)
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name="prefetch")
        x = torch.randn(min(choice.bt, 5), k, device="cuda", dtype=torch.bfloat16)
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", "1")
        y0 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(x.shape[0]): choice})(x)
        monkeypatch.setenv("HUMMING_DEBUG_DEFINES", f"HUMMING_DIRECT_SMEM_PREFETCH={abs(budget)}"
                           + (",HUMMING_DIRECT_SMEM_RING" if budget < 0 else ""))
        y1 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(x.shape[0]): choice})(x)
        monkeypatch.delenv("HUMMING_DEBUG_DEFINES")
        monkeypatch.delenv("HUMMING_DEBUG_SPLITS")
        assert not torch.isnan(y1).any()
        assert torch.equal(y0, y1), f"{choice.short()} {desc} {n}x{k}: the prefetch changed the result"
        ref = reference_gemm(x.float(), qw)
        assert ((y1.float() - ref).norm() / ref.norm()).item() < 1.2e-2


@pytest.mark.parametrize("choice", [KernelChoice(8, 3, 1, 4, 64, 4, "direct", x16=True, pf=72),
                                    KernelChoice(8, 3, 1, 4, 64, 4, "direct"),
                                    KernelChoice(8, 4, 2, 2, 256, 4, "direct", x16=True),
                                    KernelChoice(16, 4, 1, 2, 256, 4, "direct")], ids=lambda c: c.short())
def test_direct_window_pass_matches_the_row_major_pass(choice, monkeypatch):
    """Phase 2's pass over x (gemm_wna16_direct.cuh, direct_window_pass: up to four (row, pass) items per thread,
    the max and the sum in the same butterfly rounds; by default reading x from global memory itself, or from the
    copied tile under HUMMING_DIRECT_XPASS_FROM_SMEM) computes what the row-major pass of sessions 9-36 computed
    (HUMMING_DIRECT_XPASS_ROW_MAJOR), bit for bit, at every token count of the tile (the one / two / groups-of-four
    paths, a partial last group), windows of 128 / 64 columns, integer and float zero points, int3, K tails, odd N; no
    NaN, and within the fp32 reference's tolerance.  The same K splits for both (HUMMING_DEBUG_SPLITS: the two kernels'
    registers differ, and with them the planner's split count).  Activations of 0.25-1.25 in magnitude: the x16 window
    sums are those of the bf16 values times 2^sh, the old pass summed the fp16 values -- equal unless a value falls
    below fp16's normal range after scaling (2^-28 of its window's max; test_direct_x16 covers such rows by tolerance)."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.setenv("HUMMING_DEBUG_SPLITS", "2")
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    cases = [("w:uint4b8,s:g128:bfloat16", 6144, 4096), ("w:uint4,s:g64:bfloat16,zp:int", 600, 8200),
             ("w:uint4,s:g128:bfloat16,zp:float", 1000, 4288), ("w:uint3b4,s:g128:bfloat16", 520, 2112)]
    ms = [1, 2, 3, 4, 5, 8] if choice.bt == 8 else [1, 2, 7, 9, 13, 16]
    for desc, n, k in cases:
        if choice.x16 and ("zp" in desc or "uint3" in desc):
            continue   # (x16 serves zero-point-free 4-bit integer codes)
        if choice.pf and (n, k) != (6144, 4096):
            continue   # (the prefetch choice: the layer it is made for)
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name="xpass")
        for m in ms:
            x = torch.randn(m, k, device="cuda")
            x = (x.sign() * (0.25 + torch.rand_like(x))).to(torch.bfloat16)
            monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_DIRECT_XPASS_ROW_MAJOR")
            y0 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})(x)
            monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_DIRECT_XPASS_FROM_SMEM")
            y2 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})(x)
            monkeypatch.delenv("HUMMING_DEBUG_DEFINES")
            y1 = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})(x)
            assert not torch.isnan(y1).any(), (choice.short(), desc, m)
            assert torch.equal(y0, y1), f"{choice.short()} {desc} {n}x{k} M={m}: the pass changed the result"
            assert torch.equal(y0, y2), f"{choice.short()} {desc} {n}x{k} M={m}: the pass from smem differs"
            ref = reference_gemm(x.float(), qw)
            assert ((y1.float() - ref).norm() / ref.norm()).item() < 1.2e-2


def _default_plans(desc, n, k, dtype, ms, name):
    """One layer of ``desc`` with a bias, run at each M of ``ms`` on its own plan (no forced choice) and checked by
    _check_layer (fp32 reference, NaN-poisoned outputs, two calls bit-identical); yields (m, layer, x, the launched
    choice's short name) for the caller's assertions about what the heuristics picked."""
    w = torch.randn(n, k, device="cuda") * 0.05
    qw = quantize_weight(w, WeightDesc.parse(desc), name=name, bias=torch.randn(n, device="cuda"))
    layer = GemmLayer(qw, None, dtype)
    for m in ms:
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        _check_layer(layer, qw, x, f"{desc} {n}x{k} M={m}")
        yield m, layer, x, layer.plan_info[m]["choice"]


@pytest.mark.skipif(not _wgmma_ok(), reason="the prefetch plan serves sm_90a layers (H100/H200)")
def test_smem_prefetch_defaults(monkeypatch):
    """What the heuristics launch at 1-2 tokens (SMEM_PF_MAX_M) on small 4-bit layers
    (heuristics.smem_prefetch_decode_choice: one block of 16-48 rows per SM, its weights copied to shared memory
    before the grid wait with the token count's budget, SMEM_PREFETCH_KB_BY_M, the x16 twin for bf16) and at 3 tokens
    (the bucket's wgmma choice): against the fp32 reference with bias, NaN-poisoned outputs, two calls bit-identical,
    and a CUDA graph of the layer equal to its eager calls -- K tails, odd N, zero points, fp16."""
    monkeypatch.delenv("HUMMING_SMEM_PREFETCH", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    for desc, n, k, dtype in [("w:uint4b8,s:g128:bfloat16", 6144, 4096, torch.bfloat16),
                              ("w:uint4b8,s:g128:float16", 4096, 4096, torch.float16),
                              ("w:uint4,s:g64:bfloat16,zp:int", 2000, 4032, torch.bfloat16),
                              ("w:uint4b8,s:g128:bfloat16", 5000, 2048, torch.bfloat16),
                              ("w:int4,s:channel:bfloat16", 3000, 4096, torch.bfloat16)]:
        for m, layer, x, chosen in _default_plans(desc, n, k, dtype, (1, 2, 3), "pf_default"):
            # (3+ tokens: the bucket's wgmma decode, on these small layers with its own prefetch since session 42)
            assert ("_pf" in chosen and "wgmma" not in chosen) == (m <= SMEM_PF_MAX_M), (desc, n, k, m, chosen)
            if m <= SMEM_PF_MAX_M:
                assert f"_pf{SMEM_PREFETCH_KB_BY_M[m - 1]}_" in chosen, (desc, n, k, m, chosen)
                _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_wgmma_prefetch_defaults(monkeypatch):
    """What the heuristics launch at 1-16 tokens on small int4 / int3 / MXFP4 / NVFP4 / int8 / fp8 layers with K <= 4096
    (heuristics.wgmma_prefetch_decode_choice: the wgmma decode with each block's whole weight range copied to shared
    memory before the grid wait -- int4 since session 42, the others since session 43): the plan's own choice
    asserted, against the fp32 reference with bias, NaN-poisoned outputs, two calls bit-identical, a CUDA graph equal
    to the eager calls; K tails and odd N; a larger layer keeps the plain decode."""
    monkeypatch.delenv("HUMMING_WG_PREFETCH", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    for desc, n, k, dtype in [("w:uint3b4,s:g128:bfloat16", 4096, 4096, torch.bfloat16),
                              ("w:uint3b4,s:g128:float16", 2000, 4032, torch.float16),
                              ("w:float4_e2m1,s:g32:float8_e8m0fnu", 2048, 4096, torch.bfloat16),
                              ("w:float4_e2m1,s:g32:float8_e8m0fnu", 1000, 2080, torch.bfloat16),
                              ("w:uint4b8,s:g128:bfloat16", 4096, 2048, torch.bfloat16),
                              ("w:uint8b128,s:channel:bfloat16", 2048, 4096, torch.bfloat16),
                              ("w:int8,s:channel:float32", 1000, 2080, torch.float16),
                              ("fp8-channel", 1000, 2080, torch.bfloat16),
                              ("nvfp4", 4096, 4096, torch.bfloat16),
                              ("nvfp4", 1000, 2080, torch.bfloat16),
                              ("w:float4_e2m1,s:g32:float8_e8m0fnu", 6144, 4096, torch.bfloat16)]:
        for m, layer, x, chosen in _default_plans(desc, n, k, dtype, (1, 2, 3, 8, 12, 16), "wg_pf_default"):
            if m <= SMEM_PF_MAX_M and "uint4" in desc:
                continue   # (int4 at 1-2 tokens: the mma.sync prefetch grid, test_smem_prefetch_defaults)
            assert chosen.endswith("_direct_wgmma"), (desc, n, k, m, chosen)
            assert ("_pf64_" in chosen) == (n < 6144), (desc, n, k, m, chosen)
            if m in (3, 16):
                _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="the bulk decode rule serves sm_90a layers (H100/H200)")
def test_decode_bulk_defaults(monkeypatch):
    """What the heuristics launch on big layers at 9-32 tokens (heuristics.decode_bulk_choice, session 46): the
    warp-specialized bulk kernel -- at 17-32 tokens on layers of >= DECODE_BULK_MIN_WEIGHTS weights for the measured
    codes (256-row tiles for <= 4-bit codes from DECODE_BULK_WIDE_N rows, else 192-row), at 9-16 tokens on int4
    layers of >= DECODE_BULK_16_MIN_WEIGHTS or with N >= WIDE_N (session 47) --, the direct wgmma decode on smaller layers and where K is not whole
    two-atom stages: the plan's own choice asserted, against the fp32 reference with bias, NaN-poisoned outputs, two
    calls bit-identical, a CUDA graph equal to the eager calls; odd N, fp16, channel scales, zero points, int3,
    MXFP4, NVFP4, int8 and fp8."""
    from vllm_humming.tuning.heuristics import DECODE_BULK_32, DECODE_BULK_32_WIDE, WIDE_DECODE_BULK
    monkeypatch.delenv("HUMMING_DECODE_BULK", raising=False)
    monkeypatch.delenv("HUMMING_WIDE_DECODE_BULK", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    t32, t16 = (17, 24, 32), (9, 16)
    for desc, n, k, dtype, ms, want in [
            ("w:uint4b8,s:g128:bfloat16", 28672, 4096, torch.bfloat16, t32, DECODE_BULK_32_WIDE),
            ("w:uint4b8,s:g128:float16", 4096, 14336, torch.float16, t32, DECODE_BULK_32),
            ("w:uint4b8,s:g128:bfloat16", 10250, 8192, torch.bfloat16, t32, DECODE_BULK_32_WIDE),
            ("w:uint4,s:g128:bfloat16,zp:int", 8190, 8192, torch.bfloat16, t32, DECODE_BULK_32),
            ("w:int4,s:channel:bfloat16", 14336, 4096, torch.bfloat16, t32, DECODE_BULK_32_WIDE),
            ("w:uint3b4,s:g128:bfloat16", 8192, 8192, torch.bfloat16, t32, DECODE_BULK_32),
            ("w:float4_e2m1,s:g32:float8_e8m0fnu", 28672, 4096, torch.bfloat16, t32, DECODE_BULK_32_WIDE),
            ("nvfp4", 12290, 4096, torch.bfloat16, t32, DECODE_BULK_32_WIDE),
            ("w:uint8b128,s:channel:bfloat16", 4096, 14336, torch.float16, t32, DECODE_BULK_32),
            ("fp8-channel", 28672, 4096, torch.bfloat16, t32, DECODE_BULK_32),
            ("w:uint4b8,s:g128:bfloat16", 37890, 3584, torch.bfloat16, t16, WIDE_DECODE_BULK),
            ("w:uint4b8,s:g128:bfloat16", 9000, 8128, torch.bfloat16, t32, None),   # K: 127 atoms
            ("w:uint4b8,s:g128:bfloat16", 4096, 7168, torch.bfloat16, t32, None),   # too few weights
            ("w:uint4b8,s:g128:bfloat16", 28672, 4096, torch.bfloat16, t16, WIDE_DECODE_BULK),   # N >= WIDE_N
            ("w:uint4b8,s:g128:bfloat16", 14336, 4096, torch.bfloat16, t16, None)]:
        for m, layer, x, chosen in _default_plans(desc, n, k, dtype, ms, "bulk_decode_default"):
            if want is None:
                assert chosen.endswith("_direct_wgmma"), (desc, n, k, m, chosen)
            else:
                assert chosen == want.short(), (desc, n, k, m, chosen)
            if m in (16, 24):
                _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="the whole-tile bulk rule serves sm_90a layers (H100/H200)")
def test_wide_bulk_64_defaults(monkeypatch):
    """What the plan launches at 33-64 tokens on wide int4 layers whose 256-row tiles fill half to all of the SMs
    (heuristics.WIDE_BULK_64, session 52): the warp-specialized bulk kernel with a 5-deep ring, one block per tile --
    against the fp32 reference with bias, NaN-poisoned outputs, two calls bit-identical, a CUDA graph equal to the
    eager calls; odd N (a partial last tile), fp16; a layer of too few tiles and int3 keep the cp.async tile."""
    from vllm_humming.tuning.heuristics import WIDE_BULK_64
    monkeypatch.delenv("HUMMING_WIDE_BULK_64", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_SMS", raising=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for desc, n, k, dtype, ms, whole in [
            ("w:uint4b8,s:g128:bfloat16", 28672, 4096, torch.bfloat16, (33, 64), True),
            ("w:uint4b8,s:g128:float16", 19970, 4096, torch.float16, (48, 64), True),   # 79 tiles, the last partial
            ("w:uint4b8,s:g128:bfloat16", 16384, 4096, torch.bfloat16, (64,), False),   # 64 tiles < half of 132
            ("w:uint3b4,s:g128:bfloat16", 28672, 4096, torch.bfloat16, (64,), False)]:
        whole = whole and 0.5 * sms <= -(-n // 256) <= sms
        for m, layer, x, chosen in _default_plans(desc, n, k, dtype, ms, "wide_bulk_64"):
            assert (chosen == WIDE_BULK_64.short()) == whole, (desc, n, k, m, chosen)
            assert layer.plan_info[m].get("whole_tiles", False) == whole, layer.plan_info[m]
            if m == 64:
                _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="the one-token tiles serve sm_90a layers (H100/H200)")
def test_one_token_tiles_defaults(monkeypatch):
    """What the plan launches at one token on wide and mid-size int4 layers with bf16 activations
    (heuristics.one_token_tiles, session 48): the 224-row tile through its 64 KB shared-memory ring ("ring_x16") where
    that tile is the 8-token choice, the 224-row tile with K splits ("mid_x16") on K=4096 layers of 12288-16383 rows;
    at 2 tokens the plans of before.  Against the fp32 reference with bias, NaN-poisoned outputs, two calls
    bit-identical, a CUDA graph equal to the eager calls; an odd N."""
    monkeypatch.delenv("HUMMING_ONE_TOKEN_TILES", raising=False)
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    for n, want1, want2 in [(28672, "bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct", "bt8_wn14_tm1_wk2_ak256_s4_x16_direct"),
                            (14336, "bt8_wn14_tm1_wk2_ak256_s4_x16_direct", "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"),
                            (12290, "bt8_wn14_tm1_wk2_ak256_s4_x16_direct", "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma")]:
        for m, layer, x, chosen in _default_plans("w:uint4b8,s:g128:bfloat16", n, 4096, torch.bfloat16, (1, 2),
                                                  "one_token_tiles"):
            assert chosen == (want1 if m == 1 else want2), (n, m, chosen)
            if m == 1:
                _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("m", [1, 5, 8])
def test_splitk_8_token_ticket(m, monkeypatch):
    """The 8-token split-K end (gemm_wna16.cuh, splitk_epilogue: one acq_rel ticket atomic per block, the last block
    sums the S partials in split order): against the fp32 reference for several forced split counts, K tails and odd
    N; repeated calls bit-identical; every ticket back at zero after the calls; CUDA-graph replays match eager."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    choice = KernelChoice(8, 8, 1, 1, 256, 4, "direct", "wgmma")
    for n, k, splits in [(6144, 4096, 8), (1000, 4288, 5), (200, 1088, 3)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice, splits=splits, monkeypatch=monkeypatch)
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse("w:uint4b8,s:g128:bfloat16"),
                             name="ticket8")
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(splits))
        layer = GemmLayer(qw, None, torch.bfloat16, choices={8: choice})
        outs = [layer(x).clone() for _ in range(3)]
        assert layer.plan_info[m]["splits"] == splits
        assert all(torch.equal(outs[0], y) for y in outs[1:]), f"{n}x{k} M={m}: repeated calls differ"
        assert int(layer._tickets.abs().sum()) == 0, "a split-K ticket was left non-zero"
        _assert_graph_replays_match_eager(layer, x)
        monkeypatch.delenv("HUMMING_DEBUG_SPLITS")


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("stages", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("bt", [8, 16])
def test_direct_wgmma_ring_depths(stages, bt, monkeypatch):
    """The direct wgmma decode kernel at register-ring depths that are and are not multiples of its two fragment
    buffers (the loop body is lcm(depth, 2) atoms, the tail atoms one branch each): g128 / g256 with and without zero
    points, fp16, a float family with 128-column block scales, K with a partial group (1088 with g128) or a partial
    atom, ranges of 1..3 atoms and one much longer than a body (forced splits), 1..kBT valid token rows; against the
    fp32 reference, NaN-poisoned outputs, two calls bit-identical.  (Until session 42 this test ran the removed
    accumulator-side windows experiment.)"""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    choice = KernelChoice(bt, 4, 2 if bt == 16 else 1, 1, 256, stages, "direct", "wgmma")
    descs = [("w:uint4b8,s:g128:bfloat16", torch.bfloat16), ("w:uint4,s:g256:bfloat16,zp:int", torch.bfloat16),
             ("w:uint4,s:g128:float16,zp:float", torch.float16), ("w:uint3b4,s:g128:float16", torch.float16),
             ("w:float8_e4m3fn,s:b128x128:float32", torch.bfloat16)]
    for desc, dtype in descs:
        for n, k, m, splits in [(1000, 1088, bt, None), (256, 4096, 1, None), (200, 8200, bt - 3, 3),
                                (512, 4096 + 256, 2, 1), (320, 2048, 5, 16), (128, 256 * 3, bt, 3)]:
            _run(desc, n, k, m, choice, dtype=dtype, splits=splits, monkeypatch=monkeypatch)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("short", ["bt16_wn8_tm2_wk1_ak256_s2_pf72_direct_wgmma", "bt16_wn8_tm2_wk1_ak256_s2_pf24_direct_wgmma",
                                   "bt8_wn8_tm1_wk1_ak256_s4_pf48_direct_wgmma", "bt16_wn8_tm2_wk1_ak256_s2_c2_pf40_direct_wgmma"])
def test_direct_wgmma_prefetch(short, monkeypatch):
    """The direct wgmma decode with its first positions copied to shared memory before the grid wait ("_pf<KB>",
    session 42): against the fp32 reference (NaN-poisoned outputs, two calls bit-identical) and bit-identical to the
    same kernel without the prefetch at the same K splits (the same sums in the same order); all positions
    prefetched (small ranges), part of them, an odd count (the kernel uses an even number), K tails, odd N, integer
    zeros, int3 / int8 / MXFP4, fp16, 1..kBT valid token rows; a CUDA graph equals the eager calls."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    choice = KernelChoice.parse(short)
    plain = dataclasses.replace(choice, pf=0)
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 6144, 4096), ("w:uint4b8,s:g128:bfloat16", 1000, 1088),
                       ("w:uint3b4,s:g128:bfloat16", 520, 2112), ("w:uint4,s:g64:bfloat16,zp:int", 600, 8200),
                       ("w:uint8b128,s:channel:bfloat16", 2048, 4096), ("w:float4_e2m1,s:g32:float8_e8m0fnu", 768, 4096),
                       ("w:int4,s:g128:float16", 256, 1088)]:
        dtype = torch.float16 if "float16" in desc else torch.bfloat16
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name="wg_pf")
        if choice.cluster and k > 4096:
            continue   # (two splits of 65 atoms: x and the prefetch exceed a block's shared memory -- refused)
        for m in ([1, 5, 8] if choice.bt == 8 else [1, 9, 16]):
            layer = GemmLayer(qw, None, dtype, choices={m_bucket(m): choice})
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            _check_layer(layer, qw, x, f"{short} {desc} {n}x{k} M={m}")
            info = layer.plan_info[m]
            # (at 1-2 tokens a small int4 layer's plan launches the mma.sync prefetch grid instead of a bucket-8 choice)
            assert info["choice"] == short or (choice.bt == 8 and m <= SMEM_PF_MAX_M), info
            y1 = layer(x)
            if not choice.cluster:
                monkeypatch.setenv("HUMMING_DEBUG_SPLITS", str(info["splits"]))
            y0 = GemmLayer(qw, None, dtype, choices={m_bucket(m): plain})(x)
            monkeypatch.delenv("HUMMING_DEBUG_SPLITS", raising=False)
            assert torch.equal(y0, y1), f"{short} {desc} {n}x{k} M={m}: differs from the kernel without the prefetch"
        _assert_graph_replays_match_eager(layer, x)


@pytest.mark.parametrize("choice", DIRECT8[:2] + DIRECT16, ids=lambda c: c.short())
def test_direct_fp16_row16(choice, monkeypatch):
    """4-bit codes in fp16 (dequant.cuh raw_row16 + DirectPlan::kRow16, the default for fp16 activations on the
    mma.sync kernel: rows g + 8 read kRawBias + 16 * code and are divided by 16 at the fold): signed int4 g128, uint4
    with integer (g64) and float (g32) zero points, channel scales; K tails, odd N, 1..kBT valid rows; against the fp32
    reference, NaN-poisoned outputs, two calls bit-identical -- with the row16 decode and with it turned off."""
    for defines in ("", "HUMMING_NO_FP16_ROW16"):
        monkeypatch.setenv("HUMMING_DEBUG_DEFINES", defines)
        for desc in ["w:int4,s:g128:float16", "w:uint4,s:g64:float16,zp:int", "w:uint4,s:g32:float16,zp:float",
                     "w:uint4b8,s:channel:float16"]:
            for n, k, m in [(1000, 1088, 1), (256, 4096, choice.bt), (200, 8200, 3)]:
                _run(desc, n, k, m, choice, dtype=torch.float16)


def test_direct_x16_forced_where_it_does_not_apply():
    """A forced x16 choice on a layer it means nothing for (fp16 activations, 8-bit codes) is refused before anything
    is compiled, naming the layer, the description and what x16 serves."""
    x16 = dataclasses.replace(DIRECT8[0], x16=True)
    for desc, dtype in [("w:uint4b8,s:g128:float16", torch.float16), ("w:uint8b128,s:channel:bfloat16", torch.bfloat16)]:
        qw = quantize_weight(torch.randn(256, 512, device="cuda") * 0.05, WeightDesc.parse(desc), name="x16_refused")
        layer = GemmLayer(qw, None, dtype, choices={8: x16})
        with pytest.raises(DescError, match=r"x16_refused.*x16 choices stage bf16 activations"):
            layer(torch.randn(1, 512, device="cuda", dtype=dtype))


@pytest.mark.parametrize("choice", DIRECT8[:2] + DIRECT16, ids=lambda c: c.short())
def test_direct_x16(choice, monkeypatch):
    """x16 choices (KernelChoice.x16 -> gemm_wna16_direct.cuh, DirectPlan::kX16: bf16 activations staged as fp16,
    each window of each token scaled by its own power of two, fp16 MMAs with the raw_row16 decode, the scale undone
    at the fold; the layers' plans launch them at 1-2 tokens): symmetric int4 g128 / g256 / g16, uint4 with integer
    (g64) and float (g32) zero points, channel scales; K tails, odd N, 1..kBT valid rows; against the fp32 reference,
    NaN-poisoned outputs, two calls bit-identical.  Then activations outside fp16's range: token rows from 1e-6
    (below fp16's normals) to 1e5 (above its largest value), a row whose windows alternate 1e4 and 1e-3, a row of
    zeros -- per-row relative error, finite outputs."""
    import dataclasses

    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    choice = dataclasses.replace(choice, x16=True)
    for desc in ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int", "w:uint4,s:g32:bfloat16,zp:float",
                 "w:uint4b8,s:channel:bfloat16", "w:int4,s:g256:bfloat16", "w:uint4b8,s:g16:bfloat16"]:
        for n, k, m in [(1000, 1088, 1), (256, 4096, choice.bt), (200, 8200, 3)]:
            _run(desc, n, k, m, choice)
        dw = WeightDesc.parse(desc)
        qw = quantize_weight(torch.randn(512, 2048, device="cuda") * 0.05, dw, name="x16_rows")
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(choice.bt): choice})
        x = torch.randn(choice.bt, 2048, device="cuda")
        x *= torch.logspace(-6, 5, choice.bt, device="cuda")[:, None]
        x[1] = torch.randn(2048, device="cuda") * torch.tensor([1e4, 1e-3], device="cuda").repeat_interleave(64).repeat(16)
        x[2] = 0
        x = x.to(torch.bfloat16)
        ref = reference_gemm(x.float(), qw)
        y = layer(x).float()
        assert bool(torch.isfinite(y).all()), f"{desc} {choice.short()}: non-finite outputs"
        assert bool((y[2] == 0).all()), f"{desc} {choice.short()}: a zero row gave {y[2].abs().max().item()}"
        keep = torch.arange(choice.bt, device="cuda") != 2
        rel = (y - ref)[keep].norm(dim=1) / ref[keep].norm(dim=1)
        assert bool((rel < 1.2e-2).all()), f"{desc} {choice.short()}: per-row rel err {rel.tolist()}"


@pytest.mark.parametrize("desc,n,k,m", [("w:uint4b8,s:g128:bfloat16", 6144, 4096, 1),
                                        ("w:uint4b8,s:g128:bfloat16", 28672, 4096, 1),
                                        ("w:uint4b8,s:g128:bfloat16", 4096, 14336, 8),
                                        ("w:uint4,s:g128:bfloat16,zp:int", 4096, 4096, 3),
                                        ("w:uint4b8,s:g128:float16", 6144, 4096, 2)])
def test_decode_chain_under_memory_load_matches_each_layer_alone(desc, n, k, m):
    """The bench's and a model's setting: distinct layers back to back in one CUDA graph under programmatic dependent
    launch (each kernel's phase 1 -- weights, scales -- runs while the previous one finishes), replayed while another
    stream streams a large copy through HBM.  Every layer's output equals that layer run alone, synchronized, bit for
    bit (the plans are deterministic).  Session 38's first fused pass over x read the group scales before their
    cp.async had landed -- right almost always, wrong under load; this is the load."""
    torch.manual_seed(38)
    dt = torch.float16 if "float16" in desc else torch.bfloat16
    layers = 6
    built, xs, refs = [], [], []
    for _ in range(layers):
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name="chain")
        layer = GemmLayer(qw, None, dt)
        x = torch.randn(m, k, device="cuda", dtype=dt)
        y = layer(x)
        torch.cuda.synchronize()
        built.append(layer)
        xs.append(x)
        refs.append(y.clone())
    outs = [torch.full((m, n), float("nan"), device="cuda", dtype=dt) for _ in range(layers)]

    def chain():
        for layer, x, out in zip(built, xs, outs):
            layer(x, out=out)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        chain()                                  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain()
    big_a = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    big_b = torch.empty_like(big_a)
    load = torch.cuda.Stream()
    for rep in range(20):
        for o in outs:
            o.fill_(float("nan"))
        with torch.cuda.stream(load):
            for _ in range(3):
                big_b.copy_(big_a)               # ~1 GB of HBM traffic beside the chain
        g.replay()
        torch.cuda.synchronize()
        for i, (o, r) in enumerate(zip(outs, refs)):
            assert torch.equal(o, r), f"{desc} {n}x{k} M={m}: layer {i} differs from its solo run (replay {rep})"
