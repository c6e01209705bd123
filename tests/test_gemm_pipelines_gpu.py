"""GPU: the two mainloops (cp.async ring with split-K, bulk-copy pipeline with persistent stream-K) against the fp32
reference, with forced execution choices -- every stream-K corner: tiles split across 2+ blocks, blocks spanning
several tiles, several token tiles, N not a multiple of the block's rows, more blocks than tiles, one block.

Output poisoned with NaN before each call; fresh random inputs per case; repeated calls must be bit-identical
(the split reduction is deterministic).
"""

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import GemmLayer, format_params
from vllm_humming.reference import quantize_weight, reference_gemm
from vllm_humming.tuning.heuristics import KernelChoice, groups_per_stage, m_bucket

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _bulk_ok():
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9


BULK = [
    KernelChoice(8, 4, 2, 1, 2, 8, "bulk"),
    KernelChoice(8, 4, 1, 2, 2, 4, "bulk"),
    KernelChoice(16, 4, 2, 2, 2, 6, "bulk"),
    KernelChoice(32, 4, 2, 2, 2, 5, "bulk"),
    KernelChoice(64, 8, 1, 1, 2, 4, "bulk"),
    KernelChoice(16, 2, 1, 1, 1, 3, "bulk"),
]

FORMATS = ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int", "w:uint3b4,s:g128:bfloat16",
           "w:uint8b128,s:channel:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu",
           "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:uint4,s:g32:float16,zp:float",
           "w:uint2b2,s:g256:bfloat16"]


def _run(desc_str, n, k, m, choice, dtype=torch.bfloat16, bias=True, grid_cap=None, tol=1.2e-2):
    desc = WeightDesc.parse(desc_str)
    w = torch.randn(n, k, device="cuda") * 0.05
    b = torch.randn(n, device="cuda") if bias else None
    qw = quantize_weight(w, desc, name=f"pipe[{desc_str}]", bias=b)
    layer = GemmLayer(qw, None, dtype, choices={m_bucket(m): choice})
    if grid_cap is not None:
        layer.info = type(layer.info)(layer.info.arch, grid_cap, layer.info.smem_per_block, layer.info.smem_per_sm)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    return _check_layer(layer, qw, x, f"{desc_str} {choice.short()} N={n} K={k} M={m}", tol)


def _check_layer(layer, qw, x, label, tol=1.2e-2):
    """Two calls of ``layer`` on x into NaN-poisoned outputs: no NaN, within ``tol`` of the fp32 reference, and
    bit-identical to each other (deterministic reductions).  Returns the relative error."""
    m, n = x.shape[0], layer.n
    ref = reference_gemm(x.float(), qw)
    outs = []
    for _ in range(2):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=x.dtype)
        outs.append(layer(x, out=out))
    torch.cuda.synchronize()
    y = outs[0]
    assert not torch.isnan(y).any(), f"{label}: unwritten or NaN outputs"
    rel = ((y.float() - ref).norm() / ref.norm().clamp(min=1e-6)).item()
    assert rel < tol, f"{label}: rel err {rel:.3e}"
    assert torch.equal(outs[0], outs[1]), f"{label}: two calls differ (non-deterministic reduction)"
    return rel


@pytest.mark.skipif(not _bulk_ok(), reason="bulk pipeline needs sm_90+")
@pytest.mark.parametrize("choice", BULK, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 5, 16, 17, 33, 64])
def test_bulk_int4_shapes(choice, m):
    if m > 64:
        pytest.skip("bulk pipeline serves M <= 64")
    for n, k in [(4096, 4096), (1000, 1024), (200, 8192), (6144, 512), (16, 128)]:
        if (k // 64) % choice.atoms_k:
            continue
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


# four atoms per stage (session 52, an experiment: fewer, bigger ring slots; forced choices only)
BULK_AK4 = [KernelChoice(16, 12, 2, 1, 4, 3, "bulk", "wgmma", tma_x=True),
            KernelChoice(32, 8, 2, 1, 4, 3, "bulk", "wgmma", tma_x=True)]


@pytest.mark.skipif(not (_bulk_ok() and torch.cuda.get_device_capability() == (9, 0)), reason="wgmma: sm_90a")
@pytest.mark.parametrize("choice", BULK_AK4, ids=lambda c: c.short())
@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:float16,zp:int",
                                  "w:float4_e2m1,s:g32:float8_e8m0fnu"])
