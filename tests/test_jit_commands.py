"""`vllm-humming compile-report` and `vllm-humming doctor` (CPU)."""

from __future__ import annotations

import json

import pytest

from vllm_humming.cli import main


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "jitcache"))
    monkeypatch.delenv("HUMMING_JIT_STRICT", raising=False)


def test_compile_report_builtin_cold_then_warm(tmp_path, capsys):
    out = tmp_path / "report.json"
    rc = main(["compile-report", "--builtin", "--arch", "sm_80", "--jobs", "2", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    rep = json.loads(out.read_text())
    assert rep["arch"] == "sm_80" and rep["jobs"] == 2 and "self-test" in rep["kernel_source"]
    (layer,) = rep["layers"]
    cold, warm = layer["cold"], layer["warm"]
    assert len(cold["kernels"]) == 4 and cold["nvrtc_compiles"] == 4
    assert all(k["from"] == "nvrtc" and k["nvrtc_s"] > 0 for k in cold["kernels"])   # fresh cache: all compiled
    assert all(k["from"] == "disk" for k in warm["kernels"]) and warm["nvrtc_compiles"] == 0
    assert [k["key"] for k in cold["kernels"]] == [k["key"] for k in warm["kernels"]]
    assert warm["wall_s"] < cold["wall_s"]
    assert "layer total" in text and "humming_selftest_gemm_16x64x64_w1x4_sm80" in text
    assert not list((tmp_path / "jitcache").rglob("*.cubin"))  # the user's cache is untouched


def test_compile_report_rejects_bad_arch(capsys):
    assert main(["compile-report", "--builtin", "--arch", "sm_80a"]) == 2
    assert "sm_80a" in capsys.readouterr().err


def test_doctor_reports_toolchain(capsys, tmp_path):
    rc = main(["doctor", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, rep["problems"]
    assert rep["nvrtc"].startswith("13.") or rep["nvrtc"][0].isdigit()
    assert "sm_80" in rep["nvrtc_archs"] and rep["kernels_dir"].endswith("kernels")
    assert rep["cache_dir"] == str(tmp_path / "jitcache") and rep["cache_dir_source"] == "HUMMING_CACHE_DIR"
    assert rep["strict_mode"] is False and "torch" in rep and "vllm" in rep


def test_doctor_compile_check_text(capsys):
    assert main(["doctor", "--compile", "--arch", "sm_90a"]) == 0
    text = capsys.readouterr().out
    assert "self-test" in text and "compiled for sm_90a" in text and text.rstrip().endswith("ok")


def test_doctor_clear_cache(capsys, tmp_path):
    import vllm_humming.jit as jit

    art = jit.compile_kernel(jit.KernelSpec(name="humming_test_clear", arch="sm_80",
                                            source='extern "C" __global__ void humming_test_clear() {}'))
    cubin = tmp_path / "jitcache" / art.key[:2] / f"{art.key}.cubin"
    assert cubin.is_file()
    assert main(["doctor", "--clear-cache"]) == 0
    assert "cache cleared" in capsys.readouterr().out and not cubin.exists()
