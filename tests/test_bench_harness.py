"""Bench harness bookkeeping on CPU: copy counts, byte counts, timing logic with fake timers/events/clocks, and a
whole run with a fake timer (the CUDA graph itself is exercised on the GPU machine only)."""

from __future__ import annotations

import json
import math

import pytest
import torch

import vllm_humming.ops as ops
from vllm_humming.bench import harness, report
from vllm_humming.bench.formats import FORMATS, parse_formats
from vllm_humming.bench.harness import (BenchConfig, BenchError, Case, FatalBenchError, build_cublas, build_ours,
                                        copies_for, eager_samples_us, geomean, measure_case, median, run_bench,
                                        time_replays, weight_bytes)
from vllm_humming.desc import DescError
from vllm_humming.reference import quantize_weight

MB = 1 << 20


# ------------------------------------------------------------------------------------------------ copy math
@pytest.mark.parametrize("per,min_bytes,want", [
    (256 * MB, 512 * MB, 3),          # 2 copies = exactly 512 MB: not *exceeding*, so 3
    (256 * MB + 1, 512 * MB, 2),
    (255 * MB, 512 * MB, 3),
    (13_000_000, 512 * MB, 42),       # ~ int4 g128 6144x4096
    (1000 * MB, 512 * MB, 1),
    (7, 0, 1),
])
def test_copies_exceed_min_bytes(per, min_bytes, want):
    n = copies_for(per, min_bytes)
    assert n == want
    assert n * per > min_bytes and (n == 1 or (n - 1) * per <= min_bytes)


def test_copies_rejects_empty_layers():
    with pytest.raises(BenchError):
        copies_for(0, 512 * MB)
    with pytest.raises(BenchError):
        copies_for(10, -1)


def test_default_shapes_copy_counts_are_far_past_l2():
    # int4 g128 bf16 scales: N*K/2 + N*K/128*2 bytes per copy; every default shape needs several copies
    for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)):
        per = n * k // 2 + n * (k // 128) * 2
        c = copies_for(per, 512 * MB)
        assert c * per > 512 * MB > 8 * 60 * MB
        assert c >= 5


# ------------------------------------------------------------------------------------------------ byte counts
def _qw(fmt_name, n=64, k=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g) * 0.02
    return quantize_weight(w, FORMATS[fmt_name].weight_desc)


def test_weight_bytes_int4_g128():
    qw = _qw("w4a16-int4-g128", 64, 256)
    assert weight_bytes(qw) == 64 * 256 // 2 + 64 * 2 * 2          # codes + bf16 scales


def test_weight_bytes_counts_zeros_and_second_scale():
    zp = _qw("w4a16-int4-g128-zp", 64, 256)
    assert weight_bytes(zp) == 64 * 256 // 2 + 64 * 2 * 2 + 64 * 2 * 1     # + uint8 zero points
    nv = _qw("w4a16-nvfp4", 64, 256)
    assert weight_bytes(nv) == 64 * 256 // 2 + 64 * 16 * 1 + 4            # e4m3 group scales + fp32 global
    b = _qw("w8a16-fp8-block", 256, 256)
    assert weight_bytes(b) == 256 * 256 + 2 * 2 * 4                       # fp32 128x128 block scales


def test_weight_bytes_ignores_bias_and_perm():
    qw = _qw("w4a16-int4-g128", 64, 256)
    qw.bias = torch.zeros(64)
    qw.k_perm = torch.arange(256)
    assert weight_bytes(qw) == 64 * 256 // 2 + 64 * 2 * 2


# ------------------------------------------------------------------------------------------------ stats
def test_median_and_geomean():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([]) is None and geomean([1.0, 0.0]) is None
    assert geomean([None, 9.0]) == pytest.approx(9.0)
    with pytest.raises(BenchError):
        median([])


# ------------------------------------------------------------------------------------------------ timing logic
class FakeEvent:
    log = []

    def __init__(self, clock):
        self.clock = clock
        self.t = None

    def record(self):
        self.t = self.clock[0]
        FakeEvent.log.append("record")

    def elapsed_time(self, other):
        return other.t - self.t


