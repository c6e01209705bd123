"""Quantized activations (W8A8 / W4A8 / W4A4): the grids and scale encoders against the reference (host C++ build of
quant_grid.cuh), the kernel sources, what is refused, and NVRTC compiles for every arch.  GPU numerics:
tests/test_act_quant_gpu.py."""

import math
import os
import shutil
import subprocess

import pytest
import torch

from vllm_humming import reference
from vllm_humming.desc import ActDesc, DescError, NAMED_FORMATS, WeightDesc, ScaleSpec
from vllm_humming.dtypes import FloatType, parse_dtype
from vllm_humming.jit import compile_many
from vllm_humming.jit.paths import include_dir
from vllm_humming.ops import act_quant
from vllm_humming.ops.act_quant import (ActQuantizer, act_quant_source, act_quant_specs, act_quant_unsupported_reason,
                                        grid_cpp, scale_cpp)

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]
CODE_DTYPES = ["int8", "int4", "float8_e4m3fn", "float8_e5m2", "float4_e2m1"]
SCALE_DTYPES_8BIT = ["float8_e4m3fn", "ue4m3"]

# every activation description shape the kernels distinguish: code dtype x scale mode x scale dtype
ACTS = [
    "a:int8,s:token:float32,dynamic",
    "a:float8_e4m3fn,s:token:float32,dynamic",
    "a:int8,s:tensor:float32,static",
    "a:float8_e4m3fn,s:tensor:float32,static",
    "a:float8_e4m3fn,s:tensor:float32,dynamic",
    "a:int8,s:tensor:bfloat16,dynamic",
    "a:float8_e5m2,s:token:float16,dynamic",
    "a:int4,s:g128:bfloat16,dynamic",
    "a:int8,s:g64:float32,dynamic",
    "a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32",
    "a:float4_e2m1,s:g32:float8_e8m0fnu,dynamic",
    "a:int4,s:g256:ue4m3,dynamic",
    "a:float8_e4m3fn,s:g16:float8_e8m0fnu,dynamic",
]


# ------------------------------------------------------------------------------------------- host build of the grids
def _host_program(tmp_path, funcs):
    """Compile a host program that applies funcs[i] (C++ expressions of `v`) to float32 values on stdin."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++ on this machine")
    cases = "\n".join(f"      case {i}: r = {f}; break;" for i, f in enumerate(funcs))
    src = f"""#define HUMMING_HOST_TEST 1