@pytest.mark.parametrize("m", [1, 9, 16, 32])
def test_bulk_four_atom_stages(choice, desc, m):
    """Bulk wgmma stages of four 64-column atoms (fragment buffers alternating per atom, four TMA boxes of x and
    1-8 scale groups per stage): every K a whole number of 256-column stages, odd N, stream-K grids of every size
    through the layer's plan and a capped one (joins of split tiles)."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(28672, 4096), (1000, 1024), (6144, 512), (400, 7936)]:
        if choice.bt < m:
            continue
        _run(desc, n, k, m, choice, dtype=dtype)
    _run(desc, 4096, 4096, m, choice, dtype=dtype, grid_cap=7)


@pytest.mark.skipif(not _bulk_ok(), reason="bulk pipeline needs sm_90+")
@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [1, 17, 64])
def test_bulk_formats(desc, m):
    choice = {1: BULK[0], 17: BULK[3], 64: BULK[4]}[m]
    _run(desc, 1000, 2048, m, choice, dtype=torch.float16 if "float16,zp" in desc else torch.bfloat16)


@pytest.mark.skipif(not _bulk_ok(), reason="bulk pipeline needs sm_90+")
@pytest.mark.parametrize("blocks", [1, 3, 7, 1000])
def test_bulk_grid_sizes(blocks):
    """Stream-K with 1 block (one block walks every tile), a few blocks (tiles split 2-3 ways at odd points) and more
    slots than units (one unit per block)."""
    _run("w:uint4b8,s:g128:bfloat16", 520, 1024, 3, BULK[0], grid_cap=blocks)
    _run("w:uint4b8,s:g128:bfloat16", 520, 1024, 40, BULK[4], grid_cap=blocks)


@pytest.mark.parametrize("m", [1, 17, 64])
def test_cp_async_forced(m, monkeypatch):
    """The cp.async kernel still serves sm_80/89 and shapes the bulk pipeline cannot run."""
    choice = {1: KernelChoice(8, 4, 2, 1, 1, 3), 17: KernelChoice(32, 8, 1, 2, 2, 4),
              64: KernelChoice(64, 8, 1, 2, 2, 4)}[m]
    _run("w:uint4b8,s:g128:bfloat16", 4096, 4096, m, choice)
    _run("w:uint4,s:g64:bfloat16,zp:int", 1000, 1088, m, choice)


def test_default_choice_falls_back_for_odd_k(monkeypatch):
    """With the bulk pipeline requested, K = 1088 (17 atoms) cannot be cut into two-atom stages: the heuristics pick
    the cp.async kernel."""
    monkeypatch.setenv("HUMMING_PIPELINE", "bulk")
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(256, 1088, device="cuda") * 0.05, desc, name="oddk")
    layer = GemmLayer(qw, None, torch.bfloat16)
    assert not layer._choice(8).bulk
    qw = quantize_weight(torch.randn(256, 1024, device="cuda") * 0.05, desc, name="evenk")
    layer = GemmLayer(qw, None, torch.bfloat16)
    assert layer._choice(8).bulk == _bulk_ok()


def _assert_graph_replays_match_eager(layer, x):
    """Capture one call in a CUDA graph; replays into a NaN-poisoned output give the eager result bit for bit (the
    split / stream-K tickets are back at zero after every call)."""
    y0 = layer(x).clone()
    out = torch.empty_like(y0)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        layer(x, out=out)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        layer(x, out=out)
    for _ in range(3):
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, y0)


@pytest.mark.skipif(not _bulk_ok(), reason="bulk pipeline needs sm_90+")
def test_bulk_cuda_graph_replay():
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(3000, 4096, device="cuda") * 0.05, desc, name="graph")
    layer = GemmLayer(qw, None, torch.bfloat16)
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    _assert_graph_replays_match_eager(layer, x)


# the direct decode kernel: tests/test_gemm_direct_gpu.py


def test_forced_choice_the_layer_cannot_run_is_refused():
    from vllm_humming.desc import DescError

    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(256, 1088, device="cuda") * 0.05, desc, name="forced")
    layer = GemmLayer(qw, None, torch.bfloat16, choices={8: BULK[0]})
    x = torch.randn(1, 1088, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(DescError, match=r"forced kernel choice"):
        layer(x)


DECODE16 = [KernelChoice(16, 8, 1, 2, 2, 4), KernelChoice(16, 4, 2, 1, 1, 5), KernelChoice(16, 8, 2, 2, 2, 3)]


@pytest.mark.parametrize("choice", DECODE16, ids=lambda c: c.short())
@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int", "w:uint3b4,s:g128:bfloat16",
                                  "w:uint8b128,s:channel:bfloat16", "w:uint8,s:g64:float16,zp:int",
                                  "w:uint4,s:g32:float16,zp:float", "w:uint2b2,s:g256:bfloat16",
                                  "w:int4,s:g128:float16"])
@pytest.mark.parametrize("m", [9, 16])
def test_decode16_int_zero_in_operand(choice, desc, m):
    """16-token tiles subtract integer zeros from the raw pairs before the MMA (no sum(x) MMAs); float zeros keep the
    sum(x) route -- both against the fp32 reference, bf16 and fp16, K tails and odd N."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(1000, 2048), (4096, 4096), (200, 1088)]:
        _run(desc, n, k, m, choice, dtype=dtype)


@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [1, 5, 8])
def test_decode8_two_stage_ring(desc, m):
    """The 8-bit M <= 8 choice (a ring of two stages), every format, K tails and odd N."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(1000, 2048), (4096, 4096), (200, 1088)]:
        _run(desc, n, k, m, KernelChoice(8, 4, 2, 1, 1, 2), dtype=dtype)


def _check_default_choice(desc, n, k, m, name):
    """The layer's own choice (heuristics) for an [n, k] layer at M = m vs the fp32 reference, output poisoned."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16   # the activations of a float16-scaled format
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name=name)
    layer = GemmLayer(qw, None, dtype)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    ref = reference_gemm(x.float(), qw)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    y = layer(x, out=out)
    torch.cuda.synchronize()
    assert not torch.isnan(y).any()
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1.2e-2, f"{desc} {n}x{k} M={m} ({layer._choice(m_bucket(m)).short()}): rel err {rel:.3e}"


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint8b128,s:channel:bfloat16", "w:uint3b4,s:g128:bfloat16"])
@pytest.mark.parametrize("m", [1, 9, 16])
def test_decode_default_choices(desc, m):
    """The layer's own M <= 16 choices (heuristics) on a wide layer with odd N and a K tail."""
    _check_default_choice(desc, 16400, 1088, m, "wide")


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int",
                                  "w:uint4,s:g32:float16,zp:float"])
@pytest.mark.parametrize("m", [1, 5, 8])
def test_wide_decode_224_row_blocks(desc, m):
    """Session 20: wide 4-bit integer layers whose rows spread more evenly over the SMs in 224-row decode blocks
    (heuristics._direct_defaults: 28672 rows = 128 blocks of 224 instead of 224 of 128 on 132 SMs) take
    bt8_wn7_tm2_wk2 on sm_90a -- N a multiple of 224, odd N (a partial last block), a K tail, a long K."""
    if _wgmma_ok() and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        qw = quantize_weight(torch.randn(28600, 1088, device="cuda"), WeightDesc.parse(desc))
        assert GemmLayer(qw, None, torch.bfloat16)._choice(8).short() == "bt8_wn14_tm1_wk2_ak256_s4_direct"
    for n, k in [(28672, 4096), (28600, 1088), (28610, 8192)]:
        _check_default_choice(desc, n, k, m, "wide_decode")


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint3b4,s:g128:bfloat16"])
@pytest.mark.parametrize("m", [9, 13, 16])
def test_wide_cluster_default_choices(desc, m, monkeypatch):
    """The default for wide int3 / int4 layers at 9-16 tokens (sm_90a): the direct wgmma kernel with two K splits
    summed by a 2-block cluster -- a whole-stage K, the largest K the rule takes, a K tail, odd N.  Session 43's
    prefetching decode (heuristics.wgmma_prefetch_decode_choice) comes first where one block per SM holds its whole
    weight range: on the 1088-column layer int3's 128-row ranges do (int4's 256-row grid does not), so the cluster
    rule itself is checked with that rule off, and the precedence with it on.  Wide int4 layers whose K is whole
    two-atom stages take the bulk kernel instead by default since session 47 (HUMMING_WIDE_DECODE_BULK; the bulk tests
    check it): off here, so the cluster rule stays covered."""
    monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "0")
    if _wgmma_ok():
        qw = quantize_weight(torch.randn(16400, 1088, device="cuda"), WeightDesc.parse(desc))
        monkeypatch.setenv("HUMMING_WG_PREFETCH", "0")
        assert GemmLayer(qw, None, torch.bfloat16)._choice(16).cluster == 2
        monkeypatch.delenv("HUMMING_WG_PREFETCH")
        c = GemmLayer(qw, None, torch.bfloat16)._choice(16)
        if "uint3" in desc:
            assert c.pf and not c.cluster, c.short()
        else:
            assert c.cluster == 2, c.short()
    for n, k in [(28672, 4096), (16400, 8192), (16390, 1088)]:
        _check_default_choice(desc, n, k, m, "wide_cluster")