def test_time_replays_one_event_pair_per_replay_and_warmup_untimed():
    clock = [0.0]
    durations = iter([100.0, 100.0] + [1.0, 5.0, 2.0, 4.0, 3.0])   # 2 warm-up replays, then 5 timed
    calls = []

    def replay():
        calls.append(1)
        clock[0] += next(durations)

    syncs = []
    FakeEvent.log = []
    out = time_replays(replay, lambda: FakeEvent(clock), lambda: syncs.append(1), replays=5, warmup=2)
    assert out == [1.0, 5.0, 2.0, 4.0, 3.0]
    assert len(calls) == 7 and len(syncs) == 1 and FakeEvent.log.count("record") == 10
    assert median(out) == 3.0
    with pytest.raises(BenchError):
        time_replays(replay, lambda: FakeEvent(clock), lambda: None, replays=0)


def test_time_replays_warms_up_for_the_requested_device_time():
    """warmup_ms: after the fixed warm-up, three replays are timed together to estimate one, then untimed replays
    run until about warmup_ms of device time has passed -- the timed samples start after the slow phase."""
    clock = [0.0]
    # 1 fixed warm-up, 3 estimate replays of 2 ms, then a "slow phase" that ends after 10 ms of replays
    durations = [5.0] + [2.0] * 3 + [3.0] * 4 + [2.0] * 100
    it = iter(durations)
    calls = []

    def replay():
        calls.append(1)
        clock[0] += next(it)

    out = time_replays(replay, lambda: FakeEvent(clock), lambda: None, replays=5, warmup=1, warmup_ms=20.0)
    # estimate 2 ms -> ceil((20 - 6) / 2) = 7 more untimed replays: 1 + 3 + 7 = 11 before the 5 timed ones
    assert len(calls) == 16
    assert out == [2.0] * 5          # none of the 3 ms replays is timed
    calls.clear()
    it = iter([2.0] * 100)
    out = time_replays(replay, lambda: FakeEvent(clock), lambda: None, replays=2, warmup=0, warmup_ms=20.0,
                       max_warmup=4)
    assert len(calls) == 3 + 4 + 2   # the cap on untimed replays
    calls.clear()
    it = iter([2.0] * 100)
    time_replays(replay, lambda: FakeEvent(clock), lambda: None, replays=2, warmup=0, warmup_ms=0.0)
    assert len(calls) == 2           # no time-based warm-up when warmup_ms is 0


def test_eager_samples_use_back_to_back_calls_between_syncs():
    t = [0.0]
    calls, syncs = [], []

    def call():
        calls.append(1)
        t[0] += 2e-6          # each call costs 2 us of host time

    def sync():
        syncs.append(1)
        t[0] += 10e-6         # each synchronization costs 10 us, spread over the batch

    out = eager_samples_us(call, sync, lambda: t[0], reps=4, calls=5, warmup=3)
    assert len(out) == 4
    assert all(v == pytest.approx(2.0 + 10.0 / 5) for v in out)
    assert len(calls) == 3 + 4 * 5 and len(syncs) == 1 + 4


class FakeTimer:
    """Replays call fn() once (so copies really run) and return fixed samples."""

    def __init__(self, samples=(4.0, 2.0, 3.0), eager=(7.0, 9.0, 8.0), fail_graph=None, dead=None):
        self.samples, self.eager, self.fail_graph, self.dead = list(samples), list(eager), fail_graph, dead
        self.graph_calls = 0
        self.freed = 0

    def graph_replays_ms(self, fn, replays):
        if self.fail_graph:
            raise self.fail_graph
        fn()
        self.graph_calls += 1
        return self.samples[:replays] if replays <= len(self.samples) else self.samples * replays

    def eager_us(self, call, reps, calls):
        call()
        return list(self.eager)

    def healthy(self):
        return self.dead

    def free(self):
        self.freed += 1


def _case(n_copies=4, bytes_per_copy=1_000_000):
    hits = []
    copies = [(lambda x, i=i: hits.append(i)) for i in range(n_copies)]
    return Case("ours", "w4a16-int4-g128", (64, 128), bytes_per_copy=bytes_per_copy, copies=copies), hits


def test_measure_case_us_is_median_replay_over_copies():
    case, hits = _case(4, 1_000_000)
    rec = measure_case(case, torch.ones(1, 128), 1, FakeTimer(samples=(4.0, 2.0, 3.0)), replays=3, eager=True,
                       eager_calls=10)
    assert rec["status"] == "ok"
    assert rec["us"] == pytest.approx(3.0 * 1e3 / 4)               # median 3 ms over 4 copies = 750 us
    assert rec["tbps"] == pytest.approx(1_000_000 / 750e-6 / 1e12)
    assert rec["replay_ms"] == [4.0, 2.0, 3.0]
    assert rec["eager_us"] == 8.0 and rec["eager_us_samples"] == [7.0, 9.0, 8.0]
    assert rec["copies"] == 4 and rec["m"] == 1 and rec["shape"] == "64x128"
    assert sorted(hits[:4]) == [0, 1, 2, 3]                       # the graph function calls every copy once