#include "humming/quant_grid.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {{
  const int which = atoi(argv[1]);
  std::vector<float> in;
  float v;
  while (fread(&v, sizeof v, 1, stdin) == 1) in.push_back(v);
  for (float v : in) {{
    float r = 0.f;
    switch (which) {{
{cases}
      default: return 2;
    }}
    fwrite(&r, sizeof r, 1, stdout);
  }}
  return 0;
}}
"""
    cpp = tmp_path / "grid_test.cpp"
    exe = tmp_path / "grid_test"
    cpp.write_text(src)
    subprocess.run([gxx, "-std=c++17", "-O2", "-ffp-contract=off", f"-I{include_dir()}", str(cpp), "-o", str(exe)],
                   check=True, capture_output=True, text=True)

    def run(i, values: torch.Tensor) -> torch.Tensor:
        data = values.to(torch.float32).contiguous().numpy().tobytes()
        out = subprocess.run([str(exe), str(i)], input=data, capture_output=True, check=True).stdout
        return torch.frombuffer(bytearray(out), dtype=torch.float32).clone()

    return run


def _probe_values(dt) -> torch.Tensor:
    """Grid points, midpoints (the ties), one float32 ulp either side of each, values beyond max, tiny and random
    values, both signs."""
    if dt.is_int:
        pts = torch.arange(int(dt.min) - 3, int(dt.max) + 4, dtype=torch.float64)
    else:
        t = dt.decode_table()
        pts = torch.unique(t[torch.isfinite(t) & (t >= 0)])
        pts = torch.cat([pts, pts[-1:] * 1.0625, pts[-1:] * 1.125, pts[-1:] * 4])
    mids = (pts[1:] + pts[:-1]) / 2
    base = torch.cat([pts, mids]).to(torch.float32)
    up = torch.nextafter(base, torch.full_like(base, math.inf))
    down = torch.nextafter(base, torch.full_like(base, -math.inf))
    g = torch.Generator().manual_seed(7)
    rnd = torch.exp2(torch.empty(4000).uniform_(-40, 20, generator=g)).to(torch.float32)
    tiny = torch.tensor([0.0, 1e-45, 1e-40, 2.0 ** -126, 2.0 ** -120, 3e-38], dtype=torch.float32)
    v = torch.cat([base, up, down, rnd, tiny])
    return torch.cat([v, -v])


def test_grids_round_like_the_reference(tmp_path):
    dts = [parse_dtype(n) for n in CODE_DTYPES + SCALE_DTYPES_8BIT]
    run = _host_program(tmp_path, [f"{grid_cpp(d)}::round(v)" for d in dts])
    for i, dt in enumerate(dts):
        v = _probe_values(dt)
        if isinstance(dt, FloatType) and not dt.signed:
            v = v.abs()
        got = run(i, v)
        want = dt.decode(dt.encode(v)).to(torch.float32)
        bad = (got != want).nonzero().flatten()
        assert bad.numel() == 0, (f"{dt}: {bad.numel()} of {v.numel()} differ, e.g. v={v[bad[:5]].tolist()} "
                                  f"got {got[bad[:5]].tolist()} want {want[bad[:5]].tolist()}")
        # the sign follows the input (a negative value that rounds to zero gives -0.0, harmless in the GEMM)
        assert torch.equal(torch.signbit(got[got != 0]), torch.signbit(v[got != 0]))


@pytest.mark.parametrize("act_s", [a for a in ACTS if "dynamic" in a and "float16" not in a])
def test_scale_encoders_match_the_reference(tmp_path, act_s):
    """fp32, 8-bit float and e8m0 scales (bf16 / fp16 scales round with CUDA intrinsics: the GPU test covers them)."""
    act = ActDesc.parse(act_s)
    qmax = reference._symmetric_qmax(act.dtype, "test")
    run = _host_program(tmp_path, [f"{scale_cpp(act.scale, act.dtype)}::encode(v, {qmax!r}f)"])
    g = torch.Generator().manual_seed(3)
    amax = torch.cat([torch.exp2(torch.empty(3000).uniform_(-135, 40, generator=g)),
                      torch.tensor([0.0, 1e-45, 2.0 ** -120, 2.0 ** -121, 448.0 * 6, 1.0, 6.0, 7.0, 127.0])])
    amax = amax.to(torch.float32)
    got = run(0, amax)
    # the reference's dynamic scale of a group whose absmax is `amax`: one 16-column group per row holding amax
    grp = ActDesc(act.dtype, ScaleSpec("group", act.scale.dtype, group_size=16))
    x = torch.zeros(amax.numel(), 16)
    x[:, 0] = amax
    _, s_st = reference.quantize_activations(x, grp)
    want = reference.decode_scale(s_st, act.scale.dtype).reshape(-1).to(torch.float32)
    bad = (got != want).nonzero().flatten()
    assert bad.numel() == 0, (f"{act}: e.g. amax={amax[bad[:5]].tolist()} got {got[bad[:5]].tolist()} "
                              f"want {want[bad[:5]].tolist()}")


# ------------------------------------------------------------------------------------------------------ sources
def test_sources_are_distinct_and_name_what_they_are():
    names = set()
    for a in ACTS:
        act = ActDesc.parse(a)
        for tin in (torch.bfloat16, torch.float16, torch.float32):
            for vec in (True, False):
                name, src = act_quant_source(act, tin, torch.bfloat16, vec)
                assert name.startswith("humming_act_quant_") and name not in names
                names.add(name)
                assert f"// activations: {act}" in src and "humming::act_quant_rows<" in src
    nvfp4 = act_quant_source(NAMED_FORMATS["nvfp4"][1], torch.bfloat16, torch.bfloat16, True)[1]
    assert "humming::FloatGrid<1, 0, 0x40c00000u>" in nvfp4
    assert f", 3, 16, true, true, {act_quant.THREADS}, {act_quant.REG_STEPS}>" in nvfp4


def test_specs_cover_the_absmax_kernel_of_dynamic_tensor_scales():
    dyn = act_quant_specs(ActDesc.parse("a:float8_e4m3fn,s:tensor:float32,dynamic"), torch.bfloat16, "sm_90a")
    assert sorted(s.config["op"] for s in dyn) == ["act_amax", "act_amax", "act_quant", "act_quant"]
    tok = act_quant_specs(ActDesc.parse("a:int8,s:token:float32,dynamic"), torch.float16, "sm_80",
                          in_dtypes=(torch.float16, torch.float32))
    assert [s.config["op"] for s in tok] == ["act_quant"] * 4


def test_what_is_refused_is_named():
    act = ActDesc.parse("a:int4,s:g128:bfloat16,dynamic")
    assert act_quant_unsupported_reason(act, torch.bfloat16) == ""
    assert "float32" in act_quant_unsupported_reason(act, torch.float32)
    assert "k_perm" in act_quant_unsupported_reason(act, torch.bfloat16, k_perm=True)
    # per-token scales commute with the act-order gather
    assert act_quant_unsupported_reason(ActDesc.parse("a:int8,s:token:float32,dynamic"), torch.float16, True) == ""
    assert "not quantized" in act_quant_unsupported_reason(ActDesc("bfloat16"), torch.bfloat16)
    with pytest.raises(DescError, match="input dtype"):
        act_quant_source(act, torch.int8, torch.bfloat16, True)
    with pytest.raises(DescError, match="run on CUDA"):
        ActQuantizer(act, torch.bfloat16, "cpu", name="l0")
    # the GEMM alone never takes quantized activations
    from vllm_humming.ops import gemm

    qw = reference.quantize_weight(torch.randn(32, 128), WeightDesc.parse("w:int8,s:channel:float32"), name="l1")
    assert "weights on cpu" in gemm.unsupported_reason(qw, act, torch.bfloat16)
    assert "k_perm" in gemm.unsupported_reason(_with_perm(qw), act, torch.bfloat16)
    assert gemm.kernel_family(qw.desc, act).startswith("act quant (a:int4")
    assert gemm.kernel_family(qw.desc, act).endswith(")")


def _with_perm(qw):
    import dataclasses

    return dataclasses.replace(qw, k_perm=torch.arange(qw.shape[1]))


def test_cpu_layers_keep_the_torch_path():
    from vllm_humming.ops.linear import humming_linear, prepare_linear

    wdesc, act = NAMED_FORMATS["w8a8-int8"]
    w = torch.randn(48, 96)
    qw = reference.quantize_weight(w, wdesc, name="cpu")
    pl = prepare_linear(qw, act)
    assert pl.backend == "torch" and "cpu" in pl.fallback_reason
    x = torch.randn(5, 96)
    y = humming_linear(x, pl).float()
    ref = reference.reference_gemm(x, qw, act)
    assert torch.allclose(y, ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())


# ---------------------------------------------------------------------------------------------------- compiles
@pytest.mark.parametrize("arch", ARCHS)
def test_every_act_quant_kernel_compiles(arch, tmp_path):
    cache = os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path / "jit")
    specs = []
    for a in ACTS:
        act = ActDesc.parse(a)
        for out in ((torch.float16,) if arch == "sm_75" else (torch.bfloat16, torch.float16)):
            ins = (out, torch.float32) if arch in ("sm_80", "sm_90a") else (out,)
            specs += act_quant_specs(act, out, arch, in_dtypes=ins)
    arts = compile_many(specs, cache_dir=cache)
    assert len(arts) == len(specs) and all(len(a.cubin) > 1000 for a in arts)
    assert len({s.name for s in specs}) == len(specs) - sum(s.config["op"] == "act_amax" for s in specs) + \
        len({s.name for s in specs if s.config["op"] == "act_amax"})


# --------------------------------------------------------------------------- the kernels themselves, emulated on CPU
# tests/host/cuda_emu.h runs act_quant.cuh's kernel bodies with one std::thread per CUDA thread, so the indexing (row
# loop, chunks, the group butterflies, the two-pass token absmax, the per-tensor partials, vector and scalar paths)
# is checked bit for bit against reference.quantize_activations / dequantize_activations without a GPU.
# (description, input, output, vector path, threads, chunks per thread in registers): the production block, and a
# small batch (64 x 8 x 2 = 1024 columns) so that rows of several batches (the per-token two-pass path, the
# quantize pass going downward from the batch left in registers) run too
EMU_CASES = [(a, tin, tout, vec, act_quant.THREADS, act_quant.REG_STEPS) for a in ACTS
             for tin, tout in ((torch.bfloat16, torch.bfloat16), (torch.float32, torch.float16))
             for vec in (True, False)] + \
            [(a, torch.bfloat16, torch.bfloat16, vec, 64, 2) for a in ACTS for vec in (True, False)]
_EMU_IO = {torch.bfloat16: "__nv_bfloat16", torch.float16: "__half", torch.float32: "float"}


@pytest.fixture(scope="module")
def emu_program(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine")
    cases = []
    for i, (a, tin, tout, vec, threads, reg) in enumerate(EMU_CASES):
        act = ActDesc.parse(a)
        targs = act_quant.act_quant_targs(act, tin, tout, vec, threads, reg)
        amax = "true" if act.dynamic and act.scale.granularity == "tensor" else "false"
        cases.append(f"    case {i}: run<{_EMU_IO[tin]}, {_EMU_IO[tout]}, {amax}, {'true' if vec else 'false'}, "
                     f"{threads}, {reg}>([](auto... a) {{ humming::act_quant_rows<{targs}>(a...); }}); break;")
    src = """#include "cuda_emu.h"
