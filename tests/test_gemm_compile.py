"""CI (no GPU): every GEMM / weight-expansion variant the heuristics can emit compiles with NVRTC for every arch.

Variants = element family x scale/zero mode x compute dtype (covered by FAMILIES) x the execution choices the
heuristics emit for that family on that arch (test_every_family_and_choice_compiles: the whole matrix, bf16 -- fp16
on sm_75 -- and fp16 too on sm_90a).  sm_75 has no bf16 tensor cores: it gets the fp16 variants only, and the op
refuses bf16 there (tested in test_gemm_format.py).
"""

import dataclasses
import os

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.jit import compile_many
from vllm_humming.ops.dequant_weight import dequant_spec
from vllm_humming.ops.gemm import _spec, format_params, x16_applies
from vllm_humming.tuning.heuristics import all_choices, choose_kernel

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]

# one description per (family, bits, scale mode, zero mode): the template parameters that change the code
FAMILIES = [
    "w:uint4b8,s:g128:bfloat16", "w:uint3,s:g64:bfloat16,zp:int", "w:uint4,s:g32:bfloat16,zp:float",
    "w:uint8b128,s:channel:bfloat16", "w:uint8,s:g128:bfloat16,zp:int", "w:uint2b2,s:g16:bfloat16",
    "w:uint5b16,s:g256:bfloat16", "w:uint6b32,s:g128:bfloat16", "w:uint7b64,s:g128:bfloat16",
    "w:uint1,s:g32:bfloat16,zp:int", "w:float4_e2m1,s:g32:float8_e8m0fnu",
    "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:float8_e4m3fn,s:b128x128:float32",
    "w:float8_e5m2,s:channel:bfloat16", "w:float6_e3m2,s:g32:bfloat16", "w:float5_e2m2,s:tensor:float32",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("jit-cache")
    old = os.environ.get("HUMMING_CACHE_DIR")
    os.environ["HUMMING_CACHE_DIR"] = str(d)
    yield d
    if old is None:
        os.environ.pop("HUMMING_CACHE_DIR", None)
    else:
        os.environ["HUMMING_CACHE_DIR"] = old


def _dtypes(arch):
    return [torch.float16] if arch == "sm_75" else [torch.bfloat16, torch.float16]


@pytest.mark.parametrize("arch", ARCHS)
def test_every_choice_compiles(arch, cache_dir):
    """All execution choices the heuristics can emit on this arch (int4 g128, the most used format)."""
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    dt = _dtypes(arch)[0]
    specs = [_spec(fp, c, dt, arch) for c in all_choices(arch, fp.bits, fp.group, False)]
    arts = compile_many(specs)
    assert all(len(a.cubin) > 1000 for a in arts)


def _matrix_specs(arch, dtype):
    """One spec per (family of FAMILIES, choice the heuristics can pick for it on arch): all_choices with the family's
    bits, group, zero mode and float-ness -- every M bucket, K, N, pipeline and cluster setting, plus the plan's
    alternatives (the x16 twin only where a layer would launch it)."""
    specs = []
    for d in FAMILIES:
        desc = WeightDesc.parse(d)
        fp = format_params(desc)
        if fp.family == "float" and dtype == torch.float16 and desc.dtype.exp_bits > 5:
            continue                        # e6+ floats do not fit fp16's exponent (refused at layer build)
        for c in all_choices(arch, fp.bits, fp.group, fp.zero_mode, fp.family == "float"):
            if c.x16 and not x16_applies(arch, fp, dtype):
                continue
            specs.append(_spec(fp, c, dtype, arch, d))
    return specs


@pytest.mark.parametrize("arch", ARCHS)
def test_every_family_and_choice_compiles(arch, tmp_path):
    """The whole matrix: every element family / scale mode / zero mode x every execution choice the heuristics can
    pick for it on this arch (122-351 kernels per arch), bf16 activations (fp16 on sm_75) and on sm_90a fp16 too.
    HUMMING_COMPILE_MATRIX_CACHE (scripts/test.sh sets a directory outside the clone) keeps the cubins between runs:
    the cache key covers the generated source, the contents of every header it includes, the options and the NVRTC
    build, so a hit is a successful compile of the identical input; a fresh machine compiles everything (~19 minutes
    on 2 cores)."""
    cache = os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path / "jit")
    dtypes = [torch.float16] if arch == "sm_75" else ([torch.bfloat16, torch.float16] if arch == "sm_90a"
                                                       else [torch.bfloat16])
    specs = [s for dt in dtypes for s in _matrix_specs(arch, dt)]
    assert len({s.config["desc"] for s in specs}) >= len(FAMILIES) - 2
    arts = compile_many(specs, cache_dir=cache)
    assert len(arts) == len(specs) and all(len(a.cubin) > 1000 for a in arts)
    for spec, art in zip(specs, arts):
        if spec.config["choice"].endswith("wgmma"):
            assert "serialized" not in art.log, (spec.config, art.log)