def test_measure_case_names_the_kernel_it_timed():
    """Our records carry the layer's launch plan for that M (GemmLayer.plan_info: choice, grid, splits), so a bench
    JSON says which kernel each cell ran -- e.g. the x16 twin at 1-2 tokens, the stream-K twin on a wave cliff."""
    case, _ = _case(2, 1_000_000)
    case.plans = {1: {"choice": "bt8_wn14_tm1_wk2_ak256_s4_x16_direct", "grid": (1, 128, 1), "splits": 1}}
    rec = measure_case(case, torch.ones(1, 128), 1, FakeTimer(samples=(1.0,)), replays=1, eager=False, eager_calls=1)
    assert rec["kernel"] == {"choice": "bt8_wn14_tm1_wk2_ak256_s4_x16_direct", "grid": [1, 128, 1], "splits": 1}
    json.dumps(rec)
    rec = measure_case(case, torch.ones(3, 128), 3, FakeTimer(samples=(1.0,)), replays=1, eager=False, eager_calls=1)
    assert "kernel" not in rec        # no plan recorded for this M (cuBLAS, upstream, a fallback): nothing claimed


def test_measure_case_passes_status_through_without_timing():
    case = Case("ours", "w8a8-fp8", (64, 128), status="fallback", reason="no kernel for a:float8")
    t = FakeTimer()
    rec = measure_case(case, None, 16, t, 20, True, 10)
    assert rec["status"] == "fallback" and rec["reason"] == "no kernel for a:float8" and "us" not in rec
    assert t.graph_calls == 0


def test_measure_case_kernel_failure_is_a_cell_not_a_crash():
    case, _ = _case()
    rec = measure_case(case, torch.ones(1, 128), 1, FakeTimer(fail_graph=RuntimeError("launch failed")), 20, True, 10)
    assert rec["status"] == "error" and "launch failed" in rec["reason"]
    rec = measure_case(case, torch.ones(1, 128), 1, FakeTimer(fail_graph=DescError("M too large")), 20, True, 10)
    assert rec["status"] == "unsupported"


def test_measure_case_dead_gpu_is_fatal():
    case, _ = _case()
    with pytest.raises(FatalBenchError):
        measure_case(case, torch.ones(1, 128), 1,
                     FakeTimer(fail_graph=RuntimeError("illegal address"), dead="CUDA error: illegal address"),
                     20, True, 10)


# ------------------------------------------------------------------------------------------------ builders on CPU
def _fake_kernel_prepare(monkeypatch):
    """prepare_linear that claims the kernel backend but computes with the plain-torch path (CPU stand-in)."""
    real = ops.prepare_linear
    made = []

    def fake(qw, act=None, out_dtype=torch.bfloat16, **kw):
        pl = real(qw, act, out_dtype, force_fallback=True)
        pl.backend, pl.fallback_reason = "kernel", ""
        dense = pl.dense_weight()
        pl.kernel = lambda x: torch.nn.functional.linear(x.to(dense.dtype), dense)
        made.append(pl)
        return pl

    monkeypatch.setattr(ops, "prepare_linear", fake)
    return made


def test_build_ours_replicates_on_distinct_storage(monkeypatch):
    made = _fake_kernel_prepare(monkeypatch)
    fmt = FORMATS["w4a16-int4-g128"]
    w = harness.random_weight((64, 256), 0, device="cpu")
    per = 64 * 256 // 2 + 64 * 2 * 2
    case, qw = build_ours(fmt, w, min_bytes=10 * per)
    assert case.status == "ok" and case.bytes_per_copy == per == weight_bytes(qw)
    assert len(case.copies) == 11 == len(made)
    ptrs = {pl.qw.qweight.data_ptr() for pl in made}
    assert len(ptrs) == 11 and qw.qweight.data_ptr() not in ptrs     # every copy reads its own weight
    x = harness.random_input(3, 256, 0, device="cpu")
    chk = harness.check_ours(case, qw, fmt.act_desc, x)
    assert chk["ok"] and chk["rel_err"] < 1e-2 and chk["m"] == 3