#include "humming/act_quant.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>

static int M, K, LDX;
static float SCALE;


template <class TIn, class T, bool kAmax, bool kVec, int kThreads, int kRegSteps, class F> static void run(F quant) {
  std::vector<float> xf((size_t)M * LDX);
  if (fread(xf.data(), sizeof(float), xf.size(), stdin) != xf.size()) exit(3);
  std::vector<TIn> x(xf.size());
  for (size_t i = 0; i < xf.size(); ++i) x[i] = emu::from_f32<TIn>(xf[i]);
  std::vector<T> out((size_t)M * K);
  std::vector<float> partials(264, -1.f);
  float scale = SCALE;
  int nparts = 0;
  if (kAmax) {
    nparts = M < 264 ? M : 264;
    emu::launch(nparts, kThreads, [&] {
      humming::act_amax_partials<TIn, kVec, kThreads, kRegSteps>(x.data(), LDX, M, K, partials.data());
    });
  }
  emu::launch(M, kThreads, [&] {
    quant(x.data(), (long long)LDX, out.data(), M, K, &scale, &scale, partials.data(), nparts);
  });
  for (auto v : out) {
    float f = emu::to_f32(v);
    fwrite(&f, sizeof f, 1, stdout);
  }
}

int main(int argc, char** argv) {
  const int which = atoi(argv[1]);
  M = atoi(argv[2]);
  K = atoi(argv[3]);
  LDX = atoi(argv[4]);
  SCALE = (float)atof(argv[5]);
  switch (which) {
""" + "\n".join(cases) + """
    default: return 2;
  }
  return 0;
}
"""
    import emu_launch

    return emu_launch.build(src, str(tmp_path_factory.mktemp("emu") / "act_quant_emu"))


@pytest.mark.parametrize("case", range(len(EMU_CASES)),
                         ids=[f"{a}-{str(i)[6:]}-{str(o)[6:]}-{'vec' if v else 'scalar'}-t{t}r{r}"
                              for a, i, o, v, t, r in EMU_CASES])
def test_kernel_matches_the_reference_on_the_cpu_emulation(emu_program, case):
    a, tin, tout, vec, _, _ = EMU_CASES[case]
    act = ActDesc.parse(a)
    g = torch.Generator().manual_seed(case)
    shapes = [(1, 64, 64), (3, 200, 200), (2, 1000, 1008), (17, 2056, 2056), (1, 4104, 4104)]
    if vec:
        shapes = [s for s in shapes if s[1] % 8 == 0 and s[2] % 8 == 0]
    for m, k, ldx in shapes:
        # rows of different magnitude, a few outliers, an all-zero row, exact zeros inside rows
        x = torch.randn(m, ldx, generator=g) * torch.exp2(torch.randint(-6, 7, (m, 1), generator=g).float())
        x[torch.rand(m, ldx, generator=g) < 0.01] *= 40
        x[torch.rand(m, ldx, generator=g) < 0.05] = 0
        if m >= 3:
            x[1] = 0
        x = x.to(tin).to(torch.float32)
        scale = 0.0371 if not act.dynamic else (0.75 if act.scale2 is not None else 1.0)
        proc = subprocess.run([str(emu_program), str(case), str(m), str(k), str(ldx), repr(scale)],
                              input=x.contiguous().numpy().tobytes(), capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        got = torch.frombuffer(bytearray(proc.stdout), dtype=torch.float32).reshape(m, k)
        st = torch.tensor([scale], dtype=torch.float32)
        codes, s = reference.quantize_activations(x[:, :k], act, st)
        want = reference.dequantize_activations(codes, s, act, st).to(tout).to(torch.float32)
        bad = (got != want).nonzero()
        assert bad.shape[0] == 0, (f"{a} {tin}->{tout} M={m} K={k} ldx={ldx}: {bad.shape[0]} differ, first at "
                                   f"{bad[:3].tolist()}: got {got[tuple(bad[:3].t())].tolist()} "
                                   f"want {want[tuple(bad[:3].t())].tolist()}")


# ------------------------------------------------------------------------- ActQuantizer end to end on the emulation
@pytest.mark.parametrize("act_s", ["a:int8,s:token:float32,dynamic", "a:float8_e4m3fn,s:tensor:float32,dynamic",
                                   "a:int8,s:tensor:float32,static",
                                   "a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32",
                                   "a:int4,s:g128:bfloat16,dynamic"])
def test_quantizer_launches_on_the_emulation(act_s, emulated):
    """ActQuantizer's own launches (argument order and types, grids, the partials buffer, the vector-or-scalar
    choice, strided inputs) run the kernels on the CPU emulation (tests/host/emu_launch.py): bit for bit the
    reference."""
    built = emulated
    act = ActDesc.parse(act_s)
    st = torch.tensor([0.0371]) if not act.dynamic else (torch.tensor([0.75]) if act.scale2 is not None else None)
    q = ActQuantizer(act, torch.bfloat16, "cpu", static_scale=st, name="emu")
    g = torch.Generator().manual_seed(11)
    for m, k, ldx, tin in ((1, 4096, 4096, torch.bfloat16), (17, 1000, 1000, torch.bfloat16),
                           (5, 200, 216, torch.float32), (3, 264, 264, torch.float16)):
        x = (torch.randn(m, ldx, generator=g) * 3).to(tin)[:, :k]
        out = torch.full((m, k), float("nan"), dtype=torch.bfloat16)
        got = q(x, out=out)
        codes, s = reference.quantize_activations(x.float(), act, st)
        want = reference.dequantize_activations(codes, s, act, st).to(torch.bfloat16)
        assert torch.equal(got, want), f"{act} M={m} K={k} ldx={ldx} {tin}"
    kinds = sorted(name.split("_")[2] for name in built if name.startswith("humming_act_"))
    assert kinds.count("quant") >= 3 and (kinds.count("amax") >= 1) == (act.dynamic and
                                                                       act.scale.granularity == "tensor")
