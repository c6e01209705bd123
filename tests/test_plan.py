"""The launch plan (vllm_humming/ops/plan.py) on the CPU: the offline planner against plans the H200 recorded, the
cubin reader against ptxas's own report, the plan's laziness and branches with synthetic kernels, and the
``vllm-humming plan`` command."""

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
import torch

from vllm_humming.bench.formats import FORMATS
from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import OfflinePlanner, format_params, stage_smem
from vllm_humming.ops.plan import (FLAG_ROW_TILE_SHIFT, FLAG_SPLITK_POLL, KernelFit, PlanError, cubin_resources,
                                   describe, kernel_fit, plan_launches)
from vllm_humming.tuning.heuristics import KernelChoice, arch_info, x16_max_m

FIXTURE = Path(__file__).parent / "fixtures" / "h200_plans_s30.json"
FORMAT_DESC = {f.name: f.weight for f in (FORMATS.values() if isinstance(FORMATS, dict) else FORMATS)}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    # the compile matrix's cache holds every default kernel already (scripts/test.sh); a fresh one compiles ~15
    return os.environ.get("HUMMING_COMPILE_MATRIX_CACHE") or str(tmp_path_factory.mktemp("jit"))


def test_offline_plans_match_the_plans_the_h200_recorded(cache_dir, monkeypatch):
    """Every plan GemmLayer made in session 30's bench runs on the H200 (kernel, grid, K splits, shared memory,
    registers, flags, reducers, the split tail), made again here from NVRTC's cubins -- the split plans of the wide
    layer (whole waves + K-split tail, the 192-row sibling head) and HUMMING_DP_TAIL=0 included."""
    cases = json.loads(FIXTURE.read_text())["cases"]
    assert len(cases) >= 38
    planners = {}
    for case in cases:
        n, k = map(int, case["shape"].split("x"))
        for var in ("HUMMING_DP_TAIL",):
            monkeypatch.delenv(var, raising=False)
        # (recorded before the shared-memory prefetch choice of 1-2 tokens: test_smem_prefetch_plan covers that)
        monkeypatch.setenv("HUMMING_SMEM_PREFETCH", "0")
        # (and before session 47's wide 9-16-token bulk rule: test_wide_decode_bulk_switch covers that)
        monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "0")
        # (and before session 48's one-token tiles: test_one_token_tiles covers those)
        monkeypatch.setenv("HUMMING_ONE_TOKEN_TILES", "0")
        # (and before session 52's whole-tile bulk rule at 33-64 tokens: test_wide_bulk_64_rule covers that)
        monkeypatch.setenv("HUMMING_WIDE_BULK_64", "0")
        # (and before session 54's polled split-K end, a flag bit: test_splitk_poll_policy covers that)
        monkeypatch.setenv("HUMMING_SPLITK_POLL", "0")
        monkeypatch.setenv("HUMMING_NARROW16_POLLED", "0")   # (and its 9-16-token tile: test_narrow16_polled_rule)
        for var, value in case["env"].items():
            monkeypatch.setenv(var, value)
        key = (case["format"], n, k)
        if key not in planners:
            planners[key] = OfflinePlanner(FORMAT_DESC[case["format"]], n, k, "sm_90a", 132, cache_dir=cache_dir)
        got = json.loads(json.dumps(planners[key].plan(case["m"]).info))
        want = case["plan"]
        if "tail" in want and "choice" not in want["tail"]:
            got["tail"].pop("choice")    # (recorded before plan_info named the tail's kernel)
        if want["choice"].endswith("_direct"):
            # the mma.sync decode kernels' phase-2 pass over x changed in session 37 (direct_window_pass), and with
            # it their registers (68 -> 72 on the wide layer's x16 twin); the plan itself must not change
            assert 32 <= got.pop("regs") <= 255
            want = {key: value for key, value in want.items() if key != "regs"}
        else:
            c = KernelChoice.parse(want["choice"])
            if c.wgmma and 8 < c.bt <= 128 and not (c.bulk or c.stream_k or c.cluster):
                # session 54's polled split-K end is compiled into these kernels' epilogue (98 -> 100 registers on
                # the NVFP4 64-token tile): a few registers more, never past the recorded blocks per SM -- the plan
                # (grid, splits, shared memory) must not change
                regs = got.pop("regs")
                assert regs <= max(want["regs"], 128 if want["regs"] <= 128 else 168), (want, regs)
                want = {key: value for key, value in want.items() if key != "regs"}
        assert got == want, (case["format"], case["shape"], case["m"], case["env"], case["source"])


def test_cubin_resources_read_what_ptxas_reports(cache_dir):
    planner = OfflinePlanner("w:uint4b8,s:g128:bfloat16", 4096, 4096, "sm_90a", 132, cache_dir=cache_dir)
    for bucket in (8, 64, 256):
        fit = planner.fit(bucket)
        assert 32 <= fit.regs <= 255
    # a kernel of known static shared memory, registers against ptxas -v (sm_90+ cubins put the block's 1 KB system
    # reserve into the kernel's shared section; the driver, like ptxas, does not count it)
    from vllm_humming.jit.nvrtc import run_nvrtc

    src = r"""
extern "C" __global__ void k(float* out, const float* in, int n) {
  __shared__ float buf[300];
  buf[threadIdx.x % 300] = in[threadIdx.x];
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < n; ++i) acc = acc * 1.5f + buf[(threadIdx.x + i) % 300];
  out[threadIdx.x] = acc;
}
"""
    for arch in ("sm_80", "sm_90a", "sm_120a"):
        r = run_nvrtc(src, "k.cu", [f"--gpu-architecture={arch}", "--ptxas-options=-v"], "cubin")
        assert r.ok, r.log
        regs, static_smem = cubin_resources(r.binary, "k")
        log = r.log if isinstance(r.log, str) else r.log.decode()
        assert (regs, static_smem) == tuple(int(v) for v in re.search(r"Used (\d+) registers.*?(\d+) bytes smem",
                                                                       log).groups()), (arch, log)
        assert static_smem == 1200
    art = r
    with pytest.raises(ValueError, match="not found"):
        cubin_resources(art.binary, "no_such_kernel")
    with pytest.raises(ValueError, match="ELF64"):
        cubin_resources(b"not a cubin", "k")