def test_check_flags_a_wrong_kernel(monkeypatch):
    made = _fake_kernel_prepare(monkeypatch)
    fmt = FORMATS["w4a16-int4-g128"]
    w = harness.random_weight((64, 256), 0, device="cpu")
    case, qw = build_ours(fmt, w, min_bytes=0)
    case.copies[0] = lambda x: torch.zeros(x.shape[0], 64)
    chk = harness.check_ours(case, qw, fmt.act_desc, harness.random_input(2, 256, 0, device="cpu"))
    assert not chk["ok"] and chk["rel_err"] == pytest.approx(1.0)


def test_build_ours_fallback_is_not_timed():
    # on CPU the real prepare_linear takes the torch fallback: the cell must say so, with the reason
    w = harness.random_weight((64, 256), 0, device="cpu")
    case, qw = build_ours(FORMATS["w4a16-int4-g128"], w, min_bytes=512 * MB)
    assert case.status == "fallback" and "cpu" in case.reason.lower()
    assert case.copies == [] and case.info["backend"] == "torch" and case.bytes_per_copy > 0


def test_build_ours_unsupported_and_error(monkeypatch):
    w = harness.random_weight((64, 256), 0, device="cpu")

    def raise_desc(*a, **k):
        raise DescError("layer 'x': activation float8 per-token is not supported by the kernels yet")

    monkeypatch.setattr(ops, "prepare_linear", raise_desc)
    case, _ = build_ours(FORMATS["w8a8-fp8"], w, min_bytes=MB)
    assert case.status == "unsupported" and "not supported" in case.reason

    def boom(*a, **k):
        raise RuntimeError("nvrtc exploded")

    monkeypatch.setattr(ops, "prepare_linear", boom)
    case, _ = build_ours(FORMATS["w4a16-int4-g128"], w, min_bytes=MB)
    assert case.status == "error" and "nvrtc exploded" in case.reason


def test_build_cublas_copies_and_bytes():
    w = harness.random_weight((64, 128), 0, device="cpu")
    case = build_cublas(w, min_bytes=64 * 128 * 2 * 3)
    assert case.bytes_per_copy == 64 * 128 * 2 and len(case.copies) == 4
    x = harness.random_input(2, 128, 0, device="cpu")
    torch.testing.assert_close(case.copies[3](x), torch.nn.functional.linear(x, w))


def test_random_inputs_are_reproducible_and_never_zero():
    a = harness.random_input(64, 512, 3, device="cpu")
    b = harness.random_input(64, 512, 3, device="cpu")
    assert a.dtype == torch.bfloat16 and torch.equal(a, b) and bool((a != 0).all())
    w = harness.random_weight((32, 64), 0, device="cpu")
    assert w.dtype == torch.bfloat16 and w.shape == (32, 64) and torch.equal(w, harness.random_weight((32, 64), 0, "cpu"))
    assert not torch.equal(w, harness.random_weight((32, 64), 1, device="cpu"))


# ------------------------------------------------------------------------------------------------ a whole run
class FakeUpstream:
    def __init__(self):
        self.built = []

    def build_case(self, fmt, w, min_bytes):
        self.built.append(fmt.name)
        if fmt.act_quantized:
            return Case("upstream", fmt.name, tuple(w.shape), status="unsupported", reason="AssertionError: sm90")
        copies = [(lambda x: x @ w.t())] * copies_for(1000, min_bytes)
        return Case("upstream", fmt.name, tuple(w.shape), bytes_per_copy=1000, copies=copies)


def _run(monkeypatch, formats="w4a16-int4-g128,w8a8-int8", timer=None, **kw):
    _fake_kernel_prepare(monkeypatch)
    cfg = BenchConfig(formats=parse_formats(formats), shapes=[(64, 256), (128, 128)], ms=[1, 4], replays=3,
                      min_bytes=40_000, **kw)
    res = report.new_results(cfg.settings(), ["vllm-humming", "bench"], env={"device": None}, git={"commit": "abc"},
                             upstream={"available": True, "version": "0.1.19"})
    colds = []
    up = FakeUpstream()
    logs = []
    run_bench(cfg, res, timer=timer or FakeTimer(), upstream=up,
              cold_runner=lambda impl, f, s, m: colds.append((impl, f.name, s, m)) or {"status": "ok", "seconds": 2.0},
              log=logs.append,
              make_weight=lambda s, seed: harness.random_weight(s, seed, device="cpu"),
              make_input=lambda m, k, seed: harness.random_input(m, k, seed, device="cpu"))
    return res, colds, up, logs