@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [33, 47, 64])
def test_narrow_m64_default_choices(desc, m):
    """The default for narrow layers with K <= 4096 at 33-64 tokens (sm_90a): the cp.async wgmma kernel's 128-row
    tiles with ticketed K splits whose sums up to 4 blocks share (session 13; session 12 summed two splits in a
    cluster) -- the bench shape, odd N, a K tail, a short K."""
    if _wgmma_ok():
        qw = quantize_weight(torch.randn(6144, 4096, device="cuda") * 0.05, WeightDesc.parse(desc))
        layer = GemmLayer(qw, None, torch.bfloat16)
        assert layer._choice(64).cluster == 0
        layer(torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16))
        assert layer.plan_info[64]["splits"] > 1 and layer.plan_info[64]["reducers"] > 1
    for n, k in [(6144, 4096), (9000, 4032), (12290, 1088), (6150, 192)]:
        _check_default_choice(desc, n, k, m, "narrow_m64")


@pytest.mark.parametrize("desc", FORMATS)
@pytest.mark.parametrize("m", [33, 64, 65, 100, 128, 129, 256, 257, 448, 700, 1024, 1500])
def test_large_m_default_choices(desc, m, monkeypatch):
    """Session 12's defaults from 33 tokens (sm_90a): 256-row tiles on wide layers at 33-64 tokens (and 65-128 since
    session 15), the three-warpgroup bulk kernel on narrow layers with K > 4096 at 129-256 tokens, 256-row tiles (stream-K on wide
    layers) from 257 tokens, and session 14's 129-256 rules (stream-K 256-row tiles on narrow K <= 4096 layers for
    codes of <= 4 bits, the three-warpgroup bulk kernel on wide layers for 8-bit integer codes) -- odd N, K tails where
    the kernel takes them, vs the fp32 reference, output poisoned."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))     # the kernel at every M, not expand + cuBLAS
    if m <= 128:   # + session 15: 256-row tiles on wide layers at 65-128 tokens
        cases = [(16400, 4096), (16390, 1088)]
    elif m <= 256:   # + session 14: narrow K <= 4096 (stream-K 256-row tiles / bulk), wide 8-bit (three warpgroups)
        cases = [(4100, 8192), (4000, 14336), (6000, 4096), (4000, 1088), (16400, 4096)]
    elif m <= 700:
        cases = [(16400, 4096), (16390, 1088), (6144, 4096), (4000, 8200)]
    else:   # + session 18: 256-token tiles from 513 tokens (codes of <= 4 bits), stream-K twins on wave cliffs;
            # session 19: 6144x4096 takes the 192-row sibling at M = 1024 / 1500
        cases = [(16400, 4096), (6144, 4096), (4000, 8200)]
    for n, k in cases:
        _check_default_choice(desc, n, k, m, "large_m")


def _wide_plan_choice(desc, m, name):
    """A wide 16400x4096 layer and the kernel choice its own plan launches at M = m ('' on the prefill path)."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    qw = quantize_weight(torch.randn(16400, 4096, device="cuda") * 0.05, WeightDesc.parse(desc), name=name)
    layer = GemmLayer(qw, None, dtype)
    layer(torch.randn(m, 4096, device="cuda", dtype=dtype))
    return layer, layer.plan_info.get(m, {}).get("choice", "")


FLOAT_ZERO_SMALL_GROUPS = ["w:uint4,s:g16:bfloat16,zp:float", "w:uint4,s:g64:bfloat16,zp:float",
                           "w:uint2,s:g32:bfloat16,zp:float", "w:uint3,s:g64:float16,zp:float",
                           "w:uint3,s:g32:bfloat16,zp:float"]


@pytest.mark.parametrize("desc", FLOAT_ZERO_SMALL_GROUPS)
@pytest.mark.parametrize("m", [257, 300, 512])
def test_float_zero_point_large_m_defaults(desc, m):
    """Session 28 (heuristics FLOAT_ZERO_TMA): codes of <= 4 bits with float zero points and groups of < 128 columns
    take the two-atom stream-K tile with TMA x tiles at 257-384 tokens on every layer, wide ones too (uint3 g32: the
    one-atom tile, FLOAT_ZERO_ONE_ATOM), and at 385-512 the 256-token tile like every code of <= 4 bits -- through
    the layers' own plans, wide, narrow, odd N with a K tail; vs the fp32 reference, output poisoned; the wide
    layer's plan asserted."""
    for n, k in [(16400, 4096), (6144, 4096), (4000, 8200)]:
        _check_default_choice(desc, n, k, m, "float_zero")
    if _wgmma_ok():
        _, choice = _wide_plan_choice(desc, m, "fz_plan")
        want = "bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma" if "uint3,s:g32" in desc else "bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma"
        if m > 384 and "s:g16:" not in desc:
            # session 28: the 256-token tile (or its plan alternatives) on every layer at 385-512 tokens; with
            # 16-column groups and zero points its stages do not fit shared memory and the rules fall through
            want = "bt256_wn"
        assert choice.startswith(want), choice


EIGHT_BIT = ["w:uint8b128,s:channel:bfloat16", "w:float8_e4m3fn,s:channel:float32", "w:float8_e4m3fn,s:b128x128:float32",
             "w:uint8,s:g64:float16,zp:int", "w:float8_e5m2,s:channel:bfloat16"]


