"""Cold-compile plumbing (fresh process, empty HUMMING_CACHE_DIR) and the report: ratios, tables, JSON."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys

import pytest

from vllm_humming.bench import cold, report
from vllm_humming.bench.formats import FORMATS


# ------------------------------------------------------------------------------------------------ cold compile
def test_parse_child_output_takes_last_marker_line():
    out = "noise\n" + cold.MARKER + '{"status": "ok", "seconds": 1}\n' + cold.MARKER + '{"status": "ok", "seconds": 2}\n'
    assert cold.parse_child_output(out, 0)["seconds"] == 2
    bad = cold.parse_child_output("Traceback...\nKeyError: x\n", 1, "Traceback\nSegmentation fault")
    assert bad["status"] == "error" and "code 1" in bad["reason"] and "Segmentation fault" in bad["reason"]
    garbled = cold.parse_child_output(cold.MARKER + "{not json", 0)
    assert garbled["status"] == "error" and "unreadable" in garbled["reason"]


class FakeProc:
    def __init__(self, stdout, rc=0, stderr=""):
        self.stdout, self.returncode, self.stderr = stdout, rc, stderr


def test_run_cold_uses_a_fresh_empty_cache_dir_and_removes_it():
    seen = {}

    def runner(cmd, env, capture_output, text, timeout):
        d = env["HUMMING_CACHE_DIR"]
        seen.update(cmd=cmd, dir=d, exists=os.path.isdir(d), empty=os.listdir(d) == [], timeout=timeout,
                    path=env["PYTHONPATH"].split(os.pathsep))
        open(os.path.join(d, "kernel.cubin"), "w").close()          # the child fills the cache
        return FakeProc(cold.MARKER + json.dumps({"status": "ok", "seconds": 3.5, "kernels": 4}))

    res = cold.run_cold("ours", FORMATS["w4a16-int4-g128"], (6144, 4096), 1, timeout=77, runner=runner)
    assert seen["exists"] and seen["empty"] and not os.path.exists(seen["dir"])
    assert seen["dir"] != os.environ.get("HUMMING_CACHE_DIR")
    assert seen["cmd"][1:3] == ["-m", "vllm_humming.bench.cold"]
    assert seen["cmd"][3:] == ["--impl", "ours", "--format", "w4a16-int4-g128", "--shape", "6144x4096", "--m", "1",
                               "--seed", "0"]
    assert seen["timeout"] == 77
    import vllm_humming
    assert os.path.dirname(os.path.dirname(vllm_humming.__file__)) == seen["path"][0]
    assert res == {"status": "ok", "seconds": 3.5, "kernels": 4, "impl": "ours", "shape": "6144x4096", "m": 1}

    def second(cmd, env, **kw):
        assert env["HUMMING_CACHE_DIR"] != seen["dir"] or not os.path.exists(seen["dir"])
        return FakeProc(cold.MARKER + '{"status": "ok", "seconds": 1.0}')

    cold.run_cold("upstream", FORMATS["w4a16-int4-g128"], (6144, 4096), 1, runner=second)


def test_run_cold_timeout_is_an_error_cell():
    def runner(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, 5)

    res = cold.run_cold("upstream", FORMATS["w4a16-mxfp4"], (64, 64), 16, timeout=5, runner=runner)
    assert res["status"] == "error" and "5 s" in res["reason"] and res["impl"] == "upstream" and res["m"] == 16


def test_hook_delta_and_summary():
    before = {"nvrtc_compiles": 2, "nvrtc_seconds": 1.5, "disk_hits": 0, "flag": True, "name": "x"}
    after = {"nvrtc_compiles": 9, "nvrtc_seconds": 12.0, "disk_hits": 1, "flag": False, "name": "y", "new": 3}
    d = cold._hook_delta(before, after)
    assert d == {"nvrtc_compiles": 7, "nvrtc_seconds": 10.5, "disk_hits": 1, "new": 3}
    assert cold.summarize_hook(d) == {"kernels": 7, "compile_seconds": 10.5}
    assert cold.summarize_hook({"kernels": 2}) == {"kernels": 2}
    assert cold._hook_delta(None, after) is None


def test_cold_child_without_cuda_reports_unavailable():
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks the no-GPU answer of the child process")
    env = dict(os.environ, HUMMING_CACHE_DIR="/nonexistent-never-created")
    p = subprocess.run([sys.executable, "-m", "vllm_humming.bench.cold", "--impl", "ours", "--format",
                        "w4a16-int4-g128", "--shape", "64x128", "--m", "1"], env=env, capture_output=True, text=True,
                       timeout=120)
    res = cold.parse_child_output(p.stdout, p.returncode, p.stderr)
    assert p.returncode == 0 and res["status"] == "unavailable" and "CUDA" in res["reason"]
    assert res["cache_dir"] == "/nonexistent-never-created" and not os.path.exists("/nonexistent-never-created")


# ------------------------------------------------------------------------------------------------ report
def _rec(impl, fmt, shape, m, us, status="ok", **kw):
    r = {"impl": impl, "format": fmt, "shape": shape, "m": m, "status": status, "reason": kw.pop("reason", "")}
    if status == "ok":
        r.update(us=us, tbps=kw.pop("tbps", 1.0), copies=3, bytes_per_copy=1000, replay_ms=[us * 3e-3])
    r.update(kw)
    return r


def _results(records, formats=("w4a16-int4-g128",), shapes=("A", "B"), ms=(1, 16), upstream=True):
    settings = {"formats": list(formats), "shapes": list(shapes), "ms": list(ms), "replays": 20,
                "min_bytes": 512 << 20, "upstream": upstream}
    res = report.new_results(settings, ["vllm-humming", "bench", "--formats", "w4a16 int4"],
                             env={"torch": "2.11", "cuda": "13.0", "device": {"name": "NVIDIA H200",
                                                                            "capability": "9.0"}},
                             git={"commit": "0123456789abcdef", "dirty": False},
                             upstream={"available": True, "version": "0.1.19"},
                             now=dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.timezone.utc))
    res["records"] = list(records)
    return res


F = "w4a16-int4-g128"


def test_derive_ratios_and_geomeans():
    recs = [_rec("cublas", None, "A", 1, 16.0), _rec("cublas", None, "B", 1, 60.0),
            _rec("ours", F, "A", 1, 8.0), _rec("ours", F, "B", 1, 20.0),
            _rec("upstream", F, "A", 1, 10.0), _rec("upstream", F, "B", 1, 30.0)]
    d = report.derive(_results(recs, ms=(1,)))
    cells = d["formats"][F]["cells"]
    assert cells["ours"]["A"]["1"]["x_cublas"] == pytest.approx(2.0)
    assert cells["ours"]["B"]["1"]["x_cublas"] == pytest.approx(3.0)
    assert cells["ours"]["A"]["1"]["x_upstream"] == pytest.approx(1.25)
    assert cells["ours"]["B"]["1"]["x_upstream"] == pytest.approx(1.5)
    assert cells["upstream"]["A"]["1"]["x_cublas"] == pytest.approx(1.6)
    g = d["formats"][F]["geomean"]
    assert g["ours"]["1"]["x_cublas"] == pytest.approx(6 ** 0.5) and g["ours"]["1"]["n_cublas"] == 2
    assert g["ours"]["1"]["x_upstream"] == pytest.approx((1.25 * 1.5) ** 0.5)
    assert g["upstream"]["1"]["x_cublas"] == pytest.approx((1.6 * 2.0) ** 0.5)
    assert d["cublas"]["A"]["1"]["us"] == 16.0


def test_derive_partial_and_non_ok_cells():
    recs = [_rec("cublas", None, "A", 1, 16.0), _rec("cublas", None, "B", 1, 60.0),
            _rec("ours", F, "A", 1, 8.0), _rec("ours", F, "B", 1, None, status="fallback", reason="no kernel"),
            _rec("upstream", F, "A", 1, None, status="unavailable", reason="no wheel"),
            _rec("upstream", F, "B", 1, None, status="unavailable", reason="no wheel")]
    res = _results(recs, ms=(1,))
    d = report.derive(res)
    g = d["formats"][F]["geomean"]["ours"]["1"]
    assert g["x_cublas"] == pytest.approx(2.0) and g["n_cublas"] == 1
    assert g["x_upstream"] is None and g["n_upstream"] == 0
    assert d["formats"][F]["cells"]["ours"]["B"]["1"]["status"] == "fallback"
    text = report.format_format_table(res, d, F)
    assert "fallback" in text and "2.00x*1" in text          # geomean over 1 of 2 shapes is marked


def test_cell_text():
    assert report.cell_text({"status": "ok", "us": 12.34, "tbps": 2.5, "x_cublas": 1.9, "x_upstream": None}) == \
        "12.3 2.50 1.90x -"
    assert report.cell_text({"status": "ok", "us": 12.34, "tbps": 2.5, "x_cublas": 1.9}, with_upstream=False) == \
        "12.3 2.50 1.90x"
    assert report.cell_text({"status": "unsupported"}) == "unsupported"
    assert report.cell_text({"status": "error", "reason": "x"}) == "ERROR"
    assert report.cell_text(None) == ""


def _full_results():
    recs = []
    for shape, cub in (("A", 16.0), ("B", 60.0)):
        for m in (1, 16):
            recs.append(_rec("cublas", None, shape, m, cub * m ** 0.1, eager_us=30.0))
            recs.append(_rec("ours", F, shape, m, cub / 2, eager_us=40.0))
            recs.append(_rec("upstream", F, shape, m, cub / 1.8, eager_us=60.0))
    res = _results(recs)
    res["cold_compile"] = {F: {"ours": {"status": "ok", "seconds": 2.25, "kernels": 3, "shape": "A", "m": 1},
                               "upstream": {"status": "ok", "seconds": 15.5, "kernels": 12, "shape": "A", "m": 1}}}
    res["cases"] = [{"format": F, "impl": "ours", "shape": "B", "status": "ok",
                     "info": {"check": {"ok": False, "rel_err": 0.5, "tol": 0.02, "m": 1}}}]
    return res


def test_format_report_contains_every_part():
    res = _full_results()
    text = report.format_report(res)
    assert "NVIDIA H200" in text and "0123456789ab" in text and "0.1.19" in text
    assert "cuBLAS bf16" in text and "16.0 us" in text
    assert "== w4a16-int4-g128" in text and "ours 2.25 s (3 kernels)" in text and "upstream 15.50 s (12 kernels)" in text
    assert "8.0 1.00 2.00x 1.11x" in text                    # us, TB/s, x cuBLAS, x upstream of shape A, M=1
    assert "B !" in text and "does not match the reference" in text
    assert "eager us per call" in text and "40.0 / 60.0" in text
    assert "Summary" in text and re.search(r"w4a16-int4-g128 \|\s+2\.\d\dx / 1\.\d\dx", text)


def test_format_report_without_upstream_has_no_upstream_columns():
    res = _full_results()
    res["settings"]["upstream"] = False
    res["records"] = [r for r in res["records"] if r["impl"] != "upstream"]
    text = report.format_report(res)
    assert "geo x upstream" not in text and "ours / upstream" not in text


def test_json_round_trip_strict_and_complete(tmp_path):
    res = _full_results()
    res["records"][1]["weird"] = float("nan")
    res["aborted"] = None
    path = tmp_path / "sub" / "bench.json"
    report.write_json(res, str(path))
    text = path.read_text()
    assert "NaN" not in text
    doc = json.loads(text)
    assert doc["schema"] == report.SCHEMA
    meta = doc["meta"]
    assert meta["date_utc"] == "2026-11-29T12:00:00Z"
    assert meta["command"] == "vllm-humming bench --formats 'w4a16 int4'"
    assert meta["argv"][-1] == "w4a16 int4"
    assert meta["git"]["commit"] == "0123456789abcdef" and meta["env"]["device"]["name"] == "NVIDIA H200"
    assert doc["records"][1]["weird"] is None
    assert doc["derived"]["formats"][F]["geomean"]["ours"]["1"]["x_cublas"] == pytest.approx(2.0)
    assert len(doc["records"]) == 12 and all("replay_ms" in r for r in doc["records"])
    assert not os.path.exists(str(path) + ".tmp")


def test_git_info_reads_this_checkout():
    info = report.git_info()
    if info["commit"] is None:
        pytest.skip("not running from a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", info["commit"]) and info["dirty"] in (True, False)


def test_source_hash_follows_the_code_not_git(tmp_path, monkeypatch):
    """The provenance hash covers the package's .py files and the CUDA headers (a copied tree without git metadata
    hashes like its checkout) and moves when a header changes."""
    import shutil

    h0 = report.source_hash()
    assert re.fullmatch(r"[0-9a-f]{16}", h0) and report.source_hash() == h0 and report.git_info()["source_sha"] == h0
    from vllm_humming.jit import paths

    inc = tmp_path / "kernels"
    shutil.copytree(paths.include_dir(), inc / "include")
    monkeypatch.setenv("HUMMING_KERNELS_DIR", str(inc))
    assert report.source_hash() == h0                    # same bytes elsewhere: same hash
    (inc / "include" / "humming" / "common.cuh").write_text("// changed\n")
    assert report.source_hash() != h0


def test_environment_without_cuda():
    env = report.environment()
    assert env["torch"] and "vllm_humming" in env and "humming-kernels" in env


def test_merge_results_unions_and_later_runs_win():
    a = _results([_rec("cublas", None, "A", 1, 16.0), _rec("ours", F, "A", 1, 8.0)], ms=(1,), shapes=("A",))
    a["aborted"] = "CUDA context unusable"
    b = _results([_rec("cublas", None, "A", 1, 16.0), _rec("ours", "w8a8-int8", "A", 1, 4.0),
                  _rec("ours", F, "A", 1, 6.4)], formats=("w8a8-int8", F), ms=(1, 16), shapes=("A",))
    b["cold_compile"] = {F: {"ours": {"status": "ok", "seconds": 1.0}}}
    m = report.merge_results([a, b], ["a.json", "b.json"])
    assert m["settings"]["formats"] == [F, "w8a8-int8"] and m["settings"]["ms"] == [1, 16]
    assert len(m["records"]) == 3
    d = report.derive(m)
    assert d["formats"][F]["cells"]["ours"]["A"]["1"]["us"] == 6.4          # b re-measured it: b wins
    assert d["formats"]["w8a8-int8"]["cells"]["ours"]["A"]["1"]["x_cublas"] == pytest.approx(4.0)
    assert [x["source"] for x in m["meta"]["merged_from"]] == ["a.json", "b.json"]
    assert m["aborted_runs"] == ["CUDA context unusable"] and "aborted" not in m
    assert m["cold_compile"][F]["ours"]["seconds"] == 1.0
    with pytest.raises(ValueError):
        report.merge_results([])


def test_report_option_prints_and_merges_saved_runs(tmp_path, capsys):
    import argparse

    from vllm_humming.commands import bench as cmd

    p1, p2, out = tmp_path / "1.json", tmp_path / "2.json", tmp_path / "merged.json"
    report.write_json(_full_results(), str(p1))
    other = _results([_rec("cublas", None, "A", 1, 16.0), _rec("ours", "w8a8-int8", "A", 1, 4.0)],
                     formats=("w8a8-int8",), ms=(1,), shapes=("A",))
    report.write_json(other, str(p2))
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    assert cmd.run(p.parse_args(["--report", str(p1), str(p2), "--json", str(out)])) == 0
    text = capsys.readouterr().out
    assert "== w4a16-int4-g128" in text and "== w8a8-int8" in text and "4.0 1.00 4.00x" in text
    assert json.loads(out.read_text())["settings"]["formats"] == [F, "w8a8-int8"]
    assert cmd.run(p.parse_args(["--report", str(tmp_path / "missing.json")])) == 2
    assert "cannot read results" in capsys.readouterr().err