def _fit(short: str, regs: int = 128, smem: int = 0, static: int = 0, info=None) -> KernelFit:
    info = info or arch_info("sm_90a", 132)
    c = KernelChoice.parse(short)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    return kernel_fit(c, smem or stage_smem(c, fp), regs, static, info)


def test_plan_asks_only_for_the_kernels_it_may_launch():
    """The layer compiles an alternative's kernel only when a plan takes it: the x16 twin from X16_MAX_M tokens down,
    the stream-K twin only on a wave cliff -- and the bucket's own kernel only when the plan may launch it (at one
    token the x16 twin replaces it whatever its grid, so a cold layer's first decode call compiles one kernel)."""
    info = arch_info("sm_90a", 132)
    fits = {"": _fit("bt8_wn14_tm1_wk2_ak256_s4_direct", 68, static=16),
            "x16": _fit("bt8_wn14_tm1_wk2_ak256_s4_x16_direct", 68, static=16)}
    asked = []

    def fit(tag):
        asked.append(tag)
        return fits[tag]

    p1 = plan_launches(1, 28672, 4096, 4, 128, 0, info, fit, ("x16",))
    assert asked == ["x16"] and p1.launches[0].tag == "x16" and p1.launches[0].grid == (1, 128, 1)
    asked.clear()
    p3 = plan_launches(3, 28672, 4096, 4, 128, 0, info, fit, ("x16",))
    assert asked == [""] and p3.launches[0].tag == ""
    # a layer deeper than 4096 takes the twin up to 8 tokens (heuristics.x16_max_m, session 37)
    fits.update({"": _fit("bt8_wn4_tm2_wk2_ak256_s4_direct", 114, static=16),
                 "x16": _fit("bt8_wn4_tm2_wk2_ak256_s4_x16_direct", 128, static=16)})
    for m, tag in ((3, "x16"), (8, "x16")):
        assert plan_launches(m, 4096, 14336, 4, 128, 0, info, fit, ("x16",)).launches[0].tag == tag
    assert x16_max_m(14336) == 8 and x16_max_m(4096) == 2 and x16_max_m(4160) == 8
    # the 256-token tile: 224 row tiles x 1 split is no wave cliff at 1 block per SM -> no stream-K twin asked for
    base = _fit("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma", 176)
    asked.clear()
    fits2 = {"": base, "stream_k_twin": _fit("bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma", 255)}

    def fit2(tag):
        asked.append(tag)
        return fits2[tag]

    plan_launches(1024, 28672, 4096, 4, 128, 0, info, fit2, ("stream_k_twin",))
    assert asked == [""]
    # 18432x7168 at 400 tokens: 144 x 2 tiles on 132 slots is a cliff -> the twin, one block per slot
    p = plan_launches(400, 18432, 7168, 4, 128, 0, info, fit2, ("stream_k_twin",))
    assert asked[-1] == "stream_k_twin" and p.launches[0].grid == (132, 1, 1) and p.info["splits"] == 132


def test_smem_prefetch_plan(cache_dir, monkeypatch):
    """1-2 tokens on a 4-bit integer layer with K <= 4096 and <= 48 rows per SM: the plan launches the shared-memory
    prefetch choice (heuristics.smem_prefetch_decode_choice: one block of 16-48 rows per SM, one split, the x16 twin
    for bf16; 72 KB of weights at one token, 48 at two: SMEM_PREFETCH_KB_BY_M) with the early PDL release and at most
    half an SM of shared memory / registers per block, so the next launch's block fits beside it; 3+ tokens, wide /
    long layers, other codes and HUMMING_SMEM_PREFETCH=0 keep the bucket's choice."""
    from vllm_humming.ops.plan import FLAG_PDL_EARLY_RELEASE

    monkeypatch.delenv("HUMMING_SMEM_PREFETCH", raising=False)
    monkeypatch.delenv("HUMMING_PDL_EARLY_RELEASE", raising=False)
    info = arch_info("sm_90a", 132)
    for desc, n, k, dtype, rows in [("w:uint4b8,s:g128:bfloat16", 6144, 4096, torch.bfloat16, 48),
                                    ("w:uint4b8,s:g128:bfloat16", 4096, 4096, torch.float16, 32),
                                    ("w:uint4,s:g64:bfloat16,zp:int", 2048, 4032, torch.bfloat16, 16),
                                    ("w:uint4b8,s:g128:bfloat16", 5000, 2048, torch.bfloat16, 48)]:
        planner = OfflinePlanner(desc, n, k, "sm_90a", 132, dtype=dtype, cache_dir=cache_dir)
        for m, kb in ((1, 72), (2, 48)):
            p = planner.plan(m)
            (launch,) = p.launches
            c = launch.choice
            assert c.pf == kb and c.direct and not c.wgmma and c.block_n == rows, (desc, n, m, c.short())
            assert c.x16 == (dtype == torch.bfloat16)
            assert launch.grid == (1, -(-n // rows), 1) and launch.flags & FLAG_PDL_EARLY_RELEASE
            fit = planner.fit(8, launch.tag)
            assert 2 * (launch.smem + 1024) <= info.smem_per_sm and 2 * fit.regs * c.threads <= 65536, c.short()
        assert planner.plan(3).launches[0].choice.wgmma
    # (the wide layer's one-token tile streams through a shared-memory ring, _pfr64: not this prefetch grid)
    wide = OfflinePlanner("w:uint4b8,s:g128:bfloat16", 28672, 4096, "sm_90a", 132, cache_dir=cache_dir).plan(1)
    assert wide.launches[0].tag == "ring_x16" and wide.launches[0].choice.block_n == 224
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 4096, 14336), ("w:uint3b4,s:g128:bfloat16", 6144, 4096),
                       ("w:float4_e2m1,s:g32:float8_e8m0fnu", 6144, 4096)]:
        assert OfflinePlanner(desc, n, k, "sm_90a", 132, cache_dir=cache_dir).plan(1).launches[0].choice.pf == 0
    monkeypatch.setenv("HUMMING_SMEM_PREFETCH", "0")
    assert OfflinePlanner("w:uint4b8,s:g128:bfloat16", 6144, 4096, "sm_90a", 132,
                          cache_dir=cache_dir).plan(1).launches[0].choice.wgmma