@pytest.mark.parametrize("desc", EIGHT_BIT)
@pytest.mark.parametrize("m", [129, 256, 300, 448, 512, 513, 700])
def test_eight_bit_large_m_defaults(desc, m):
    """Session 26's 8-bit rules (heuristics._eight_bit_defaults, default_prefill_m) through the layers' own plans, no
    threshold override: the 128-row x 256-token TMA tile at 129-256 tokens on wide and K > 4096 layers and at 385-512
    on every layer (its stream-K twin on a wave cliff: 9216 rows at 512 tokens), the bulk kernel at 257-384 and on
    narrow K <= 4096 layers at 129-256, expand + cuBLAS from 513 -- integer and float codes, channel / group / block
    scales, zero points, odd N and K tails; vs the fp32 reference, output poisoned."""
    if m <= 256:
        cases = [(16400, 4096), (4000, 8200), (6144, 4096), (1000, 1088)]
    elif m <= 384:
        cases = [(16400, 4096), (4000, 8200)]
    elif m <= 512:
        cases = [(16400, 4096), (4000, 8200), (6150, 4096), (1000, 1088)] + ([(9216, 4096)] if m == 512 else [])
    else:
        cases = [(16400, 4096), (1000, 1088)]
    for n, k in cases:
        _check_default_choice(desc, n, k, m, "eight_bit")
    if _wgmma_ok():
        layer, choice = _wide_plan_choice(desc, m, "eight_bit_plan")
        if m > 512:
            assert layer.uses_prefill_path(m) and not choice
        elif 257 <= m <= 384:
            assert choice.endswith("_bulk_wgmma"), choice
        else:
            assert choice.startswith("bt256_wn8_tm1_wk1_ak1_s4") and "_tma_" in choice, choice


FLOAT_DECODE = ["w:float8_e4m3fn,s:channel:float32", "w:float8_e4m3fn,s:b128x128:float32",
                "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:float8_e5m2,s:channel:bfloat16"]