def test_float_zero_point_picks_compile_without_serialized_mmas(tmp_path):
    """sm_90a, session 28 (heuristics FLOAT_ZERO_TMA / FLOAT_ZERO_ONE_ATOM): codes of <= 4 bits with float zero points
    and 16-64-column groups at 257-512 tokens (and the layers' 256-token tiles) pick tiles whose wgmmas ptxas keeps asynchronous -- the two-atom TMA-x
    tile, or the one-atom tile for uint3 g32 -- on wide and narrow layers.  FAMILIES holds one float-zero family
    (uint4 g32); the rule's exception depends on bits and group, so this covers the groups and widths around it."""
    cache = os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path / "jit")
    descs = [(f"w:uint{b},s:g{g}:bfloat16,zp:float", torch.bfloat16) for b in (2, 3, 4) for g in (16, 32, 64)]
    descs += [(f"w:uint{b},s:g32:float16,zp:float", torch.float16) for b in (3, 4)]
    specs = []
    for d, dt in descs:
        fp = format_params(WeightDesc.parse(d))
        picks = {choose_kernel("sm_90a", m, fp.bits, fp.group, fp.zero_mode, 132, k=4096, n=n)
                 for m in (300, 512) for n in (28672, 6144)}
        specs += [_spec(fp, c, dt, "sm_90a", d) for c in sorted(picks, key=lambda c: c.short())]
    arts = compile_many(specs, cache_dir=cache)
    for spec, art in zip(specs, arts):
        assert "serialized" not in art.log, (spec.config, art.log)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_family_compiles(arch, cache_dir):
    """Every element family / scale mode (the template parameters that change the decode code): the decode kernel
    (accumulator-side scaling) plus the weight expansion.  The per-weight scaling path of the wider token tiles is
    covered by test_every_choice_compiles and the GPU tests."""
    specs = []
    for d in FAMILIES:
        desc = WeightDesc.parse(d)
        fp = format_params(desc)
        dt = torch.float16 if arch == "sm_75" else torch.bfloat16
        if fp.family == "float" and dt == torch.float16 and desc.dtype.exp_bits > 5:
            continue
        specs.append(_spec(fp, choose_kernel(arch, 8, fp.bits, fp.group, fp.zero_mode != 0), dt, arch, d))
        specs.append(dequant_spec(fp, dt, arch, d))
    arts = compile_many(specs)
    assert len(arts) == len(specs)


def test_every_family_compiles_wgmma(cache_dir):
    """sm_90a only: every element family / scale mode through the wgmma kernel the heuristics pick from 64 tokens up
    (operand-side dequant into double-buffered A fragments, x by shared-memory descriptor)."""
    specs = []
    for d in FAMILIES:
        fp = format_params(WeightDesc.parse(d))
        c = choose_kernel("sm_90a", 64, fp.bits, fp.group, fp.zero_mode != 0)
        assert c.wgmma
        specs.append(_spec(fp, c, torch.bfloat16, "sm_90a", d))
    specs.append(_spec(format_params(WeightDesc.parse(FAMILIES[1])), choose_kernel("sm_90a", 128, 3, 64, True),
                       torch.float16, "sm_90a", FAMILIES[1]))
    arts = compile_many(specs)
    assert all(len(a.cubin) > 1000 for a in arts)


