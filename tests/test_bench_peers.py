"""The upstream humming adapter on CPU: the import-failure path, and the build/call protocol against a stand-in
module that records what the adapter asks of upstream's public layer API."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from vllm_humming.bench import peers
from vllm_humming.bench.formats import FORMATS
from vllm_humming.bench.peers import UPSTREAM_CONFIGS, UpstreamHumming, load_upstream

UPSTREAM_WEIGHT_FIELDS = {"b_dtype", "bs_dtype", "weight_scale_group_size", "weight_scale_group_size_n",
                          "weight_scale_type", "weight_scale_2_type", "has_zero_point", "is_fp_zero_point"}
UPSTREAM_INPUT_FIELDS = {"dtype", "a_dtype", "input_scale_group_size", "input_scale_dtype", "input_quant_mode"}


def test_import_failure_means_unavailable_with_reason():
    def importer(name):
        raise ImportError("No module named 'humming'")

    adapter, reason = UpstreamHumming.load(importer)
    assert adapter is None
    assert reason.startswith("unavailable: ") and "No module named 'humming'" in reason and "0.1.19" in reason


def test_any_import_time_error_means_unavailable():
    def importer(name):
        raise RuntimeError("Could not locate the NVRTC library in CUDA path")

    adapter, reason = UpstreamHumming.load(importer)
    assert adapter is None and "NVRTC" in reason


def test_missing_layer_class_means_unavailable():
    mod = types.SimpleNamespace(__version__="0.0.1")
    adapter, reason = UpstreamHumming.load(lambda name: mod)
    assert adapter is None and "HummingLayer" in reason


def test_load_upstream_respects_no_upstream(monkeypatch):
    called = []
    monkeypatch.setattr(UpstreamHumming, "load", classmethod(lambda cls, *a: called.append(1) or (None, "x")))
    adapter, info = load_upstream(False)
    assert adapter is None and info == {"available": False, "reason": "skipped (--no-upstream)"} and not called


def test_real_import_absent_here_is_reported():
    # the core venv does not ship the peer: the real loader must say unavailable, not raise
    if "humming" in sys.modules or _has("humming"):
        pytest.skip("upstream humming is installed in this environment")
    adapter, info = load_upstream(True)
    assert adapter is None and info["available"] is False and info["reason"].startswith("unavailable:")


def _has(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_configs_use_upstream_field_names_only():
    for name, (wcfg, icfg) in UPSTREAM_CONFIGS.items():
        assert set(wcfg) <= UPSTREAM_WEIGHT_FIELDS, name
        if icfg is not None:
            assert set(icfg) <= UPSTREAM_INPUT_FIELDS, name
    # group sizes agree with our descriptions
    for name, (wcfg, _) in UPSTREAM_CONFIGS.items():
        ours = FORMATS[name].weight_desc
        if ours.group_size:
            assert wcfg.get("weight_scale_group_size") == ours.group_size, name
        if ours.scale.granularity == "block":
            assert (wcfg["weight_scale_group_size_n"], wcfg["weight_scale_group_size"]) == ours.scale.block
        assert bool(wcfg.get("has_zero_point")) == (ours.zero_point is not None), name
        assert ("weight_scale_2_type" in wcfg) == (ours.scale2 is not None), name


# ------------------------------------------------------------------------------------------------ protocol
class FakeLayer(torch.nn.Module):
    """Records the calls an upstream HummingLayer would get (constructor kwargs, load, transform, forward)."""

    instances = []
    fail_with = None

    def __init__(self, shape_n, shape_k, weight_config, input_config=None, torch_dtype=None):
        super().__init__()
        if FakeLayer.fail_with is not None:
            raise FakeLayer.fail_with
        weight_config["quant_method"] = "humming"     # upstream fills defaults into the dict it is given
        self.kw = dict(shape_n=shape_n, shape_k=shape_k, weight_config=dict(weight_config),
                       input_config=input_config, torch_dtype=torch_dtype)
        self.events = []
        self.weight = torch.nn.Parameter(torch.empty(shape_n, shape_k // 8, dtype=torch.int32), requires_grad=False)
        self.weight_scale = torch.nn.Parameter(torch.empty(shape_n, shape_k // 128, dtype=torch.bfloat16),
                                               requires_grad=False)
        self.register_buffer("locks", torch.zeros(2048, dtype=torch.int32))
        FakeLayer.instances.append(self)

    def load_from_unquantized(self, w):
        self.events.append(("load", tuple(w.shape), w.dtype))
        self.w = w

    def transform(self):
        self.events.append(("transform",))
        self.humming_config = {"shape_n": self.kw["shape_n"]}

    def forward(self, x):
        self.events.append(("forward", tuple(x.shape)))
        return x.float() @ self.w.float().t()


def _fake_adapter(kernels=(1, 2, 3)):
    tune = types.SimpleNamespace(get_heuristics_config=lambda cfg, device=None: list(kernels))
    return UpstreamHumming(types.SimpleNamespace(__file__="/x/humming/__init__.py"), FakeLayer, "0.1.19", tune)


def test_build_case_follows_the_public_layer_api():
    FakeLayer.instances, FakeLayer.fail_with = [], None
    ad = _fake_adapter()
    w = torch.randn(64, 256).to(torch.bfloat16)
    per = 64 * 256 // 8 * 4 + 64 * 2 * 2             # FakeLayer parameter bytes (locks buffer excluded)
    case = ad.build_case(FORMATS["w4a16-int4-g128"], w, min_bytes=3 * per)
    assert case.status == "ok", case.reason
    assert case.bytes_per_copy == per and len(case.copies) == 4 == len(FakeLayer.instances)
    assert case.info["kernels_per_layer"] == 3 and case.info["version"] == "0.1.19"
    first = FakeLayer.instances[0]
    assert first.kw["shape_n"] == 64 and first.kw["shape_k"] == 256 and first.kw["torch_dtype"] == torch.bfloat16
    assert first.kw["weight_config"]["b_dtype"] == "int4" and first.kw["input_config"] is None
    assert first.events == [("load", (64, 256), torch.bfloat16), ("transform",)]
    # the table itself is never mutated by upstream's default filling
    assert "quant_method" not in UPSTREAM_CONFIGS["w4a16-int4-g128"][0]
    x = torch.randn(2, 256).to(torch.bfloat16)
    y = case.copies[2](x)
    assert FakeLayer.instances[2].events[-1] == ("forward", (2, 256)) and y.shape == (2, 64)


def test_build_case_act_quantized_passes_input_config():
    FakeLayer.instances, FakeLayer.fail_with = [], None
    case = _fake_adapter().build_case(FORMATS["w8a8-int8"], torch.randn(64, 256).to(torch.bfloat16), min_bytes=0)
    assert case.status == "ok" and len(case.copies) == 1
    assert FakeLayer.instances[0].kw["input_config"] == {"dtype": "int8"}


def test_build_case_upstream_assert_is_unsupported_other_errors_are_errors():
    w = torch.randn(64, 256).to(torch.bfloat16)
    FakeLayer.fail_with = AssertionError("a_dtype int4 needs sm80")
    try:
        case = _fake_adapter().build_case(FORMATS["w4a16-int4-g128"], w, min_bytes=0)
        assert case.status == "unsupported" and "sm80" in case.reason and case.copies == []
        FakeLayer.fail_with = ValueError("bad shape")
        case = _fake_adapter().build_case(FORMATS["w4a16-int4-g128"], w, min_bytes=0)
        assert case.status == "error" and "bad shape" in case.reason
    finally:
        FakeLayer.fail_with = None


def test_unknown_format_is_unsupported(monkeypatch):
    monkeypatch.delitem(peers.UPSTREAM_CONFIGS, "w2a16-int2-g64")
    case = _fake_adapter().build_case(FORMATS["w2a16-int2-g64"], torch.randn(64, 256).to(torch.bfloat16), 0)
    assert case.status == "unsupported" and "no upstream humming configuration" in case.reason


def test_num_kernels_is_optional():
    ad = UpstreamHumming(types.SimpleNamespace(), FakeLayer, "0.1.19", tune_module=None)
    assert ad.num_kernels(types.SimpleNamespace(humming_config={})) is None
    info = ad.info()
    assert info["available"] and info["version_matches"]
    assert not UpstreamHumming(types.SimpleNamespace(), FakeLayer, "0.2.0").info()["version_matches"]