@pytest.mark.parametrize("desc", FLOAT_DECODE)
@pytest.mark.parametrize("m", [1, 5, 8, 9, 16])
def test_float_decode_defaults(desc, m):
    """Session 27's decode rules for fp8 weight-only (channel / 128x128 block scales, e4m3 / e5m2) and NVFP4
    (heuristics._direct_defaults): at 1-8 tokens the direct wgmma blocks on wide / long-K layers (fp8), the 224-row
    mma.sync blocks on wide layers with group scales (fp8 blocks, NVFP4), the direct wgmma blocks on narrow K <= 4096
    NVFP4 layers; at 9-16 tokens the cp.async wgmma tile -- through the layers' own plans, on the bench's shapes,
    odd N with K tails, and a long odd K; vs the fp32 reference, output poisoned, each plan's choice asserted."""
    for n, k in [(28672, 4096), (28600, 1088), (4000, 8200), (6144, 4096), (6150, 2112)]:
        _check_default_choice(desc, n, k, m, "float_decode")
    if _wgmma_ok() and torch.cuda.get_device_properties(0).multi_processor_count == 132:
        fp8, group = desc.startswith("w:float8"), "s:channel" not in desc
        for n, k in [(28672, 4096), (4096, 14336), (6144, 4096)]:
            layer = GemmLayer(quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc),
                                              name="float_decode_plan"), None, torch.bfloat16)
            layer(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
            choice = layer.plan_info[m]["choice"]
            if m > 8:
                want = "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
            elif n == 28672 and group:
                want = "bt8_wn14_tm1_wk2_ak256_s4_direct"
            elif (fp8 and (n == 28672 or k > 4096)) or (not fp8 and n == 6144):
                want = "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
            else:
                want = None    # the cp.async kernels (unchanged)
            if want:
                assert choice == want, (desc, n, k, m, choice)
            else:
                assert "direct" not in choice, (desc, n, k, m, choice)


@pytest.mark.parametrize("m", [33, 40, 64])
def test_nvfp4_33_to_64_token_defaults(m):
    """Session 30: NVFP4 at 33-64 tokens takes 128-row two-atom tiles on wide layers and one-atom stages on narrow
    K <= 4096 layers (heuristics.choose_kernel) -- through the layers' own plans on the bench shapes, odd N with a K
    tail; vs the fp32 reference, output poisoned; the plan's choice asserted on sm_90a."""
    desc = "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32"
    for n, k in [(28672, 4096), (28600, 1088), (6144, 4096), (6150, 2112), (4096, 14336)]:
        _check_default_choice(desc, n, k, m, "nvfp4_m64")
    if _wgmma_ok():
        for n, k, want in [(28672, 4096, "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma"),
                           (6144, 4096, "bt64_wn8_tm1_wk1_ak1_s4_tma_wgmma"),
                           (4096, 14336, "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma")]:
            layer = GemmLayer(quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc),
                                              name="nvfp4_m64_plan"), None, torch.bfloat16)
            layer(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
            assert layer.plan_info[m]["choice"] == want, (n, k, m, layer.plan_info[m])


def _wgmma_ok():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_plan_alternatives_of_the_256_token_tile(monkeypatch):
    """Sessions 18-19: at M=1024 the 128-row x 256-token split-K tile's plan launches its 192-row sibling where that
    grid needs fewer waves of work (6144x4096: 128 tiles, one wave), else its stream-K twin where the split-K grid's
    last wave would be under 80 % full (9216x4096: 288 tiles on 132 SMs; the sibling's 192 tiles cost the same), else
    itself (16400x4096: 516 tiles).  Each vs the fp32 reference, output poisoned, and each kernel in the layer's specs
    (prewarm / strict no-JIT mode)."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    for n, want in ((6144, "bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma"), (9216, "bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma"),
                    (16400, "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma")):
        qw = quantize_weight(torch.randn(n, 4096, device="cuda") * 0.05, desc, name=f"alt{n}")
        layer = GemmLayer(qw, None, torch.bfloat16)
        x = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16)
        out = torch.full((1024, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        y = layer(x, out=out)
        ref = reference_gemm(x.float(), qw)
        assert layer.plan_info[1024]["choice"] == want, layer.plan_info[1024]
        assert not torch.isnan(y).any()
        assert ((y.float() - ref).norm() / ref.norm()).item() < 1.2e-2
        assert KernelChoice.parse(want) in {KernelChoice.parse(s.config["choice"]) for s in layer.specs()}


def _split_plan_outputs(desc, n, k, m, monkeypatch, name):
    """A layer (bias on) at M = m under the split plans (HUMMING_DP_TAIL=1) and the one grid (0): for each, the plan
    info and the output -- vs the fp32 reference on NaN-poisoned outputs, two calls bit-identical (the second reuses
    the plan, and the tail's tickets the first reset); the two plans' outputs agree."""
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(desc), name=name,
                         bias=torch.randn(n, device="cuda") * 0.1)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    ref = reference_gemm(x.float(), qw)
    outs, infos = {}, {}
    for tail in ("1", "0"):
        monkeypatch.setenv("HUMMING_DP_TAIL", tail)
        layer = GemmLayer(qw, None, dtype)
        ys = [layer(x, out=torch.full((m, n), float("nan"), device="cuda", dtype=dtype)) for _ in range(2)]
        torch.cuda.synchronize()
        infos[tail] = info = layer.plan_info[m]
        assert ("tail" in info) == (tail == "1"), info
        assert not torch.isnan(ys[0]).any()
        assert torch.equal(ys[0], ys[1]), "two calls differ"
        err = ((ys[0].float() - ref).norm() / ref.norm()).item()
        assert err < 1.2e-2, (tail, info, err)
        outs[tail] = ys[0].float()
    assert ((outs["1"] - outs["0"]).norm() / outs["0"].norm()).item() < 4e-3
    return infos["1"]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc,n,k,m", [
    ("w:uint4b8,s:g128:bfloat16", 20480, 1024, 400),    # 320 tiles on 132 SMs: 264 + 56 tiles x 2 splits
    ("w:uint4b8,s:g128:bfloat16", 20456, 1000, 512),    # odd N, a K tail
    ("w:uint4b8,s:g128:float16", 28672, 1024, 768),     # 672 tiles: 660 + 12 tiles x 4 splits
    ("w:uint4,s:g128:bfloat16,zp:int", 20480, 2048, 450),
    ("w:uint3b4,s:g128:bfloat16", 20480, 1024, 512),
    ("mxfp4", 20480, 1024, 512),
])
def test_dp_tail_plan(desc, n, k, m, monkeypatch):
    """Session 30 (heuristics.dp_tail_split): a 256-token split-K grid of 2+ waves whose last wave is at most half
    full runs as two launches of its kernel -- the first row tiles in whole waves, the rest split along K (the second
    launch's row tiles start past 0: kFlagRowTileShift; its workspace holds its own columns only).  vs the fp32
    reference on a NaN-poisoned output, and vs the one-grid plan (HUMMING_DP_TAIL=0), both with bias."""
    info = _split_plan_outputs(desc, n, k, m, monkeypatch, "dp_tail")
    head, tail_grid = info["grid"], info["tail"]["grid"]
    assert head[2] == 1 and tail_grid[2] >= 2 and head[0] == tail_grid[0]
    block_n = KernelChoice.parse(info["choice"]).block_n
    assert head[1] * block_n < n <= (head[1] + tail_grid[1]) * block_n      # the two launches cover every row


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc,n,k,m", [
    ("w:uint4b8,s:g128:bfloat16", 28672, 1024, 256),    # 132 sibling tiles (25344 rows) + 26 tiles x 4 splits
    ("w:uint4b8,s:g128:bfloat16", 28600, 1000, 200),    # odd N, a K tail
    ("w:uint4,s:g64:float16,zp:int", 28672, 2048, 150),
    ("mxfp4", 28672, 1024, 256),
])
def test_sibling_head_plan(desc, n, k, m, monkeypatch):
    """Session 30 (heuristics.sibling_head_split): the wide layer at 129-256 tokens runs the 192-row sibling over its
    first 25344 rows (one wave) and the 128-row tile over the rest, K split in 4 (row tiles counted from 198) -- two
    kernels, two launches.  vs the fp32 reference on NaN-poisoned outputs with bias, two calls bit-identical, and vs
    the one-grid plan (HUMMING_DP_TAIL=0)."""
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the split is sized for 132 SMs (H100 SXM / H200)")
    info = _split_plan_outputs(desc, n, k, m, monkeypatch, "sibling_head")
    assert info["choice"] == "bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma" and info["grid"] == (1, 132, 1), info
    assert info["tail"]["choice"] == "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma", info
    assert info["tail"]["grid"][1] == -(-n // 128) - 198 and info["tail"]["splits"] >= 2, info


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_forced_choice_too_big_for_shared_memory_is_refused():
    """A forced choice whose stages do not fit one block's shared memory for the layer's format: a clear error naming
    the layer and the choice, not a CUDA error at launch."""
    from vllm_humming.desc import DescError

    qw = quantize_weight(torch.randn(256, 1024, device="cuda") * 0.05, WeightDesc.parse("w:uint8b128,s:channel:bfloat16"),
                         name="too_big")
    choice = KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True)
    layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(64): choice})
    with pytest.raises(DescError, match="too_big.*bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma.*shared memory"):
        layer(torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16))


@pytest.mark.parametrize("desc", ["w:uint4b8,s:g128:bfloat16", "w:uint8b128,s:channel:bfloat16", "w:uint3b4,s:g128:bfloat16",
                                  "w:float4_e2m1,s:g32:float8_e8m0fnu"])
@pytest.mark.parametrize("m", [1, 9, 16, 100, 257])
def test_narrow_default_choices(desc, m):
    """The layer's own choices on narrow layers with K <= 4096 (sm_90a: the direct wgmma decode kernels at M <= 16,
    the bulk wgmma kernel from 65 tokens -- session 10's defaults), odd N, a K tail and whole-stage K, vs the fp32
    reference, the output poisoned before the call."""
    for n, k in [(6000, 4096), (4000, 1088)]:
        _check_default_choice(desc, n, k, m, "narrow")


WGMMA = [KernelChoice(16, 4, 1, 1, 1, 4, mma="wgmma"), KernelChoice(64, 4, 2, 1, 1, 4, mma="wgmma"),
         KernelChoice(128, 4, 1, 1, 1, 3, mma="wgmma"), KernelChoice(256, 8, 1, 1, 1, 3, mma="wgmma"),
         KernelChoice(8, 4, 2, 1, 1, 4, mma="wgmma"), KernelChoice(128, 8, 2, 1, 1, 3, mma="wgmma")]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", WGMMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 257, 1024])
def test_wgmma_int4_shapes(choice, m, monkeypatch):
    """wgmma kernels (weights from registers, activations from the swizzled shared tile by descriptor): several token
    tiles, token rows past M, K tails (1088: 17 atoms; 8200: a zero-filled partial atom), N not a multiple of the
    block's rows, split-K at small M."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))     # the kernel at every M, not expand + cuBLAS
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


def _run_stage_shapes(choice, m):
    """int4 on shapes with K tails (1088: 17 atoms; 8200: a partial atom; 192: one and a half two-atom stages), odd N
    and a tiny layer; at M=64 every format of FORMATS once."""
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128), (300, 192)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)
    if m == 64:
        for desc in FORMATS:
            if _fits_smem(desc, choice):
                _run(desc, 1000, 2048 + 64, m, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


def _fits_smem(desc_str, choice):
    """Whether the choice's stages fit one block's shared memory for this format (the 256-token two-atom tiles do
    not with 8-bit codes; a forced choice that does not fit is refused by the layer: test_forced_choice_too_big)."""
    fp = format_params(WeightDesc.parse(desc_str))
    gps = groups_per_stage(fp.group, choice.block_k)
    return choice.smem_bytes(fp.bits, gps, fp.zero_mode != 0, fp.group) <= 232448


# Two 64-column atoms per stage in the cp.async wgmma kernel (one swizzled kBT x 64 sub-tile per atom, fragment buffer =
# atom index): 64-token tiles with one / two m64 tiles per warpgroup, 128-token 128-row and 256-row tiles (step
# groups), stream-K.
WGMMA_AK2 = [KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma"), KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma"),
             KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma"), KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True),
             KernelChoice(128, 8, 1, 1, 2, 3, mma="wgmma")]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", WGMMA_AK2, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 257])
def test_wgmma_two_atom_stages(choice, m, monkeypatch):
    """Two atoms per stage: token rows past M, K tails (1088: 17 atoms, the last stage half zero-filled; 8200: a
    zero-filled partial atom; 192: one and a half stages), odd N, split-K (a split may end mid-stage), and every format
    at one size; two calls bit-identical."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run_stage_shapes(choice, m)


# The activation tile through the TMA unit (a tensor map of x, one box copy per atom, per-slot mbarriers): the
# two-atom tiles above and a one-atom one, split-K and stream-K.
WGMMA_TMA = [KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma", tma_x=True),
             KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma", tma_x=True),
             KernelChoice(128, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True),
             KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", tma_x=True),
             KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True, tma_x=True),
             KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma", tma_x=True),
             KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True),    # 128 rows x 256 tokens: m64n256k16
             KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", stream_k=True, tma_x=True),
             # 192 rows x 256 tokens: three warpgroups of m64n256k16, one-atom stages (two would overflow shared memory)
             KernelChoice(256, 12, 1, 1, 1, 5, mma="wgmma", tma_x=True),
             KernelChoice(256, 12, 1, 1, 1, 5, mma="wgmma", stream_k=True, tma_x=True)]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", WGMMA_TMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 257])
def test_wgmma_tma_x(choice, m, monkeypatch):
    """x through a tensor map: rows past M and columns past K zero-filled by the unit (K = 1088: the last two-atom stage
    half outside x; 8200: a partial atom; 192: one and a half stages), split-K slices that end mid-stage (their second
    atom read from outside x), odd N; every format at one size; two calls bit-identical."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run_stage_shapes(choice, m)


# Decoupled warpgroups (gemm_wna16.cuh, kDecoupled; session 19's experiment, the 256-token tiles' default since session
# 20): the TMA-x split-K wgmma tiles of two or three warpgroups without a block barrier in the main loop --
# per-warpgroup weight copies and named barriers, the x slot refilled by the last warpgroup to release it.  Each
# warpgroup's MMAs and epilogue are unchanged, so the output must be bit-identical to the block-barrier loop
# (HUMMING_WG_COUPLED forces the barrier, HUMMING_WG_DECOUPLED the decoupled loop, for every tile); every format
# at one size for the 256-token tile.
WG_DECOUPLED = [KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True), KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma", tma_x=True),
                KernelChoice(256, 12, 1, 1, 1, 5, mma="wgmma", tma_x=True), KernelChoice(128, 8, 1, 1, 2, 4, mma="wgmma", tma_x=True)]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", WG_DECOUPLED, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 64, 257, 1024])