def test_split_plan_launches_share_one_ticket_array_and_count_row_tiles():
    """Whole waves + a K-split tail (28672x4096, 512 tokens): the tail's first row tile sits in `flags` bits 8.., its
    workspace covers only its own columns, the head needs none, and tickets cover the bucket grid's tiles."""
    info = arch_info("sm_90a", 132)
    base = _fit("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma", 176)
    p = plan_launches(512, 28672, 4096, 4, 128, 0, info, lambda tag: base, ())
    head, tail = p.launches
    assert head.grid == (2, 198, 1) and head.ws_numel == 0 and head.row_tile0 == 0
    assert tail.grid == (2, 26, 2) and tail.row_tile0 == 198 and tail.flags >> FLAG_ROW_TILE_SHIFT == 198
    assert tail.ws_numel == 2 * 2 * 256 * 26 * 128      # splits x token tiles x bt x its row tiles x block_n
    assert p.ticket_tiles == 2 * 224
    assert describe(p) == ("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma grid=(2, 198, 1) splits=1 + tail "
                           "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma grid=(2, 26, 2) splits=2")


def test_plan_error_names_the_shared_memory_problem():
    info = arch_info("sm_90a", 132)
    # a direct choice whose smallest K range cannot fit the shared memory the kernel was set up with
    tiny = KernelFit(KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"), 1024, 128, 2, 2)
    with pytest.raises(PlanError, match="shared memory"):
        plan_launches(16, 4096, 4096, 4, 128, 0, info, lambda tag: tiny, ())


def test_plan_command_prints_the_plans(cache_dir, monkeypatch, capsys, tmp_path):
    from vllm_humming.cli import main

    monkeypatch.setenv("HUMMING_CACHE_DIR", cache_dir)
    out_json = tmp_path / "plans.json"
    assert main(["plan", "--shapes", "28672x4096", "--ms", "1,512,4096", "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "M=1: bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct grid=(1, 128, 1)" in text
    assert "+ tail bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma grid=(2, 26, 2) splits=2" in text
    assert "396 blocks / 1 per SM = 3.00 waves" in text
    assert "M=4096: expand + cuBLAS" in text
    report = json.loads(out_json.read_text())
    plans = report["layers"][0]["plans"]
    assert [p["m"] for p in plans] == [1, 512, 4096] and plans[2]["prefill"]
    assert plans[1]["launches"][1]["grid"] == [2, 26, 2] and plans[1]["launches"][0]["waves"] == 3.0
    # every M, consecutive M with one plan as one range
    assert main(["plan", "--shapes", "6144x4096", "--ms", "all"]) == 0
    text = capsys.readouterr().out
    assert "  M=1: bt8_wn3_tm1_wk4_ak64_s4_pf72_x16_direct grid=(1, 128, 1) splits=1" in text
    assert "  M=2: bt8_wn3_tm1_wk4_ak64_s4_pf48_x16_direct grid=(1, 128, 1) splits=1" in text
    assert "  M=3-8: bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma grid=(1, 48, 8) splits=8" in text
    assert "  M=257-384: bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma grid=(132, 1, 1) stream-K" in text
    assert "  M=1793-2047: " in text and "from M=2048" in text
    assert main(["plan", "--shapes", "12x", "--ms", "1"]) == 2
    with pytest.raises(SystemExit):
        main(["plan", "--sms", "-3"])
    assert main(["plan", "--arch", "sm_99", "--shapes", "256x256", "--ms", "1"]) == 2
    assert main(["plan", "--desc", "w:uint4b8,s:g7:bfloat16", "--shapes", "256x256", "--ms", "1"]) == 2
    err = capsys.readouterr().err
    assert "vllm-humming plan" in err and "--sms must be an SM count" in err and "cannot compile for sm_99" in err


class _FakeLauncher:
    def __init__(self, log, tag):
        self.log, self.tag = log, tag

    def bind(self, grid, threads, smem, values, varying):
        log, tag = self.log, self.tag
        log.append({"tag": tag, "grid": tuple(grid), "threads": threads, "smem": smem, "values": tuple(values)})

        def launch(xp, yp):
            log.append(("call", tag, tuple(grid), xp, yp))
        launch.arg_cells = [None] * (len(values))
        return launch


@pytest.mark.parametrize("n,k", [(28672, 4096), (6144, 4096), (4100, 4160)])
def test_gemm_layer_binds_what_the_planner_decides(n, k, cache_dir, monkeypatch):
    """GemmLayer._plan on the CPU, with the kernels' launchers faked: every launch is bound with the planner's grid,
    threads, shared memory, K range and flags; a workspace and the ticket counters exactly where the plan needs
    them; a split plan calls its two launches in order with the same x / y; plan_info is the planner's."""
    from types import SimpleNamespace

    import vllm_humming.jit.tma as tma
    from vllm_humming.ops import gemm as G
    from vllm_humming.tuning.heuristics import m_bucket

    desc = "w:uint4b8,s:g128:bfloat16"
    planner = OfflinePlanner(desc, n, k, "sm_90a", 132, cache_dir=cache_dir)
    layer = G.GemmLayer.__new__(G.GemmLayer)
    layer.name, layer.desc, layer.fp, layer.dtype = "t", WeightDesc.parse(desc), planner.fp, torch.bfloat16
    layer.n, layer.k, layer.n16, layer.k64, layer.k8 = n, k, planner.n16, planner.k64, -(-k // 8) * 8
    layer.arch, layer.info, layer._forced, layer._plans, layer.plan_info = "sm_90a", planner.info, {}, {}, {}
    layer.device, layer._tickets, layer._old_tickets = torch.device("cpu"), torch.zeros(8, dtype=torch.int32), []
    layer.w = torch.zeros(64, dtype=torch.int32)
    layer.gscale = torch.zeros(64, dtype=torch.bfloat16)
    layer.gzero = layer.chscale = layer.tscale = layer.bias = None
    log = []
    layer._bucket = lambda bucket, alt="": SimpleNamespace(choice=planner.fit(bucket, alt).choice,
                                                           fit=planner.fit(bucket, alt),
                                                           launcher=_FakeLauncher(log, alt))
    workspaces = []

    def workspace(device, numel, poll=False):
        workspaces.append((torch.empty(numel, dtype=torch.float32), poll))
        return workspaces[-1][0]
    monkeypatch.setattr(G, "_workspace", workspace)
    monkeypatch.setattr(tma, "TileMapEncoder", lambda dtype, rows: ("encoder", rows))
    monkeypatch.setattr(tma, "XMapSlot", lambda cell, enc, rows, cols: SimpleNamespace(
        updates=[], update=lambda p: None, rows=rows, cols=cols))
    for m in (1, 3, 16, 40, 64, 150, 300, 512, 768, 1024, 1900):
        log.clear()
        workspaces.clear()
        plan = layer._plan(m)
        lp = planner.plan(m)
        assert layer.plan_info[m] == lp.info
        binds = [e for e in log if isinstance(e, dict)]
        assert len(binds) == len(lp.launches)
        for b, pl in zip(binds, lp.launches):
            assert (b["tag"], b["grid"], b["threads"], b["smem"]) == (pl.tag, pl.grid, pl.choice.threads, pl.smem)
            v = b["values"]
            assert v[10:17] == (m, n, layer.k8, planner.n16, planner.k64, pl.atoms_per_split, pl.flags)
            assert v[1] == layer.w.data_ptr() and v[2] == layer.gscale.data_ptr() and v[0] == v[7] == 0
            if pl.ws_numel:
                assert v[8] != 0 and v[9] == layer._tickets.data_ptr()
            else:
                assert v[8] == v[9] == 0
            assert (len(v) == 18) == pl.choice.tma_x
        assert len(workspaces) == sum(1 for pl in lp.launches if pl.ws_numel)
        # a polled split-K launch gets the kept-empty workspace, the ticket path the shared one (session 54)
        assert [p for _, p in workspaces] == [bool(pl.flags & FLAG_SPLITK_POLL) for pl in lp.launches if pl.ws_numel]
        assert layer._tickets.numel() >= lp.ticket_tiles
        assert plan[2] is layer._tickets                 # (launch, workspace, tickets, TMA map slot)
        assert (plan[3] is not None) == lp.launches[0].choice.tma_x
        log.clear()
        plan[0](111, 222)
        assert log == [("call", pl.tag, pl.grid, 111, 222) for pl in lp.launches]
        assert m_bucket(m) and layer._plan(m) is plan    # cached
    if n == 28672:
        assert len(planner.plan(512).launches) == 2 and planner.plan(150).launches[0].tag == "wide_rows"


INVARIANT_DESCS = ["w:uint4b8,s:g128:bfloat16", "w:uint3,s:g64:bfloat16,zp:int", "w:uint8b128,s:channel:bfloat16",
                   "w:float4_e2m1,s:g32:float8_e8m0fnu", "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32",
                   "w:float8_e4m3fn,s:b128x128:float32"]
INVARIANT_SHAPES = [(6144, 4096), (28672, 4096), (4096, 14336), (18432, 7168), (4100, 4160), (1000, 1000)]
INVARIANT_MS = [1, 2, 3, 8, 9, 16, 17, 33, 64, 65, 129, 150, 256, 257, 300, 385, 512, 513, 768, 1025, 1600, 1900, 2047]


# the other archs (compile-only here: no plan of theirs has run on hardware), at each bucket's edges
OTHER_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_100a", "sm_120a"]
OTHER_DESCS = ["w:uint4b8,s:g128:bfloat16", "w:float4_e2m1,s:g32:float8_e8m0fnu", "w:float8_e4m3fn,s:b128x128:float32"]
OTHER_MS = [1, 8, 9, 16, 17, 33, 65, 129, 257, 385, 513, 1025, 2047]


@pytest.mark.parametrize("arch,desc", [("sm_90a", d) for d in INVARIANT_DESCS]
                         + [(a, d) for a in OTHER_ARCHS for d in OTHER_DESCS])
def test_every_plan_covers_the_layer_once_within_the_device_limits(arch, desc, cache_dir):
    """Every plan of these formats x shapes (odd N / K too) x token counts across every bucket, on an H200's 132 SMs
    (and at the bucket edges on every other arch, with its table's SM count and shared memory): the launches cover
    every token row, weight row and K atom exactly once (split plans: the head's rows end on a base-tile boundary, the
    tail starts there), no launch exceeds a block's shared memory, split-K has no empty split, a workspace exists
    exactly where a launch sums splits through it and stays under 64 MB, and the flags carry the reducers and the
    first row tile."""
    from vllm_humming.ops.plan import FLAG_REDUCERS_SHIFT

    for n, k in INVARIANT_SHAPES:
        planner = OfflinePlanner(desc, n, k, arch, 0, dtype=torch.float16 if arch == "sm_75" else torch.bfloat16,
                                 cache_dir=cache_dir)
        info, k_atoms = planner.info, planner.k64 // 64
        for m in (INVARIANT_MS if arch == "sm_90a" else OTHER_MS):
            lp = planner.plan(m)
            if lp is None:
                assert m >= planner.prefill_m
                continue
            where = (desc, n, k, m, describe(lp))
            rows_covered = 0
            for pl in lp.launches:
                c = pl.choice
                assert 0 < pl.smem <= info.smem_per_block, where
                assert pl.flags >> FLAG_ROW_TILE_SHIFT == pl.row_tile0, where
                assert (pl.flags >> FLAG_REDUCERS_SHIFT) & 15 == pl.reducers and 1 <= pl.reducers <= 4, where
                assert pl.ws_numel * 4 <= 64 << 20, where
                if c.bulk or c.stream_k:
                    assert pl.grid[1:] == (1, 1) and 1 <= pl.grid[0] <= info.sms * 4 and pl.ws_numel > 0, where
                    rows_covered = planner.n16
                    continue
                m_tiles, rows, splits = pl.grid
                assert m_tiles == -(-m // c.bt), where
                assert pl.row_tile0 * lp.launches[-1].choice.block_n == rows_covered, where
                rows_covered += rows * c.block_n
                per = pl.atoms_per_split
                assert splits * per >= k_atoms, where
                if not c.cluster:
                    assert (splits - 1) * per < k_atoms, where          # no empty split
                    assert (pl.ws_numel > 0) == (splits > 1), where
                else:
                    assert pl.ws_numel == 0, where
                assert pl.reducers <= max(1, splits), where
            # the rows: every weight row once, the last tile at most one tile past N16
            last = lp.launches[-1].choice
            assert planner.n16 <= rows_covered < planner.n16 + last.block_n or last.bulk or last.stream_k, where
            if lp.ticket_tiles:
                base = lp.launches[-1].choice
                assert lp.ticket_tiles >= -(-m // base.bt) * -(-planner.n16 // base.block_n) or base.bulk or \
                    base.stream_k, where


def test_wgmma_prefetch_plan(cache_dir, monkeypatch):
    """3-16 tokens on a small int4 / int3 / MXFP4 / NVFP4 / int8 / fp8 layer (K <= 4096; 8-bit codes with channel
    scales) whose every block's weight range fits shared
    memory twice per SM: the plan launches the prefetching wgmma decode (heuristics.wgmma_prefetch_decode_choice) --
    one block per SM at most, 75-100 % of the SMs, the early PDL release, the whole range prefetched, two blocks'
    registers and shared memory per SM.  Larger layers (6144x4096; int8 4096x4096: only part of a range fits), long /
    wide layers, unmeasured codes (int2, 8-bit codes with group scales) and HUMMING_WG_PREFETCH=0 keep their kernels;
    1-2 tokens take the mma.sync prefetch grid (int4) or the same prefetching wgmma decode (the other codes)."""
    from vllm_humming.ops.plan import FLAG_PDL_EARLY_RELEASE

    monkeypatch.delenv("HUMMING_WG_PREFETCH", raising=False)
    monkeypatch.delenv("HUMMING_PDL_EARLY_RELEASE", raising=False)
    info = arch_info("sm_90a", 132)
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 4096, 4096), ("w:uint4b8,s:g128:bfloat16", 2048, 4096),
                       ("w:uint4,s:g64:bfloat16,zp:int", 1024, 4096), ("w:uint4b8,s:g128:bfloat16", 4096, 2048),
                       ("w:uint3b4,s:g128:bfloat16", 4096, 4096), ("w:float4_e2m1,s:g32:float8_e8m0fnu", 2048, 4096),
                       ("w:uint8b128,s:channel:bfloat16", 2048, 4096), ("nvfp4", 4096, 2048), ("fp8-channel", 1024, 4096)]:
        planner = OfflinePlanner(desc, n, k, "sm_90a", 132, cache_dir=cache_dir)
        bits, group = planner.fp.bits, planner.fp.group
        for m in (3, 8, 9, 16):
            (launch,) = planner.plan(m).launches
            c = launch.choice
            assert c.direct and c.wgmma and c.pf == 64 and c.bt == (8 if m <= 8 else 16), (desc, n, m, c.short())
            blocks = launch.grid[0] * launch.grid[1] * launch.grid[2]
            assert 3 * 132 <= 4 * blocks <= 4 * 132 and launch.flags & FLAG_PDL_EARLY_RELEASE, (n, m, launch.grid)
            assert c.direct_prefetch_atoms(launch.atoms_per_split, bits, group) >= launch.atoms_per_split
            assert 2 * (launch.smem + 1024) <= info.smem_per_sm
            assert 2 * planner.fit(8 if m <= 8 else 16, launch.tag).regs * c.threads <= 65536, c.short()
        one = planner.plan(1).launches[0].choice
        # (int4: the mma.sync prefetch grid; the other codes have no 1-2-token alternative: their bucket's choice)
        int4 = bits == 4 and planner.fp.family != "float"
        assert (one.pf and not one.wgmma) if int4 else (one.pf == 64 and one.wgmma), (desc, one.short())
    for desc, n, k in [("w:uint4b8,s:g128:bfloat16", 6144, 4096), ("w:uint4b8,s:g128:bfloat16", 4096, 14336),
                       ("w:uint4b8,s:g128:bfloat16", 28672, 4096), ("w:uint3b4,s:g128:bfloat16", 6144, 4096),
                       ("w:float4_e2m1,s:g32:float8_e8m0fnu", 6144, 4096), ("w:uint8b128,s:channel:bfloat16", 4096, 4096),
                       ("fp8-block", 2048, 4096), ("w:uint2b2,s:g64:bfloat16", 2048, 4096),
                       ("w:uint8,s:g64:bfloat16,zp:int", 2048, 4096)]:
        planner = OfflinePlanner(desc, n, k, "sm_90a", 132, cache_dir=cache_dir)
        assert all(planner.plan(m).launches[0].choice.pf == 0 for m in (3, 16)), (desc, n, k)
    monkeypatch.setenv("HUMMING_WG_PREFETCH", "0")
    c = OfflinePlanner("w:uint4b8,s:g128:bfloat16", 4096, 4096, "sm_90a", 132, cache_dir=cache_dir).plan(16).launches[0].choice
    assert c.wgmma and c.pf == 0


def test_wgmma_ring_is_gone(cache_dir, monkeypatch):
    """Session 39's shared-memory weight ring of the 9-16-token wgmma decode ("_pfr<KB>" on a wgmma choice,
    HUMMING_WG_RING_KB) measured slower than the register ring and was removed in session 41: the knob no longer
    changes the plan, and a wgmma choice with a ring is refused with the reason."""
    monkeypatch.setenv("HUMMING_WG_RING_KB", "32")
    info = OfflinePlanner("w:uint4b8,s:g128:bfloat16", 6144, 4096, "sm_90a", 132, cache_dir=cache_dir).plan(16).info
    assert "_pf" not in info["choice"], info
    with pytest.raises(ValueError, match="mma.sync one only.*removed in session 41"):
        KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_pfr32_direct_wgmma")


def test_wide_decode_bulk_switch(monkeypatch):
    """HUMMING_WIDE_DECODE_BULK (session 45's experiment switch, on by default since session 47's H200 A/B) puts the
    three-warpgroup bulk TMA kernel before the 2-block cluster decode in the wide layers' (N >= WIDE_N) 9-16-token int4
    rule only: int3, narrow layers, K the bulk kernel cannot run (not a multiple of 128), one token and the switch off
    keep their choices; a bad value is refused."""
    from vllm_humming.tuning.heuristics import WIDE_DECODE_BULK, WIDE_N, choose_kernel

    def pick(bits, n, k):
        return choose_kernel("sm_90a", 16, bits, 128, 0, 132, k=k, n=n).short()

    monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "0")
    off = pick(4, 28672, 4096)
    assert "_c2_direct_wgmma" in off
    monkeypatch.delenv("HUMMING_WIDE_DECODE_BULK", raising=False)
    assert pick(4, 28672, 4096) == WIDE_DECODE_BULK.short() == "bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma"
    assert pick(4, WIDE_N, 4096) == WIDE_DECODE_BULK.short() and pick(4, 20480, 5120) == WIDE_DECODE_BULK.short()
    assert "bulk" not in pick(4, 14336, 4096) and "bulk" not in pick(4, 10240, 8192)   # measured slower (session 47)
    assert pick(4, 28672, 4160) == off                        # 65 atoms: not whole two-atom stages
    # CI compiles both: the cluster decode still runs where K is not whole stages, under the switch off and for MoE
    from vllm_humming.tuning.heuristics import KernelChoice, all_choices
    assert {KernelChoice.parse(off), WIDE_DECODE_BULK} <= set(all_choices("sm_90a", 4, 128, 0, False))
    assert pick(3, 28672, 4096) == "bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma"
    assert pick(4, 6144, 4096) == "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"   # (session 54: the polled 128-row tile)
    assert pick(4, 4096, 14336) == "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"
    assert choose_kernel("sm_90a", 1, 4, 128, 0, 132, k=4096, n=28672).short() != WIDE_DECODE_BULK.short()
    monkeypatch.setenv("HUMMING_DECODE_BULK", "0")             # the rule's own switch turns it off too
    assert pick(4, 28672, 4096) == off
    monkeypatch.delenv("HUMMING_DECODE_BULK")
    monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "2")
    with pytest.raises(ValueError, match="HUMMING_WIDE_DECODE_BULK"):
        pick(4, 28672, 4096)


def test_wide_bulk_64_rule(monkeypatch):
    """Session 52 (heuristics.WIDE_BULK_64): wide int4 g128 layers at 33-64 tokens whose 256-row tiles fill half to
    all of the SMs take the 5-stage bulk tile, planned as one block per tile (no stream-K split); narrower or wider
    layers, other codes, K not whole two-atom stages, other buckets, MoE experts and HUMMING_WIDE_BULK_64=0 keep their
    choices; forced 64-token bulk tiles follow the same grid rule; a bad switch value is refused."""
    from vllm_humming.ops.moe_gemm import moe_choice
    from vllm_humming.tuning.heuristics import WIDE_BULK_64, all_choices, bulk_whole_tiles, choose_kernel

    def pick(m, n, k=4096, bits=4, group=128, zero=0, fam=False):
        return choose_kernel("sm_90a", m, bits, group, zero, 132, k=k, n=n, float_family=fam).short()

    monkeypatch.delenv("HUMMING_WIDE_BULK_64", raising=False)
    cp = "bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma"
    assert WIDE_BULK_64.short() == "bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma"
    for m in (33, 48, 64):
        assert pick(m, 28672) == pick(m, 19968) == pick(m, 33792) == WIDE_BULK_64.short()   # 112 / 78 / 132 tiles
        assert pick(m, 16384) == cp                      # 64 tiles: below half of the SMs (not measured)
        assert pick(m, 57344) == cp                      # 224 tiles: more than one per SM
        assert pick(m, 28672, bits=3) == cp and pick(m, 28672, group=32, fam=True) == cp   # int3, MXFP4
        assert pick(m, 28672, zero=1) != WIDE_BULK_64.short() and pick(m, 28672, group=0) != WIDE_BULK_64.short()
        assert pick(m, 28672, k=4160) != WIDE_BULK_64.short()   # 65 atoms
    assert pick(32, 28672) != WIDE_BULK_64.short() and pick(65, 28672) != WIDE_BULK_64.short()
    assert WIDE_BULK_64 in all_choices("sm_90a", 4, 128, 0, False)   # CI compiles it
    # MoE experts never take a persistent grid
    from vllm_humming.ops.gemm import format_params
    assert not moe_choice("sm_90a", 64, format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16")), 28672, 4096,
                          132).bulk
    # the plan: one block per tile
    planner = OfflinePlanner("w:uint4b8,s:g128:bfloat16", 28672, 4096, "sm_90a", 132)
    plan = planner.plan(64)
    assert plan.info["choice"] == WIDE_BULK_64.short() and plan.info["whole_tiles"] is True
    assert plan.launches[0].grid == (112, 1, 1) and "one tile per block" in describe(plan)
    assert bulk_whole_tiles(WIDE_BULK_64, 112, 132) and not bulk_whole_tiles(WIDE_BULK_64, 64, 132)
    assert not bulk_whole_tiles(WIDE_BULK_64, 133, 132)
    tm1_bulk = KernelChoice.parse("bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma")   # 128-row tiles: stream-K as before
    assert not bulk_whole_tiles(tm1_bulk, 112, 132)
    monkeypatch.setenv("HUMMING_WIDE_BULK_64", "0")
    assert pick(64, 28672) == cp and not bulk_whole_tiles(WIDE_BULK_64, 112, 132)
    monkeypatch.setenv("HUMMING_WIDE_BULK_64", "x")
    with pytest.raises(ValueError, match="HUMMING_WIDE_BULK_64"):
        pick(64, 28672)


def test_decode_bulk_rule(monkeypatch):
    """Session 46 (heuristics.decode_bulk_choice): at 17-32 tokens layers of >= DECODE_BULK_MIN_WEIGHTS weights take
    the bulk kernel -- 256-row tiles for codes of <= 4 bits from DECODE_BULK_WIDE_N rows, else 192-row -- for the
    measured codes (int3 / int4 with channel or 128-column groups and no or integer zero points, MXFP4, NVFP4, int8 /
    fp8 with channel scales); at 9-16 tokens int4 layers of >= DECODE_BULK_16_MIN_WEIGHTS take the three-warpgroup
    tile.  Smaller layers, K not a multiple of 128, unmeasured codes, other M buckets and HUMMING_DECODE_BULK=0 keep
    their choices; a bad value is refused."""
    from vllm_humming.tuning.heuristics import (DECODE_BULK_16_MIN_WEIGHTS, DECODE_BULK_32, DECODE_BULK_32_WIDE,
                                                DECODE_BULK_MIN_WEIGHTS, DECODE_BULK_WIDE_N, WIDE_DECODE_BULK,
                                                choose_kernel)

    def pick(n, k, bits=4, group=128, bucket=32, fam=False, zero=0):
        return choose_kernel("sm_90a", bucket, bits, group, zero, 132, k=k, n=n, float_family=fam).short()

    monkeypatch.delenv("HUMMING_DECODE_BULK", raising=False)
    monkeypatch.delenv("HUMMING_WIDE_DECODE_BULK", raising=False)
    direct = "bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    wide, narrow = DECODE_BULK_32_WIDE.short(), DECODE_BULK_32.short()
    assert wide == "bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma" and narrow == "bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma"
    assert pick(28672, 4096) == wide and pick(4096, 14336) == narrow
    assert pick(12288, 4096) == wide and pick(11008, 4096) == direct          # the measured threshold
    assert pick(DECODE_BULK_WIDE_N, 8192) == wide and pick(DECODE_BULK_WIDE_N - 2, 8192) == narrow
    assert pick((DECODE_BULK_MIN_WEIGHTS - 1) // 8192, 8192) == direct
    assert pick(6144, 4096) == direct and pick(4096, 7168) == direct
    assert pick(28672, 4160) == direct                                        # 65 atoms: not whole two-atom stages
    for kw in (dict(group=0), dict(bits=3), dict(zero=1)):
        assert pick(28672, 4096, **kw) == wide, kw
    for kw in (dict(bits=8, group=0), dict(bits=8, group=0, fam=True)):    # 8-bit codes: the 192-row tile everywhere
        assert pick(28672, 4096, **kw) == narrow, kw
    assert pick(28672, 4096, fam=True, group=32) == wide                      # MXFP4
    assert pick(28672, 4096, fam=True, group=16) == wide                      # NVFP4
    for kw in (dict(group=64), dict(zero=2), dict(bits=8, group=128), dict(bits=2, group=64)):
        assert "bulk" not in pick(28672, 4096, **kw), kw                      # not measured
    assert "bulk" not in pick(14336, 4096, bucket=64) and "bulk" not in pick(28672, 4096, bucket=8)
    # (28672x4096 at 33-64 tokens: the whole-tile bulk rule, test_wide_bulk_64_rule)
    # 9-16 tokens: the biggest int4 layers, and (HUMMING_WIDE_DECODE_BULK, default on) every wide one
    assert pick(37888, 3584, bucket=16) == WIDE_DECODE_BULK.short() == "bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma"
    assert 37888 * 3584 >= DECODE_BULK_16_MIN_WEIGHTS > 28672 * 4096
    assert pick(28672, 4096, bucket=16) == WIDE_DECODE_BULK.short()
    assert pick(14336, 4096, bucket=16) == "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"   # (session 54: polled)
    assert pick(14336, 8192, bucket=16) == "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"
    assert "bulk" not in pick(37888, 3584, bucket=16, bits=3) and "bulk" not in pick(37888, 3584, bucket=16, fam=True,
                                                                                      group=32)
    monkeypatch.setenv("HUMMING_DECODE_BULK", "0")
    assert pick(28672, 4096) == direct and "bulk" not in pick(37888, 3584, bucket=16)
    monkeypatch.setenv("HUMMING_DECODE_BULK", "2")
    with pytest.raises(ValueError, match="HUMMING_DECODE_BULK"):
        pick(28672, 4096)


def test_moe_experts_keep_the_direct_decode_on_big_layers(monkeypatch):
    """The bulk decode rule (session 46) is a dense layer's: an expert-indexed GEMM needs one token tile per block, so
    moe_choice passes bulk_decode=False and big experts at 9-32 tokens per expert keep the direct wgmma decode (not
    the mma.sync cp.async kernel a bulk choice would fall back to)."""
    from vllm_humming.desc import WeightDesc
    from vllm_humming.ops.gemm import format_params
    from vllm_humming.ops.moe_gemm import moe_choice
    from vllm_humming.tuning.heuristics import choose_kernel

    monkeypatch.delenv("HUMMING_DECODE_BULK", raising=False)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    for t, (n, k) in [(24, (28672, 4096)), (32, (4096, 14336)), (17, (14336, 4096)), (16, (37888, 3584))]:
        assert choose_kernel("sm_90a", t, 4, 128, 0, 132, k=k, n=n).bulk, (t, n, k)       # the dense layer's
        c = moe_choice("sm_90a", t, fp, n, k, 132)
        assert c.direct and c.wgmma and not c.bulk, (t, n, k, c.short())


def test_one_token_tiles(cache_dir, monkeypatch):
    """Session 48 (heuristics.one_token_tiles): at ONE_TOKEN_TILES_MAX_M tokens, int4 layers with bf16 activations on
    sm_90a launch the 224-row tile's ring twin where that tile is the 8-token choice (28672x4096) and the 224-row
    tile with K splits on mid-size K=4096 layers (MID_224_MIN_N..MID_224_MAX_N rows), both as x16 twins; other token
    counts, shapes, codes, fp16 activations and HUMMING_ONE_TOKEN_TILES=0 keep their plans; a bad value is refused."""
    from vllm_humming.tuning.heuristics import (DECODE_224, MID_224_MAX_N, MID_224_MIN_N, ONE_TOKEN_TILES_MAX_M,
                                                WIDE_N, all_choices, one_token_tiles)

    monkeypatch.delenv("HUMMING_ONE_TOKEN_TILES", raising=False)
    assert ONE_TOKEN_TILES_MAX_M == 1 and (MID_224_MIN_N, MID_224_MAX_N) == (12288, 14336)

    def plan(n, k, m, desc="w:uint4b8,s:g128:bfloat16", dtype=torch.bfloat16):
        return OfflinePlanner(desc, n, k, "sm_90a", 132, dtype=dtype, cache_dir=cache_dir).plan(m).launches[0]

    ring = plan(28672, 4096, 1)
    assert ring.tag == "ring_x16" and ring.choice.short() == "bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct"
    assert ring.grid == (1, 128, 1)
    assert plan(28672, 4096, 2).choice.short() == "bt8_wn14_tm1_wk2_ak256_s4_x16_direct"      # M=2: the x16 twin
    for n, grid in ((14336, (1, 64, 2)), (12288, (1, 55, 2))):
        mid = plan(n, 4096, 1)
        assert mid.tag == "mid_x16" and mid.choice == dataclasses.replace(DECODE_224, x16=True), n
        assert mid.grid == grid, (n, mid.grid)
        assert plan(n, 4096, 2).choice.short() == "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    # not timed: narrower layers, other depths, int3, MXFP4, fp16 activations
    assert plan(MID_224_MIN_N - 16, 4096, 1).tag == "" and plan(MID_224_MAX_N + 16, 4096, 1).tag == ""
    assert plan(14336, 8192, 1).tag != "mid_x16" and plan(14336, 3584, 1).tag != "mid_x16"
    assert plan(14336, 4096, 1, desc="w:uint3b4,s:g128:bfloat16").tag == ""
    assert plan(14336, 4096, 1, desc="w:float4_e2m1,s:g32:float8_e8m0fnu").tag == ""
    assert plan(14336, 4096, 1, dtype=torch.float16).tag == ""
    assert plan(28672, 4096, 1, dtype=torch.float16).tag == ""
    assert one_token_tiles(DECODE_224, 4, 28672, 4096, True) == []                         # NVFP4's 224-row tile
    assert one_token_tiles(DECODE_224, 8, 28672, 4096, False) == []
    assert one_token_tiles(KernelChoice(8, 8, 1, 1, 256, 4, "direct", "wgmma"), 4, WIDE_N, 4096, False) == []
    # CI's compile matrix has both
    matrix = set(all_choices("sm_90a", 4, 128, 0, False))
    assert {ring.choice, dataclasses.replace(DECODE_224, x16=True)} <= matrix
    assert ring.choice not in set(all_choices("sm_90a", 4, 16, 0, True))                    # (NVFP4)
    monkeypatch.setenv("HUMMING_ONE_TOKEN_TILES", "0")
    assert plan(28672, 4096, 1).choice.short() == "bt8_wn14_tm1_wk2_ak256_s4_x16_direct"
    assert plan(14336, 4096, 1).choice.short() == "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    monkeypatch.setenv("HUMMING_ONE_TOKEN_TILES", "yes")
    with pytest.raises(ValueError, match="HUMMING_ONE_TOKEN_TILES"):
        plan(28672, 4096, 1)
