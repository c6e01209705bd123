"""tuning.mma_probe: the ALU / wgmma overlap probe (mma_probe.cuh) compiles for sm_90a without serialized wgmmas,
its cases are checked, and on an sm_90a GPU it runs (NOTES session 51)."""

import re

import pytest
import torch

from vllm_humming.jit.compiler import build_options
from vllm_humming.jit.nvrtc import run_nvrtc
from vllm_humming.tuning import mma_probe as mp


def test_every_default_case_compiles_for_sm_90a_without_serialized_wgmma():
    for case in mp.default_cases():
        spec = mp.probe_spec(case, "sm_90a")
        _, opts = build_options(spec)
        r = run_nvrtc(spec.source, "k.cu", opts + ["--ptxas-options=-v"], "cubin")
        log = r.log if isinstance(r.log, str) else r.log.decode()
        assert r.ok, (case.name, log[-2000:])
        # C7515 / C7510 / C7517 ...: ptxas serialized the wgmmas -- the probe would then time something else
        assert "C751" not in log or "C7519" in log and "serializ" not in log.lower(), (case.name, log[-2000:])
        # (the mma.sync cases keep the wgmma cases' two fragment buffers for comparability: at 254 registers ptxas
        # spills a word or two outside the loop)
        spills = [int(n) for n in re.findall(r"(\d+) bytes spill stores", log)]
        assert all(n <= 16 for n in spills), (case.name, log)


def test_case_names_and_counts():
    c = mp.MmaCase(2, 2, 8, 1, 0, True)
    assert c.name == "wg2_tm2_k8_alu1_both_pp"
    assert c.wgmmas_per_stage == 32 and c.alu_per_stage == 256
    assert mp.MmaCase(1, 2, 8, 2, 2).wgmmas_per_stage == 0
    assert mp.MmaCase(1, 2, 8, 2, 1).alu_per_stage == 0
    assert mp.MmaCase(2, 2, 8, 1, 1, sync=True).name == "wg2_tm2_k8_alu1_mma_sync"
    names = [c.name for c in mp.default_cases()]
    assert len(names) == len(set(names))
    c = mp.MmaCase(2, 2, 8, 1, 0, split=True, ss=True, store=True)
    assert c.name == "wg2_tm2_k8_alu1_both_split_ss_st" and c.flags == 7
    assert mp.MmaCase(chain=True).flags == 8
    n16 = mp.MmaCase(2, 2, 8, 1, 0, tokens=16)
    assert n16.name == "wg2_tm2_k8_alu1_both_n16" and n16.macs_per_stage == 32 * 64 * 16 * 16
    assert mp.MmaCase(alu="int").flags == 16 and mp.MmaCase(alu="f32", mode=2).name == "wg2_tm2_k8_alu1_alu_f32"
    # B tile + two A tiles + 16 bytes per fragment per thread + alignment slack
    assert c.smem_bytes == 1024 + 3 * 8192 + 2 * 8 * 16 * 256


@pytest.mark.parametrize("case", [mp.MmaCase(3), mp.MmaCase(2, 3), mp.MmaCase(2, 2, 9), mp.MmaCase(2, 2, 8, 0),
                                  mp.MmaCase(2, 2, 8, 1, 3), mp.MmaCase(1, 2, 8, 1, 0, True),
                                  mp.MmaCase(2, 2, 8, 1, 0, True, True), mp.MmaCase(1, split=True),
                                  mp.MmaCase(mode=1, split=True), mp.MmaCase(pingpong=True, split=True),
                                  mp.MmaCase(sync=True, ss=True), mp.MmaCase(sync=True, split=True),
                                  mp.MmaCase(alu="fp16"), mp.MmaCase(tokens=48), mp.MmaCase(tokens=16, ss=True),
                                  mp.MmaCase(tokens=16, sync=True)])
def test_bad_cases_are_refused(case):
    with pytest.raises(ValueError, match="mma_probe"):
        mp.probe_spec(case, "sm_90a")


@pytest.mark.parametrize("kw", [dict(stages=1), dict(stages=True), dict(replays=0), dict(peak_macs=0),
                                dict(cases=["wg2_tm2_k8_alu1_both"])])
def test_run_refuses_bad_arguments(kw):
    args = dict(cases=[mp.MmaCase()], stages=8)
    args.update(kw)
    with pytest.raises(ValueError, match="mma_probe"):
        mp.run(**args)


@pytest.mark.gpu
def test_probe_runs_and_reports_cycles():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma: sm_90a only")
    import io

    cases = [mp.MmaCase(2, 2, 8, 1, m) for m in (0, 1, 2)] + [mp.MmaCase(2, 2, 8, 1, 0, True),
                                                             mp.MmaCase(2, 2, 8, 1, 0, split=True, ss=True, store=True),
                                                             mp.MmaCase(2, 2, 8, 1, 0, ss=True)]
    rows = mp.run(cases, stages=64, replays=3, out=io.StringIO())
    by = {r["case"]: r for r in rows}
    for r in rows:
        assert r["us"] > 0 and r["cycles_per_stage"] > 0, r
        assert r["slowest_cycles_per_stage"] >= r["cycles_per_stage"], r
    # the MMAs alone cannot beat the tensor peak by much (2048 MACs / cycle / SM on H100 / H200), and doing both
    # takes at least as long as either alone (within noise)
    mma = by["wg2_tm2_k8_alu1_mma"]
    assert mma["cycles_per_stage"] > 0.8 * mma["tensor_cycles_per_stage"], mma
    both = by["wg2_tm2_k8_alu1_both"]
    assert both["cycles_per_stage"] > 0.9 * max(mma["cycles_per_stage"], by["wg2_tm2_k8_alu1_alu"]["cycles_per_stage"])
    # the same wgmmas from shared memory, or from one warpgroup of two, cannot beat the peak either
    for name in ("wg2_tm2_k8_alu1_both_split_ss_st", "wg2_tm2_k8_alu1_both_ss"):
        assert by[name]["cycles_per_stage"] > 0.8 * by[name]["tensor_cycles_per_stage"], by[name]