def test_wg_decoupled_is_bit_identical(choice, m, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    cases = [("w:uint4b8,s:g128:bfloat16", n, k) for n, k in [(6000, 4096), (1000, 1088), (16400, 1024), (300, 8200)]]
    if choice.bt == 256 and m == 257:   # every format (the 256-token tiles' default since session 20)
        cases += [(d, 1000, 2176) for d in FORMATS[1:] if _fits_smem(d, choice)]
    for desc_str, n, k in cases:
        desc = WeightDesc.parse(desc_str)
        dtype = torch.float16 if "float16" in desc_str else torch.bfloat16
        qw = quantize_weight(torch.randn(n, k, device="cuda") * 0.05, desc, name="wg_decoupled")
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        outs = []
        for defines in ("HUMMING_WG_COUPLED", "HUMMING_WG_DECOUPLED"):
            monkeypatch.setenv("HUMMING_DEBUG_DEFINES", defines)
            layer = GemmLayer(qw, None, dtype, choices={m_bucket(m): choice})
            out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            outs.append(layer(x, out=out).clone())
        ref = reference_gemm(x.float(), qw)
        assert not torch.isnan(outs[1]).any()
        assert torch.equal(outs[0], outs[1]), (desc_str, choice.short(), m, n, k)
        assert ((outs[1].float() - ref).norm() / ref.norm()).item() < 1.2e-2


# The bulk (warp-specialized, persistent stream-K) wgmma kernel with x through a tensor map: one producer warp issues
# the box copies with the W and scale bulk copies onto one barrier per slot; two-atom stages (256- and 128-row tiles)
# and a one-atom 64-token tile.
BULK_TMA = [KernelChoice(128, 8, 2, 1, 2, 3, "bulk", "wgmma", tma_x=True),
            KernelChoice(128, 8, 1, 1, 2, 4, "bulk", "wgmma", tma_x=True),
            KernelChoice(64, 8, 1, 1, 1, 6, "bulk", "wgmma", tma_x=True),
            KernelChoice(256, 8, 1, 1, 1, 4, "bulk", "wgmma", tma_x=True)]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", BULK_TMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 257, 1024])
def test_bulk_tma_x(choice, m, monkeypatch):
    """Token rows past M zero-filled by the unit, N not a multiple of the block's rows, tiles split between blocks
    (the stream-K join), tiny layers (fewer units than blocks); every format at M=64; two calls bit-identical.  K is a
    whole number of stages (the bulk kernel's requirement)."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 1024), (200, 8192), (6144, 512), (16, 128), (300, 1152)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)
    if m == 64:
        for desc in FORMATS:
            if _fits_smem(desc, choice):
                _run(desc, 1000, 2176, m, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_wgmma_tma_x_moves_with_x(monkeypatch):
    """The map holds x's address: calls alternating between buffers (each re-encoded or taken from the slot's cache),
    an x at an odd storage offset (copied to an aligned one first), a K that is padded to 8 columns -- every result
    matches the reference; a CUDA graph replays its captured x."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    choice = WGMMA_TMA[3]
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    for k in (4096, 4100):
        qw = quantize_weight(torch.randn(700, k, device="cuda") * 0.05, desc, name="tma_moves")
        layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(100): choice})
        xs = [torch.randn(100, k, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        raw = torch.randn(100 * k + 1, device="cuda", dtype=torch.bfloat16)
        xs.append(raw[1:].view(100, k))                                     # 2-byte aligned storage
        for x in xs + xs[::-1]:
            ref = reference_gemm(x.float(), qw)
            out = torch.full((100, 700), float("nan"), device="cuda", dtype=torch.bfloat16)
            y = layer(x, out=out)
            torch.cuda.synchronize()
            rel = ((y.float() - ref).norm() / ref.norm()).item()
            assert rel < 1.2e-2, f"K={k}: rel err {rel:.3e}"
    _assert_graph_replays_match_eager(layer, xs[0])


# The cp.async wgmma kernel's split-K grids launched as thread block clusters (splits summed in distributed shared
# memory): 64-token tiles (one / two m64 tiles per warpgroup), 128-token tiles, clusters of 2 / 4 / 8.
WGMMA_CLUSTER = [KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma", cluster=4), KernelChoice(64, 4, 2, 1, 1, 4, mma="wgmma", cluster=2),
                 KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma", cluster=8)]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", WGMMA_CLUSTER, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 130, 200])
def test_wgmma_cluster_int4_shapes(choice, m, monkeypatch):
    """Several token tiles, rows past M, K tails, odd N, splits that are short or empty (K = 512 / 128 in 8 splits),
    two calls bit-identical, and (one case) CUDA-graph replays equal to eager."""
    if m > 2 * choice.bt:
        pytest.skip("a few token tiles per choice are enough")
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)
    if m == 64:
        qw = quantize_weight(torch.randn(3000, 4096, device="cuda") * 0.05, WeightDesc.parse("w:uint4b8,s:g128:bfloat16"),
                             name="graph_cluster")
        layer = GemmLayer(qw, None, torch.bfloat16, choices={64: choice})
        _assert_graph_replays_match_eager(layer, torch.randn(m, 4096, device="cuda", dtype=torch.bfloat16))
        assert layer.plan_info[m]["splits"] == choice.cluster


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc", FORMATS)
def test_wgmma_cluster_formats(desc, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run(desc, 1000, 2048 + 64, 40, WGMMA_CLUSTER[0], dtype=torch.float16 if "float16" in desc else torch.bfloat16)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc", FORMATS + ["w:float8_e4m3fn,s:b128x128:float32", "w:uint6b32,s:g16:bfloat16",
                                            "w:uint8,s:g64:float16,zp:int", "w:int4,s:g128:float16"])