def test_run_bench_records_every_cell(monkeypatch):
    res, colds, up, logs = _run(monkeypatch)
    recs = res["records"]
    # cuBLAS: 2 shapes x 2 Ms; per format: (ours + upstream) x 2 shapes x 2 Ms
    assert len(recs) == 4 + 2 * 2 * 2 * 2
    cub = [r for r in recs if r["impl"] == "cublas"]
    assert len(cub) == 4 and all(r["status"] == "ok" and r["format"] is None for r in cub)
    ours = [r for r in recs if r["impl"] == "ours"]
    assert all(r["status"] == "ok" and r["us"] > 0 for r in ours)
    ups = [r for r in recs if r["impl"] == "upstream" and r["format"] == "w8a8-int8"]
    assert all(r["status"] == "unsupported" for r in ups)
    assert colds == [("ours", "w4a16-int4-g128", (64, 256), 1), ("ours", "w8a8-int8", (64, 256), 1)]
    assert set(res["cold_compile"]) == {"w4a16-int4-g128", "w8a8-int8"}
    checks = [c["info"]["check"] for c in res["cases"] if c["impl"] == "ours"]
    assert len(checks) == 4 and all(c["ok"] for c in checks)
    assert "aborted" not in res and any("us/GEMM" in l for l in logs)
    # min_bytes 40000 over 64x256 int4 g128 (8448 B) -> 5 copies
    r0 = next(r for r in ours if r["format"] == "w4a16-int4-g128" and r["shape"] == "64x256")
    assert r0["copies"] == 5 and r0["bytes_per_copy"] == 8448


def test_run_bench_cold_upstream_opt_in(monkeypatch):
    res, colds, _, _ = _run(monkeypatch, formats="w4a16-int4-g128", cold_upstream=True)
    assert colds == [("ours", "w4a16-int4-g128", (64, 256), 1), ("upstream", "w4a16-int4-g128", (64, 256), 1)]
    assert set(res["cold_compile"]["w4a16-int4-g128"]) == {"ours", "upstream"}


def test_run_bench_without_upstream_or_cold(monkeypatch):
    res, colds, up, _ = _run(monkeypatch, upstream=False, cold=False, eager=False)
    assert colds == [] and up.built == []
    assert not any(r["impl"] == "upstream" for r in res["records"])
    assert not any("eager_us" in r for r in res["records"])


def test_run_bench_stops_on_dead_gpu_and_keeps_partial(monkeypatch):
    timer = FakeTimer(fail_graph=RuntimeError("an illegal memory access was encountered"),
                      dead="CUDA error: an illegal memory access")
    res, _, _, logs = _run(monkeypatch, timer=timer)
    assert "illegal memory access" in res["aborted"]
    assert len(res["records"]) == 1 and res["records"][0]["status"] == "error"
    assert any("ABORTED" in l for l in logs)


def test_run_bench_checkpoints_after_each_format(monkeypatch):
    _fake_kernel_prepare(monkeypatch)
    cfg = BenchConfig(formats=parse_formats("w4a16-int4-g128,w2a16-int2-g64"), shapes=[(64, 256)], ms=[1],
                      replays=2, min_bytes=0, upstream=False, cold=False)
    res = report.new_results(cfg.settings(), ["x"], env={}, git={})
    seen = []
    run_bench(cfg, res, timer=FakeTimer(), checkpoint=lambda r: seen.append(len(r["records"])), log=lambda m: None,
              make_weight=lambda s, seed: harness.random_weight(s, seed, device="cpu"),
              make_input=lambda m, k, seed: harness.random_input(m, k, seed, device="cpu"))
    assert seen == [1, 2, 3]    # after cuBLAS, after the first format, after the second


def test_config_validation():
    f = parse_formats("w4a16-int4-g128")
    with pytest.raises(BenchError):
        BenchConfig(formats=f, shapes=[(64, 64)], ms=[1], replays=0).validate()
    with pytest.raises(BenchError):
        BenchConfig(formats=f, shapes=[], ms=[1]).validate()
    s = BenchConfig(formats=f, shapes=[(64, 64)], ms=[1]).settings()
    assert s["replays"] == 20 and s["min_bytes"] == 512 * MB and s["statistic"] == "median"


def test_module_entry_point_parses_like_the_command(capsys):
    from vllm_humming.bench import main

    with pytest.raises(SystemExit) as ei:
        main(["--help"])
    assert ei.value.code == 0
    assert "--min-bytes" in capsys.readouterr().out
    assert main(["--formats", "bogus"]) == 2
