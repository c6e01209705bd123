"""e2e/run_fixture_models.py on CPU (torch fallback) for a few trimmed fixtures: needs transformers and the shared
bf16 originals ($HUMMING_FIXTURES, default /work/shared/fixtures); skipped where either is missing."""

import importlib.util
import json
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SHARED = os.environ.get("HUMMING_FIXTURES", "/work/shared/fixtures")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers not installed"),
    pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "llama-bf16")), reason="shared bf16 originals missing"),
]


def test_e2e_trimmed_fixtures_cpu(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "e2e"))
    import run_fixture_models as e2e

    out = tmp_path / "res.json"
    names = ["gptq-int3-g128-actorder", "ct-w8a8-int8", "moe-ct-w4a16"]
    rc = e2e.main([os.path.join(ROOT, "tests", "fixtures", n) for n in names] + ["--json", str(out), "--seq", "16"])
    res = json.loads(out.read_text())
    assert rc == 0, res
    for r in res:
        assert r["ok"] and r["vs_reference"]["mean_abs_dlogprob"] <= 0.01
        # the quantization itself is visible against the original, within the fixtures README's range
        assert 0.001 < r["reference_vs_original"]["mean_abs_dlogprob"] < 0.2