@pytest.mark.parametrize("m", [16, 64, 257])
def test_wgmma_formats(desc, m, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    choice = {16: WGMMA[0], 64: WGMMA[1], 257: WGMMA[2]}[m]
    _run(desc, 1000, 2048 + 64, m, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


# wgmma math warpgroups in the bulk pipeline (producer warpgroup, persistent stream-K; x by cp.async, swizzled)
BULK_WGMMA = [KernelChoice(64, 8, 1, 1, 1, 4, "bulk", "wgmma"), KernelChoice(128, 8, 1, 1, 1, 4, "bulk", "wgmma"),
              KernelChoice(256, 8, 1, 1, 1, 3, "bulk", "wgmma"), KernelChoice(64, 4, 1, 1, 1, 6, "bulk", "wgmma"),
              KernelChoice(128, 8, 2, 1, 1, 4, "bulk", "wgmma"), KernelChoice(128, 8, 1, 1, 1, 6, "bulk", "wgmma"),
              # three math warpgroups (192 rows), with and without the setmaxnreg split (gemm_wna16_sm90.cuh kMathRegs)
              KernelChoice(64, 12, 1, 1, 1, 6, "bulk", "wgmma"), KernelChoice(128, 12, 1, 1, 1, 4, "bulk", "wgmma")]


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", BULK_WGMMA, ids=lambda c: c.short())
@pytest.mark.parametrize("m", [1, 17, 64, 257, 1024])
def test_bulk_wgmma_int4_shapes(choice, m, monkeypatch):
    """Several token tiles, token rows past M (stale rows in the ring must never reach y), N not a multiple of the
    block's rows, tiles split across blocks by stream-K."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 1024), (200, 8192), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("blocks", [1, 3, 7, 1000])
def test_bulk_wgmma_grid_sizes(blocks, monkeypatch):
    """Stream-K corners under wgmma: one block walks every tile (segments restart the MMA pipeline), tiles split 2-3
    ways at odd points, more slots than units."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run("w:uint4b8,s:g128:bfloat16", 520, 1024, 40, BULK_WGMMA[0], grid_cap=blocks)
    _run("w:uint4b8,s:g128:bfloat16", 520, 1024, 200, BULK_WGMMA[1], grid_cap=blocks)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc", FORMATS + ["w:float8_e4m3fn,s:b128x128:float32", "w:uint6b32,s:g16:bfloat16",
                                            "w:uint8,s:g64:float16,zp:int", "w:int4,s:g128:float16"])