def test_bulk_wgmma_compiles_without_serialized_mmas(cache_dir):
    """sm_90a: the bulk pipeline with wgmma math warpgroups (producer warpgroup, mbarriers).  ptxas silently falls
    back to waiting after every wgmma when it finds register pressure or code it considers divergent around the
    asynchronous window (its log then says "wgmma.mma_async instructions are serialized"); these instances must not."""
    from vllm_humming.tuning.heuristics import KernelChoice

    cases = [("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 8, 1, 1, 1, 4, "bulk", "wgmma"), torch.bfloat16),
             ("w:uint4,s:g64:float16,zp:int", KernelChoice(64, 8, 1, 1, 1, 4, "bulk", "wgmma"), torch.float16),
             # 256 rows x 128 tokens: 128 accumulators, one MMA group per k16 step (Cfg::kWgStepGroups); with the
             # atom-wide fragment double buffer this one serialized
             ("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 8, 2, 1, 1, 4, "bulk", "wgmma"), torch.bfloat16),
             # the sm_90a default from 65 tokens on narrow layers (an 8-bit format: the largest W stage)
             ("w:uint8b128,s:channel:bfloat16", KernelChoice(128, 8, 1, 1, 1, 6, "bulk", "wgmma"), torch.bfloat16),
             # three math warpgroups: 64 accumulators need the setmaxnreg split (128 registers at launch serialize),
             # 32 accumulators run without it (ptxas would ignore it: C7508)
             ("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 12, 1, 1, 1, 4, "bulk", "wgmma"), torch.bfloat16),
             ("w:uint4b8,s:g128:bfloat16", KernelChoice(64, 12, 1, 1, 1, 6, "bulk", "wgmma"), torch.bfloat16),
             # four atoms per stage with the TMA x tile (session 52's experiment): four fragment-buffer turns and
             # waits per stage inside the asynchronous window
             ("w:uint4b8,s:g128:bfloat16", KernelChoice(16, 12, 2, 1, 4, 3, "bulk", "wgmma", tma_x=True),
              torch.bfloat16),
             ("w:uint4,s:g64:float16,zp:int", KernelChoice(32, 8, 2, 1, 4, 3, "bulk", "wgmma", tma_x=True),
              torch.float16)]
    specs = [_spec(format_params(WeightDesc.parse(d)), c, dt, "sm_90a", d) for d, c, dt in cases]
    for art in compile_many(specs):
        assert len(art.cubin) > 1000
        assert "serialized" not in art.log, art.log
        assert "setmaxnreg' ignored" not in art.log, art.log


def test_direct_wgmma_compiles_without_serialized_mmas(cache_dir):
    """sm_90a: the direct kernel with wgmma math (weights global -> registers, x staged once per block).  A per-atom
    branch inside the asynchronous window made ptxas serialize every wgmma (C7513); the main loop runs whole bodies
    unconditionally and only the tail branches -- every format family, both fragment-buffer modes."""
    from vllm_humming.tuning.heuristics import KernelChoice

    cases = [(d, KernelChoice(16, 4, 1, 1, 64, s, "direct", "wgmma")) for d in FAMILIES for s in (3, 4)]
    cases.append(("w:uint4b8,s:g128:bfloat16", KernelChoice(16, 8, 2, 1, 64, 2, "direct", "wgmma")))
    cases.append(("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 8, 2, 1, 64, 2, "direct", "wgmma")))   # step groups
    specs = [_spec(format_params(WeightDesc.parse(d)), c, torch.float16 if "float16" in d else torch.bfloat16,
                   "sm_90a", d) for d, c in cases]
    for art in compile_many(specs):
        assert len(art.cubin) > 1000
        assert "serialized" not in art.log, art.log


def test_wgmma_two_atom_stages_compile(cache_dir):
    """sm_90a: the cp.async wgmma kernel with two atoms per stage (one swizzled x sub-tile per atom, the fragment
    buffer = the atom) -- atom-wide groups (64-token tiles) and step groups (256 x 128 tiles), split-K and stream-K,
    every format family; no serialized wgmma.  The bulk pipeline refuses it (its x copy plan is one atom wide)."""
    from vllm_humming.tuning.heuristics import KernelChoice

    cases = [(d, KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma")) for d in FAMILIES]
    cases += [("w:uint4b8,s:g128:bfloat16", KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma")),
              ("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma")),
              ("w:uint4b8,s:g128:bfloat16", KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True))]
    specs = [_spec(format_params(WeightDesc.parse(d)), c, torch.float16 if "float16" in d else torch.bfloat16,
                   "sm_90a", d) for d, c in cases]
    for art in compile_many(specs):
        assert len(art.cubin) > 1000
        assert "serialized" not in art.log, art.log
    with pytest.raises(ValueError, match="atoms_k"):
        KernelChoice(64, 8, 1, 1, 2, 4, "bulk", "wgmma")


def test_int8_bf16_dequant_needs_no_float_conversion(cache_dir):
    """8-bit integer codes in bf16 dequantize with two magic numbers (dequant.cuh), not through fp32: the decode
    kernel's PTX must not convert float pairs to bf16 per weight pair.  The fp32 route it replaced emitted one
    cvt.rn.bf16x2.f32 per pair (225 in this kernel before, 0 after); the bound leaves room for epilogue and
    setup code."""
    import dataclasses
    import re

    from vllm_humming.jit import compile_kernel
    from vllm_humming.tuning.heuristics import KernelChoice

    spec = _spec(format_params(WeightDesc.parse("w:uint8b128,s:channel:bfloat16")), KernelChoice(8, 4, 2, 1, 1, 4),
                 torch.bfloat16, "sm_90a")
    ptx = compile_kernel(dataclasses.replace(spec, output="ptx")).cubin.decode(errors="replace")
    n_cvt = len(re.findall(r"cvt\.rn\.bf16x2\.f32", ptx))
    assert n_cvt <= 16, f"{n_cvt} float -> bf16x2 conversions: the int8 dequant went back to the fp32 route"
    assert len(re.findall(r"sub\.(?:rn\.)?bf16x2", ptx)) >= 32, "the two-magic subtraction per weight pair is missing"


CLUSTER_CHOICES = ["bt8_wn4_tm2_wk2_ak256_s4_c8_direct", "bt8_wn2_tm2_wk4_ak64_s3_c4_direct",
                   "bt16_wn2_tm1_wk1_ak64_s3_c2_direct"]
CLUSTER_CHOICES_WGMMA = ["bt8_wn8_tm1_wk1_ak256_s4_c8_direct_wgmma", "bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma",
                         "bt16_wn4_tm2_wk1_ak64_s2_c2_direct_wgmma", "bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma",
                         "bt64_wn4_tm2_wk1_ak1_s4_c2_wgmma", "bt128_wn8_tm1_wk1_ak1_s5_c8_wgmma"]


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a", "sm_100a", "sm_120a"])
def test_direct_cluster_choices_compile(arch, cache_dir):
    """The direct kernel launched as thread block clusters (the K splits of a tile summed through distributed shared
    memory) compiles on every sm_90+ arch (wgmma math on sm_90a only), for a few formats; its cubin carries the
    cluster barrier and the cluster dims, the ticket kernel of the same shape neither."""
    from vllm_humming.tuning.heuristics import KernelChoice

    names = CLUSTER_CHOICES + (CLUSTER_CHOICES_WGMMA if arch == "sm_90a" else [])
    specs = []
    for d in ("w:uint4b8,s:g128:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu", "w:uint4,s:g64:float16,zp:int"):
        fp = format_params(WeightDesc.parse(d))
        dt = torch.float16 if "float16" in d else torch.bfloat16
        specs += [_spec(fp, KernelChoice.parse(c), dt, arch) for c in names]
    arts = compile_many(specs)
    assert all(len(a.cubin) > 1000 for a in arts)
    # the PTX of the clustered kernel declares its cluster shape and the cluster barrier; the ticket kernel neither
    import dataclasses

    from vllm_humming.jit import compile_kernel

    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    cases = [(CLUSTER_CHOICES[0], 8), ("bt8_wn4_tm2_wk2_ak256_s4_direct", 0)]
    if arch == "sm_90a":
        cases += [("bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma", 4), ("bt64_wn8_tm1_wk1_ak1_s6_wgmma", 0)]
    for name, size in cases:
        want = size != 0
        spec = _spec(fp, KernelChoice.parse(name), torch.bfloat16, arch)
        ptx = compile_kernel(dataclasses.replace(spec, output="ptx")).cubin.decode(errors="replace")
        assert (f".reqnctapercluster 1, 1, {size}" in ptx) == want and (".reqnctapercluster" in ptx) == want, name
        assert ("barrier.cluster.arrive.release" in ptx) == want and ("mapa.shared::cluster" in ptx) == want, name


def test_direct_cluster_refused_below_sm90():
    from vllm_humming.tuning.heuristics import KernelChoice

    c = KernelChoice.parse("bt8_wn4_tm2_wk2_ak256_s4_c8_direct")
    for arch in ("sm_75", "sm_80", "sm_86", "sm_89"):
        assert "clusters" in c.unsupported_reason(arch, 4096, 128)
    assert c.unsupported_reason("sm_90", 4096, 128) == ""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_120a"])
def test_direct_refill_after_math_experiment_compiles(arch, cache_dir, monkeypatch):
    """The HUMMING_REFILL_AFTER_MATH experiment macro (gemm_wna16_direct.cuh: ring slots consumed in place) keeps
    compiling for the direct mma.sync choices, g128 / g256 units and ring depths that are and are not multiples."""
    from vllm_humming.tuning.heuristics import KernelChoice

    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_REFILL_AFTER_MATH")
    specs = [_spec(format_params(WeightDesc.parse(d)), KernelChoice.parse(c), torch.bfloat16, arch)
             for d in ("w:uint4b8,s:g128:bfloat16", "w:uint4,s:g256:bfloat16,zp:int")
             for c in ("bt8_wn4_tm2_wk2_ak256_s4_direct", "bt8_wn4_tm2_wk2_ak256_s3_direct", "bt16_wn2_tm1_wk2_ak16_s3_direct")]
    assert all("HUMMING_REFILL_AFTER_MATH" in s.source for s in specs)
    assert all(len(a.cubin) > 1000 for a in compile_many(specs))


@pytest.mark.parametrize("macro", ["HUMMING_DEBUG_WG_ROLLED", "HUMMING_DEBUG_SPLITK_SKIP", "HUMMING_DEBUG_WG_SKIP_DEQUANT",
                                   "HUMMING_DEBUG_WG_SKIP_MMA"])
def test_wgmma_experiment_macros_compile(macro, cache_dir, monkeypatch):
    """The session-13 experiment macros of gemm_wna16.cuh keep compiling (sm_90a): the step-group kernels' rolled main
    loop (256-row split-K and stream-K tiles, and a 128-row tile the macro must leave unrolled) and the split-K end
    without its cross-block sum; the wgmma dequant / MMA removals of the session-14 decomposition; a two-atom stage
    (rolled under WG_ROLLED since session 15)."""
    from vllm_humming.tuning.heuristics import KernelChoice

    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", macro)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    specs = [_spec(fp, KernelChoice.parse(c), torch.bfloat16, "sm_90a")
             for c in ("bt128_wn8_tm2_wk1_ak1_s4_wgmma", "bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma", "bt64_wn8_tm1_wk1_ak1_s6_wgmma",
                       "bt64_wn8_tm2_wk1_ak2_s4_wgmma")]   # two-atom stages: rolled too under WG_ROLLED (session 15)
    assert all(macro in s.source for s in specs)
    assert all(len(a.cubin) > 1000 for a in compile_many(specs))


@pytest.mark.parametrize("defines", ["HUMMING_SPLITK_INFLIGHT=16", "HUMMING_SPLITK_ACQREL_TICKET",
                                     "HUMMING_SPLITK_INFLIGHT=16,HUMMING_SPLITK_ACQREL_TICKET"])
def test_splitk_end_experiment_macros_compile(defines, cache_dir, monkeypatch):
    """Session 53's split-K end experiments (splitk_epilogue, gemm_wna16.cuh) compile for the narrow layers' 16- and
    64-token kernels and a cp.async mma.sync tile into code that differs from the default (the macros reach the
    reducer path), with no spills the default does not have (ptxas -v); a bad in-flight count is refused at compile
    time."""
    import re

    from vllm_humming.jit.compiler import build_options
    from vllm_humming.jit.errors import CompileError
    from vllm_humming.jit.nvrtc import run_nvrtc
    from vllm_humming.tuning.heuristics import KernelChoice

    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    names = ("bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma", "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma", "bt16_wn4_tm2_wk1_ak2_s4")

    def arts(macros):
        monkeypatch.setenv("HUMMING_DEBUG_DEFINES", macros)
        return compile_many([_spec(fp, KernelChoice.parse(c), torch.bfloat16, "sm_90a") for c in names])

    def spills(art):
        # the JIT keeps no ptxas report: ask ptxas for one (-v) on the artifact's source
        _, opts = build_options(art.spec)
        r = run_nvrtc(art.spec.source, "k.cu", opts + ["--ptxas-options=-v"], "cubin")
        log = r.log if isinstance(r.log, str) else r.log.decode()
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
        assert r.ok and m, log[-2000:]
        return int(m.group(1)), int(m.group(2))

    base, exp = arts(""), arts(defines)
    for name, a, b in zip(names, base, exp):
        assert len(b.cubin) > 1000 and b.cubin != a.cubin, name
        # no spills the default does not have (the wgmma kernels: none; the mma.sync tile spills 8 bytes already)
        sa, sb = spills(a), spills(b)
        assert sb[0] <= sa[0] and sb[1] <= sa[1], (name, sa, sb)
        if "wgmma" in name:
            assert sb == (0, 0), (name, sb)
    with pytest.raises(CompileError):
        arts("HUMMING_SPLITK_INFLIGHT=64")


def test_wg_decoupled_default_is_the_256_token_tiles(cache_dir, monkeypatch):
    """Session 20: the 256-token TMA-x split-K wgmma tiles run decoupled warpgroups by default (gemm_wna16.cuh:
    kDecoupled) -- their cubin is the HUMMING_WG_DECOUPLED one and not the HUMMING_WG_COUPLED one -- while the
    128-token tiles keep the block barrier (their cubin is the coupled one)."""
    from vllm_humming.jit.errors import CompileError
    from vllm_humming.tuning.heuristics import KernelChoice

    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    bt256 = ["bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma", "bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma"]
    bt128 = ["bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma"]

    def cubins(defines):
        monkeypatch.setenv("HUMMING_DEBUG_DEFINES", defines)
        specs = [_spec(fp, KernelChoice.parse(c), torch.bfloat16, "sm_90a") for c in bt256 + bt128]
        return [a.cubin for a in compile_many(specs)]

    default, coupled, decoupled = cubins(""), cubins("HUMMING_WG_COUPLED"), cubins("HUMMING_WG_DECOUPLED")
    for i, name in enumerate(bt256):
        assert default[i] == decoupled[i] and default[i] != coupled[i], name
    for i, name in enumerate(bt128, start=len(bt256)):
        assert default[i] == coupled[i] and default[i] != decoupled[i], name
    # every format decouples the 256-token tiles (the release counters sit after the ring's mbarriers), e.g. int8 with
    # channel scales (no group scales) and MXFP4; a 128-token tile never (HUMMING_DEBUG_REQUIRE_DECOUPLED refuses it)
    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_DEBUG_REQUIRE_DECOUPLED")
    specs = [_spec(format_params(WeightDesc.parse(d)), KernelChoice.parse(bt256[0]), torch.bfloat16, "sm_90a")
             for d in ("w:uint8b128,s:channel:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu")]
    assert all(len(a.cubin) > 1000 for a in compile_many(specs))
    with pytest.raises(CompileError, match="runs with the block barrier"):
        compile_many([_spec(fp, KernelChoice.parse(bt128[0]), torch.bfloat16, "sm_90a")])


def test_removed_wgmma_zero_fold_choice_is_refused_by_name():
    """Session 41's "_wf" choices (the windowed wgmma decode with zeros folded through the sums of x) measured slower
    than the operand route on every cell (session 42) and were removed: an old name gets the reason, not a generic
    parse error."""
    from vllm_humming.tuning.heuristics import KernelChoice

    with pytest.raises(ValueError, match="removed in session 42"):
        KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_c2_wf_direct_wgmma")
    assert KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma").short() == \
        "bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma"


@pytest.mark.parametrize("desc", ["w:int4,s:g128:float16", "w:uint4,s:g64:float16,zp:int", "w:uint4b8,s:channel:float16"])
def test_fp16_row16_drops_the_decode_shifts(desc, cache_dir, monkeypatch):
    """The fp16 row16 decode (dequant.cuh raw_row16, the default for 4-bit codes with fp16 activations on the mma.sync
    kernel: rows g + 8 masked in place and divided by 16 at the fold) decodes a word with one shift instead of three:
    against HUMMING_NO_FP16_ROW16 the kernel's PTX loses two of every three 32-bit right shifts of the decode (CPU
    machine: SASS main loop of the 28672x4096 M=1 choice 268 -> 238 instructions per 4 atoms, SHF 50 -> 18, session
    22; measured 19.3 vs 20.6 us on the H200, session 23)."""
    import dataclasses
    import re

    from vllm_humming.jit import compile_kernel
    from vllm_humming.tuning.heuristics import KernelChoice

    def shifts(defines):
        if defines:
            monkeypatch.setenv("HUMMING_DEBUG_DEFINES", defines)
        else:
            monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
        spec = _spec(format_params(WeightDesc.parse(desc)), KernelChoice.parse("bt8_wn14_tm1_wk2_ak256_s4_direct"),
                     torch.float16, "sm_90a")
        assert ("HUMMING_NO_FP16_ROW16" in spec.source) == bool(defines)
        ptx = compile_kernel(dataclasses.replace(spec, output="ptx")).cubin.decode(errors="replace")
        return len(re.findall(r"\bshr\.[bu]32\b", ptx))

    row16, base = shifts(""), shifts("HUMMING_NO_FP16_ROW16")
    # 16 weight words per lane per 4-atom ring body (kBody = 4 at g128 / g64 / channel), 2 shifts saved per word
    assert base - row16 >= 24, (base, row16)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a", "sm_120"])
def test_x16_choice_compiles(arch, cache_dir, monkeypatch):
    """The x16 choices (KernelChoice.x16: bf16 activations staged as fp16 with a power-of-two scale per window and
    token, fp16 MMAs, the one-shift int4 decode; the layer launches them at 1-2 tokens) compile on every arch family,
    and their MMAs are fp16 ones: the PTX has f16 mma.sync instructions and no bf16 ones (CPU machine, sm_90a: main
    loop 268 -> 252 SASS instructions per 4 atoms on the 28672x4096 M=1 choice, 461 -> 408 per 4 atoms on
    4096x14336's, session 23).  Formats it does not cover (8-bit codes) compile the plain bf16 kernel."""
    import dataclasses

    from vllm_humming.jit import compile_kernel
    from vllm_humming.tuning.heuristics import KernelChoice, x16_sibling

    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)

    def ptx_of(desc, choice):
        spec = _spec(format_params(WeightDesc.parse(desc)), choice, torch.bfloat16, arch)
        assert ("HUMMING_BF16_AS_FP16" in spec.source) == choice.x16
        assert ("x16" in spec.name) == choice.x16
        return compile_kernel(dataclasses.replace(spec, output="ptx")).cubin.decode(errors="replace")

    base = KernelChoice.parse("bt8_wn4_tm2_wk2_ak256_s4_direct")
    x16 = x16_sibling(base)
    assert x16.short() == "bt8_wn4_tm2_wk2_ak256_s4_x16_direct" and KernelChoice.parse(x16.short()) == x16
    for desc in ("w:uint4b8,s:g128:bfloat16", "w:uint4,s:g64:bfloat16,zp:int"):
        ptx = ptx_of(desc, x16)
        assert ".f16.f16" in ptx and ".bf16.bf16" not in ptx, desc
    if arch != "sm_75":   # (bf16 MMAs need sm_80)
        assert ".bf16.bf16" in ptx_of("w:uint4b8,s:g128:bfloat16", base)
        assert ".bf16.bf16" in ptx_of("w:uint8b128,s:channel:bfloat16", x16)


def test_x16_serves_bf16_with_4_bit_integer_codes_on_sm90a():
    from vllm_humming.ops.gemm import x16_applies, x16_covers

    fp = lambda d: format_params(WeightDesc.parse(d))   # noqa: E731
    for d in ("w:uint4b8,s:g128:bfloat16", "w:int4,s:channel:bfloat16", "w:uint4,s:g64:bfloat16,zp:float"):
        assert x16_covers(fp(d), torch.bfloat16) and x16_applies("sm_90a", fp(d), torch.bfloat16), d
        assert not x16_applies("sm_80", fp(d), torch.bfloat16), d          # measured on the H200 only
        assert not x16_covers(fp(d), torch.float16), d                      # fp16 decodes that way already
    for d in ("w:uint8b128,s:channel:bfloat16", "w:uint3b4,s:g128:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu"):
        assert not x16_covers(fp(d), torch.bfloat16), d


def test_layer_kernel_specs_hold_the_x16_twin_where_the_plan_launches_it():
    """What a layer may launch is what gets compiled ahead (prewarm, strict no-JIT mode): the x16 twin for bf16 int4
    on sm_90a's wide layer, not for fp16 activations."""
    from vllm_humming.ops.gemm import layer_kernel_specs

    def choices(dtype):
        return [s.config.get("choice") for s in layer_kernel_specs("w:uint4b8,s:g128:bfloat16", 28672, 4096, "sm_90a",
                                                                     dtype)]

    assert "bt8_wn14_tm1_wk2_ak256_s4_x16_direct" in choices(torch.bfloat16)
    assert not any(c and "x16" in c for c in choices(torch.float16))


def test_x16_choice_is_the_direct_mma_sync_kernel():
    from vllm_humming.tuning.heuristics import KernelChoice, x16_sibling

    assert x16_sibling(KernelChoice.parse("bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma")) is None
    assert x16_sibling(KernelChoice.parse("bt16_wn2_tm2_wk4_ak256_s2_direct")) is None
    assert x16_sibling(KernelChoice.parse("bt8_wn4_tm2_wk1_ak2_s4")) is None
    with pytest.raises(ValueError, match="x16"):
        KernelChoice.parse("bt8_wn8_tm1_wk1_ak256_s4_x16_direct_wgmma")


def test_direct_wgmma_prefetch_choice_compiles(cache_dir, monkeypatch):
    """The direct wgmma decode with a prefetch budget ("_pf<KB>", session 42): the name round-trips, the register cap
    leaves room for the next launch's block (min_blocks 2: 128 registers), the planner gives it one block per SM with
    as many K splits as that allows, the host reserves the region after the x / scale tiles (two blocks still fit an
    SM), and the kernels compile for int4 / int3 / int8 / MXFP4 (and the 2-block cluster) with no serialized wgmma.
    A wgmma choice with a shared-memory ring stays refused."""
    from vllm_humming.ops.plan import cubin_resources
    from vllm_humming.tuning.heuristics import KernelChoice, arch_info, choose_direct_splits

    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    c = KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_pf72_direct_wgmma")
    plain = dataclasses.replace(c, pf=0)
    assert KernelChoice.parse(c.short()) == c and (c.pf, c.pf_ring, c.min_blocks, plain.min_blocks) == (72, False, 2, 0)
    info = arch_info("sm_90a", 132)
    # 6144x4096 at 16 tokens: 24 row tiles x 5 splits of 14 atoms = 120 blocks <= 132 SMs; 9 positions of 8 KB
    # (8 warps x 2 tiles x 512 bytes) reserved, 8 of them used (an even count)
    assert choose_direct_splits(c, 6144, 4096, 16, info, 2, 128, False) == (5, 14)
    assert choose_direct_splits(c, 4096, 4096, 16, info, 2, 128, False) == (8, 8)
    assert c.direct_prefetch_atoms(14, 4, 128) == 9 and c.direct_prefetch_atoms(8, 4, 128) == 8
    grown = c.direct_smem_bytes(14, 16, 128, False, 4) - plain.direct_smem_bytes(14, 16, 128, False, 4)
    assert 9 * 8192 <= grown < 9 * 8192 + 16
    assert 2 * (c.direct_smem_bytes(14, 16, 128, False, 4) + 1024) <= info.smem_per_sm
    cases = [("w:uint4b8,s:g128:bfloat16", c), ("w:uint3b4,s:g128:bfloat16", c),
             ("w:uint8b128,s:channel:bfloat16", KernelChoice.parse("bt8_wn8_tm1_wk1_ak256_s4_pf48_direct_wgmma")),
             ("w:float4_e2m1,s:g32:float8_e8m0fnu", c),
             ("w:uint4,s:g64:bfloat16,zp:int", KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_c2_pf40_direct_wgmma"))]
    specs = [_spec(format_params(WeightDesc.parse(d)), ch, torch.bfloat16, "sm_90a", d) for d, ch in cases]
    assert all(f"#define HUMMING_DIRECT_SMEM_PREFETCH {ch.pf * 1024}" in sp.source for (_, ch), sp in zip(cases, specs))
    assert all("__launch_bounds__(256, 2)" in sp.source for sp in specs)
    for sp, art in zip(specs, compile_many(specs)):
        assert "serialized" not in art.log, (sp.name, art.log)
        assert cubin_resources(art.cubin, sp.name)[0] <= 128, sp.name
    with pytest.raises(ValueError, match="mma.sync one only"):
        KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_pfr72_direct_wgmma")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a", "sm_120a"])
def test_smem_prefetch_choice_compiles(arch, cache_dir, monkeypatch):
    """KernelChoice.pf / pf_ring (weights copied to shared memory before the grid wait; the whole stream through a
    warp-private smem ring): the short names round-trip, the instantiation carries its macros and its own kernel name,
    it compiles, the host's shared-memory mirror counts the region, and a conflicting HUMMING_DEBUG_DEFINES is refused
    by name."""
    from vllm_humming.ops.gemm import DescError
    from vllm_humming.tuning.heuristics import KernelChoice

    monkeypatch.delenv("HUMMING_DEBUG_DEFINES", raising=False)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    plain = KernelChoice.parse("bt8_wn3_tm1_wk4_ak64_s4_x16_direct")
    pf = KernelChoice.parse("bt8_wn3_tm1_wk4_ak64_s4_pf72_x16_direct")
    ring = KernelChoice.parse("bt8_wn3_tm1_wk4_ak64_s4_pfr64_direct")
    assert (pf.pf, pf.pf_ring, ring.pf, ring.pf_ring) == (72, False, 64, True)
    for c in (pf, ring):
        assert KernelChoice.parse(c.short()) == c
    # 48 rows x 4096 columns (64 atoms, 16 per K-warp): 12 positions of 12 warps x 512 bytes fit 72 KB (the other
    # four stay in the register ring); the ring holds 10 (5 units of g128) whatever the range
    assert pf.direct_prefetch_atoms(64, 4, 128) == 12 and ring.direct_prefetch_atoms(64, 4, 128) == 10
    assert ring.direct_prefetch_atoms(8, 4, 128) == 10
    assert pf.direct_smem_bytes(64, 1, 128, False, 4) - plain.direct_smem_bytes(64, 1, 128, False, 4) >= 12 * 12 * 512
    specs = [_spec(fp, c, torch.bfloat16, arch) for c in (plain, pf, ring)]
    assert "HUMMING_DIRECT_SMEM_PREFETCH" not in specs[0].source
    assert f"#define HUMMING_DIRECT_SMEM_PREFETCH {72 * 1024}" in specs[1].source
    assert "HUMMING_DIRECT_SMEM_RING" in specs[2].source and "HUMMING_DIRECT_SMEM_RING" not in specs[1].source
    assert len({s.name for s in specs}) == 3
    assert all(len(a.cubin) > 1000 for a in compile_many(specs))
    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_DIRECT_SMEM_PREFETCH=8192")
    with pytest.raises(DescError, match="_pf"):
        _spec(fp, pf, torch.bfloat16, arch)
    for bad in ("bt8_wn8_tm1_wk1_ak256_s4_pfr72_direct_wgmma", "bt8_wn4_tm2_wk1_ak2_s4_pf72",
                "bt8_wn3_tm1_wk4_ak64_s4_pf400_direct"):
        with pytest.raises(ValueError, match="pf"):
            KernelChoice.parse(bad)