@pytest.mark.parametrize("m", [64, 257])
def test_bulk_wgmma_formats(desc, m, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    choice = BULK_WGMMA[0] if m == 64 else BULK_WGMMA[1]
    _run(desc, 1000, 2048, m, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("choice", [KernelChoice(128, 8, 2, 1, 1, 3, mma="wgmma"),
                                    KernelChoice(128, 8, 2, 1, 1, 4, "bulk", "wgmma")], ids=lambda c: c.short())
@pytest.mark.parametrize("desc", FORMATS + ["w:float8_e4m3fn,s:b128x128:float32", "w:uint8,s:g64:float16,zp:int"])
def test_wgmma_step_groups_formats(choice, desc, monkeypatch):
    """256 weight rows x 128 tokens per block: 128 accumulators per thread, so one wgmma group per k16 step over two
    single-step fragment buffers (Cfg::kWgStepGroups) -- every format's dequant through that path."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run(desc, 1000, 2048, 257, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


# the cp.async kernel under the stream-K schedule (KernelChoice.stream_k: persistent grid, contiguous unit ranges)
STREAM_K = [KernelChoice(8, 4, 2, 1, 1, 4, stream_k=True), KernelChoice(16, 8, 2, 2, 2, 3, stream_k=True),
            KernelChoice(32, 8, 1, 2, 2, 4, stream_k=True), KernelChoice(64, 4, 2, 1, 1, 3, stream_k=True)]
STREAM_K_WGMMA = [KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma", stream_k=True),
                  KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma", stream_k=True),
                  KernelChoice(128, 8, 2, 1, 1, 4, mma="wgmma", stream_k=True)]


def _stream_k_cases():
    cases = [pytest.param(c, id=c.short()) for c in STREAM_K]
    cases += [pytest.param(c, id=c.short(), marks=pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a"))
              for c in STREAM_K_WGMMA]
    return cases


@pytest.mark.parametrize("choice", _stream_k_cases())
@pytest.mark.parametrize("m", [1, 17, 64, 257])
def test_stream_k_int4_shapes(choice, m, monkeypatch):
    """Several token tiles, token rows past M, K tails (1088: 17 atoms, an odd number of two-atom stages; 8200: a
    zero-filled partial atom), N not a multiple of the block's rows, tiles split across blocks."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    for n, k in [(4096, 4096), (1000, 1088), (200, 8200), (6144, 512), (16, 128)]:
        _run("w:uint4b8,s:g128:bfloat16", n, k, m, choice)


@pytest.mark.parametrize("choice", _stream_k_cases())
@pytest.mark.parametrize("blocks", [1, 3, 7, 1000])
def test_stream_k_grid_sizes(choice, blocks, monkeypatch):
    """One block walks every tile (a ring restart per tile), tiles split 2-3 ways at odd points, more slots than
    units (one unit per block); blocks_per_sm is >= 1, so grid_cap SMs give at least that many blocks."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    _run("w:uint4b8,s:g128:bfloat16", 520, 1088, 3, choice, grid_cap=blocks)
    _run("w:uint4b8,s:g128:bfloat16", 520, 1024, 200, choice, grid_cap=blocks)


@pytest.mark.parametrize("desc", FORMATS + ["w:float8_e4m3fn,s:b128x128:float32", "w:uint8,s:g64:float16,zp:int"])
@pytest.mark.parametrize("choice", _stream_k_cases()[:2] + _stream_k_cases()[-2:])
def test_stream_k_formats(desc, choice, monkeypatch):
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    m = {8: 5, 16: 16, 64: 64, 128: 200}[choice.bt]
    _run(desc, 1000, 2048 + 64, m, choice, dtype=torch.float16 if "float16" in desc else torch.bfloat16)


def _finisher_cases():
    cases = _stream_k_cases()
    cases += [pytest.param(c, id=c.short(), marks=pytest.mark.skipif(not _bulk_ok(), reason="bulk needs sm_90+"))
              for c in (BULK[0], BULK[2])]
    cases += [pytest.param(c, id=c.short(), marks=pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a"))
              for c in (BULK_WGMMA[1], BULK_WGMMA[5], BULK_WGMMA[7])]
    return cases


@pytest.mark.parametrize("choice", _finisher_cases())
def test_stream_k_any_finisher_same_bits(choice, monkeypatch):
    """A split tile is finished by whichever contributor finds the others' partials parked, or else by the last to
    park -- timing decides -- and the sum always runs in block order with the finisher's own part in its place: 20
    calls over tiles split 2-3 ways (7 blocks; K = 18 atoms, whole two-atom stages for the bulk kernel) give one result bit for bit, and it matches the reference.  The
    cp.async kernel's stream-K grids and the bulk kernel (always stream-K) share the join (stream_k.cuh)."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(520, 1152, device="cuda") * 0.05, desc, name="sk_finisher")
    m = {8: 3, 16: 16, 32: 40, 64: 64, 128: 200}[choice.bt]
    layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(m): choice})
    layer.info = type(layer.info)(layer.info.arch, 7, layer.info.smem_per_block, layer.info.smem_per_sm)
    x = torch.randn(m, 1152, device="cuda", dtype=torch.bfloat16)
    y0 = layer(x).clone()
    ref = reference_gemm(x.float(), qw)
    assert ((y0.float() - ref).norm() / ref.norm()).item() < 1.2e-2
    for _ in range(20):
        out = torch.full_like(y0, float("nan"))
        layer(x, out=out)
        torch.cuda.synchronize()
        assert torch.equal(out, y0), f"{choice.short()}: the finisher changed the bits"


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
def test_stream_k_wgmma_cuda_graph_replay(monkeypatch):
    """The 256-row stream-K default (257-1023 tokens): graph replays give the eager result bit for bit."""
    monkeypatch.setenv("HUMMING_PREFILL_M", str(1 << 30))
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(3000, 4096, device="cuda") * 0.05, desc, name="graph_sk_wgmma")
    layer = GemmLayer(qw, None, torch.bfloat16, choices={m_bucket(300): STREAM_K_WGMMA[2]})
    x = torch.randn(300, 4096, device="cuda", dtype=torch.bfloat16)
    _assert_graph_replays_match_eager(layer, x)


def test_stream_k_cuda_graph_replay():
    """Tickets reset by the last contributor: graph replays give the eager result bit for bit."""
    desc = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    qw = quantize_weight(torch.randn(3000, 4096, device="cuda") * 0.05, desc, name="graph_sk")
    layer = GemmLayer(qw, None, torch.bfloat16, choices={8: STREAM_K[0]})
    x = torch.randn(3, 4096, device="cuda", dtype=torch.bfloat16)
    _assert_graph_replays_match_eager(layer, x)


@pytest.mark.skipif(not _wgmma_ok(), reason="wgmma needs sm_90a (H100/H200)")
@pytest.mark.parametrize("desc", FORMATS + ["w:float8_e4m3fn,s:b128x128:float32", "w:uint8,s:g64:float16,zp:int",
                                            "w:int4,s:g128:float16"])
@pytest.mark.parametrize("m", [9, 16])
def test_decode16_wgmma_default(desc, m):
    """The sm_90a choice for 9-16 tokens (wgmma m64n16k16, 256 rows per block, split-K) through every format, K and N
    tails, against the fp32 reference."""
    c = KernelChoice(16, 8, 2, 1, 1, 4, mma="wgmma")
    dtype = torch.float16 if "float16" in desc else torch.bfloat16
    for n, k in [(1000, 2048 + 64), (6144, 4096), (200, 8200)]:
        _run(desc, n, k, m, c, dtype=dtype)
