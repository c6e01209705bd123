"""vLLM 0.33 (CUDA wheel, no GPU needed): the three routes resolve to vllm_humming, layers built through them give the
reference output through our plain-torch fallback (world size 1 and 2 over gloo), and the version guard is loud.

Run in the vLLM venv:  python -m pytest -m vllm tests/test_vllm_routes.py
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.vllm

FIX = Path(__file__).parent / "fixtures"


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _qcfg(name: str) -> dict:
    d = FIX / name
    c = json.loads((d / "config.json").read_text()).get("quantization_config")
    if c is None:
        c = json.loads((d / "hf_quant_config.json").read_text())
        c = {"quant_method": "modelopt", **c}
    return c


@pytest.fixture(scope="module")
def vllm_env():
    pytest.importorskip("vllm")
    from vllm.config import DeviceConfig, KernelConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.distributed.parallel_state import model_parallel_is_initialized

    from vllm_humming.plugin import register

    register()
    vc = VllmConfig(device_config=DeviceConfig(device="cpu"),
                    kernel_config=KernelConfig(linear_backend="humming", moe_backend="humming"))
    with set_current_vllm_config(vc):
        if not model_parallel_is_initialized():
            init_distributed_environment(world_size=1, rank=0, local_rank=0,
                                         distributed_init_method=f"tcp://127.0.0.1:{_free_port()}", backend="gloo")
            initialize_model_parallel(1)
        yield vc


@pytest.fixture
def forbid_upstream(monkeypatch):
    """Any use of the upstream humming package (directly or through vLLM's lazy facade) fails the test."""
    import vllm.utils.humming as facade

    def boom(name):
        raise AssertionError(f"upstream humming symbol {name!r} was used")

    monkeypatch.setattr(facade, "__getattr__", boom, raising=False)
    for k in list(vars(facade)):
        if k in getattr(facade, "_EXPORTS", {}):
            monkeypatch.delattr(facade, k, raising=False)
    for mod in [m for m in list(sys.modules) if m == "humming" or m.startswith("humming.")]:
        monkeypatch.setitem(sys.modules, mod, None)
    yield


# ----------------------------------------------------------------------------------------------- registration
CONFIGS = ["gptq-int4-g128", "gptq-int3-g128-actorder", "awq-int4-g128", "ct-w4a16-g128", "ct-w4a16-asym-g64",
           "ct-w8a8-int8", "ct-nvfp4", "ct-mxfp4a16", "ct-fp8-dynamic", "ct-fp8-block", "fp8-block-deepseek",
           "modelopt-nvfp4"]


@pytest.mark.parametrize("fixture", CONFIGS)
def test_quantization_route_resolves_to_ours(vllm_env, fixture):
    from vllm.model_executor.layers.linear import RowParallelLinear, UnquantizedLinearMethod
    from vllm.model_executor.layers.quantization import get_quantization_config

    from vllm_humming.linear.method import HummingLinearMethod
    from vllm_humming.quant_config.vllm_config import HummingVllmConfig

    cls = get_quantization_config("humming")
    assert cls is HummingVllmConfig
    cfg = _qcfg(fixture)
    assert cls.override_quantization_method(cfg, "humming") == "humming"
    qc = cls.from_config(cfg)
    layer = object.__new__(RowParallelLinear)
    torch.nn.Module.__init__(layer)
    assert isinstance(qc.get_quant_method(layer, "model.layers.0.mlp.down_proj"), HummingLinearMethod)
    assert isinstance(qc.get_quant_method(layer, "lm_head"), UnquantizedLinearMethod)


@pytest.mark.parametrize("fixture,method", [("gptq-int4-g128", "gptq"), ("awq-int4-g128", "awq"),
                                            ("ct-w4a16-g128", "compressed-tensors"), ("modelopt-nvfp4", "modelopt_fp4"),
                                            ("fp8-block-deepseek", "fp8")])
def test_model_config_resolves_humming(vllm_env, fixture, method):
    """The real resolution chain: ModelConfig(--quantization humming) on a checkpoint -> our config class."""
    from vllm.config import LoadConfig, ModelConfig
    from vllm.model_executor.model_loader.weight_utils import get_quant_config

    from vllm_humming.quant_config.vllm_config import HummingVllmConfig

    mc = ModelConfig(model=str(FIX / fixture), quantization="humming", skip_tokenizer_init=True, dtype="bfloat16")
    assert mc.quantization == "humming"
    qc = get_quant_config(mc, LoadConfig())
    assert isinstance(qc, HummingVllmConfig) and qc.ckpt.method == method
    assert qc.ckpt.scheme_for(["model.layers.0.mlp.down_proj"]) is not None


def test_fused_act_order_shards_must_agree(vllm_env):
    from safetensors.torch import load_file
    from vllm.model_executor.layers.linear import QKVParallelLinear
    from vllm.model_executor.layers.quantization import get_quantization_config

    from vllm_humming.desc import DescError

    fixture = "gptq-int3-g128-actorder"
    qc = get_quantization_config("humming").from_config(_qcfg(fixture))
    layer = QKVParallelLinear(256, 64, 4, 2, bias=False, quant_config=qc, prefix="model.layers.0.self_attn.qkv_proj",
                              params_dtype=torch.float32)
    sd = load_file(str(FIX / fixture / "model.safetensors"))
    g = sd["model.layers.0.self_attn.q_proj.g_idx"]
    layer.g_idx.weight_loader(layer.g_idx, g, "q")
    layer.g_idx.weight_loader(layer.g_idx, g.clone(), "k")
    with pytest.raises(DescError, match="differ"):
        layer.g_idx.weight_loader(layer.g_idx, g.flip(0), "v")


def test_online_quant_needs_a_description(vllm_env, monkeypatch):
    from vllm_humming.quant_config.vllm_config import ONLINE_ENV, HummingConfigError, HummingVllmConfig

    monkeypatch.delenv(ONLINE_ENV, raising=False)
    with pytest.raises(HummingConfigError, match="online quantization"):
        HummingVllmConfig()
    monkeypatch.setenv(ONLINE_ENV, "w:uint4b8,s:g64:bfloat16")
    assert str(HummingVllmConfig().ckpt.scheme_for(["model.layers.0.mlp.down_proj"]).online) == \
        "w:uint4b8,s:g64:bfloat16"
    qc = HummingVllmConfig({"quant_method": "humming", "weight": "nvfp4-w4a16", "ignore": ["re:.*down_proj"]})
    assert qc.ckpt.scheme_for(["model.layers.0.mlp.down_proj"]) is None
    assert qc.ckpt.scheme_for(["model.layers.0.mlp.up_proj"]).online.scale2 is not None


def test_linear_backend_route_tables(vllm_env):
    import vllm.model_executor.kernels.linear as kl
    from vllm.model_executor.kernels.linear.mixed_precision.MPLinearKernel import MPLinearLayerConfig
    from vllm.scalar_type import scalar_types

    from vllm_humming.linear import kernels as ours

    mapped = kl._LINEAR_BACKEND_KERNEL_MAP["humming"]
    assert mapped and all(c.__module__ == ours.__name__ for c in mapped)
    for tname in ours._TABLES:
        for plat, lst in getattr(kl, tname, {}).items():
            for c in lst:
                assert not (c.__name__.startswith("Humming") and c.__module__ != ours.__name__), (tname, plat, c)
    for wt, zp in ((scalar_types.uint4b8, False), (scalar_types.uint4, True), (scalar_types.uint8b128, False)):
        cfg = MPLinearLayerConfig((512, 256), (512, 256), wt, torch.bfloat16, 128, zp)
        assert kl.choose_mp_linear_kernel(cfg) is ours.OUR_KERNELS["HummingLinearKernel"]
    assert type(kl.init_nvfp4_linear_kernel()) is ours.OUR_KERNELS["HummingNvFp4LinearKernel"]
    assert type(kl.init_nvfp4_linear_kernel(use_a16=True)) is ours.OUR_KERNELS["HummingNvFp4LinearKernel"]
    assert type(kl.init_mxfp4_linear_kernel()) is ours.OUR_KERNELS["HummingMxFp4LinearKernel"]
    assert type(kl.init_int8_linear_kernel(True, False, True, "x")) is \
        ours.OUR_KERNELS["HummingInt8ScaledMMLinearKernel"]


def test_moe_backend_route_is_ours(vllm_env, forbid_upstream):
    """--moe-backend humming: the WNA16 oracle's Humming experts and conversion helpers are ours; the conversion
    of compressed-tensors experts + our fallback experts give the reference MoE; unknown layouts refuse loudly."""
    from safetensors.torch import load_file
    from vllm.model_executor.layers.fused_moe.oracle import int_wna16

    import vllm.model_executor.layers.quantization.utils.humming as hu
    from vllm_humming.moe import experts as ours
    from vllm_humming.moe.fallback import torch_moe_fallback
    from vllm_humming.quant_config.vllm_config import parse_checkpoint_config

    import importlib

    for mod, enum in (("int_wna16", "WNA16MoEBackend"), ("fp8", "Fp8MoeBackend"), ("int8", "Int8MoeBackend"),
                      ("nvfp4", "NvFp4MoeBackend"), ("mxfp4", "Mxfp4MoeBackend"), ("w4a8", "W4A8MoeBackend")):
        o = importlib.import_module(f"vllm.model_executor.layers.fused_moe.oracle.{mod}")
        got = o.backend_to_kernel_cls(getattr(o, enum).HUMMING)
        assert got and all(c.__module__ == ours.__name__ for c in got), (mod, got)
    classes = int_wna16.backend_to_kernel_cls(int_wna16.WNA16MoEBackend.HUMMING)
    assert hu.convert_to_humming_moe_kernel_format is ours.convert_to_humming_moe_kernel_format
    assert hu.get_humming_moe_quant_config is ours.get_humming_moe_quant_config

    fx = Path(__file__).parent / "vllm_cpu" / "fixtures" / "moe-ct-w4a16"
    sd = load_file(str(fx / "model.safetensors"))
    cfg = json.loads((fx / "config.json").read_text())["quantization_config"]
    base = "model.layers.0.mlp.experts"
    e, h, i = 8, 256, 256
    layer = torch.nn.Module()
    for side, parts in (("w13", ("gate_proj", "up_proj")), ("w2", ("down_proj",))):
        for t in ("weight_packed", "weight_scale"):
            stacked = torch.stack([torch.cat([sd[f"{base}.{x}.{p}.{t}"] for p in parts]) for x in range(e)])
            layer.register_parameter(f"{side}_{t}", torch.nn.Parameter(stacked, requires_grad=False))
    w = cfg["config_groups"]["group_0"]["weights"]
    schema = {"quant_method": "compressed-tensors", "format": "pack-quantized", "type": "int",
              "num_bits": w["num_bits"], "strategy": w["strategy"], "group_size": w["group_size"],
              "symmetric": w["symmetric"]}
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    assert layer.w13_weight.shape == (e, 2 * i, h) and layer.w2_weight.shape == (e, h, i)

    ckpt = parse_checkpoint_config(cfg)
    def ref(name, n, k):
        sc = ckpt.scheme_for([name])
        return sc.convert({s.name: sd[f"{name}.{s.name}"] for s in sc.tensors if f"{name}.{s.name}" in sd}, n, k,
                          name).dequantize(torch.float32)
    w13 = torch.stack([torch.cat([ref(f"{base}.{x}.gate_proj", i, h), ref(f"{base}.{x}.up_proj", i, h)])
                       for x in range(e)])
    w2 = torch.stack([ref(f"{base}.{x}.down_proj", h, i) for x in range(e)])
    assert torch.equal(layer.w13_weight, w13.to(layer.w13_weight.dtype))
    assert torch.equal(layer.w2_weight, w2.to(layer.w2_weight.dtype))
    w13, w2 = layer.w13_weight.float(), layer.w2_weight.float()

    g = torch.Generator().manual_seed(4)
    x = torch.randn(6, h, generator=g)
    ids = torch.randint(0, e, (6, 2), generator=g)
    wts = torch.rand(6, 2, generator=g)
    experts = object.__new__(classes[1])
    out = torch.empty(6, h)
    experts.apply(out, x, layer.w13_weight.float(), layer.w2_weight.float(), wts, ids, "silu", e, None, None, None,
                  None, None, None, False)
    want = torch.zeros(6, h)
    for t in range(6):
        for j in range(2):
            a = x[t] @ w13[ids[t, j]].t()
            want[t] += wts[t, j] * ((torch.nn.functional.silu(a[:i]) * a[i:]) @ w2[ids[t, j]].t())
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch_moe_fallback(x, w13, w2, wts, ids), want, rtol=1e-4, atol=1e-4)

    with pytest.raises(ours.HummingMoEBackendUnsupported, match="--quantization humming"):
        ours.convert_to_humming_moe_kernel_format(torch.nn.Module(), quant_config={"quant_method": "fp8"})
    with pytest.raises(ours.HummingMoEBackendUnsupported):
        ours.get_humming_moe_quant_config(torch.nn.Module())


def test_moe_backend_kernel_path_dispatch(vllm_env, forbid_upstream, monkeypatch):
    """--moe-backend humming with the expert-indexed kernels (HUMMING_MOE_KERNELS=1 on a GPU): the converted layer
    keeps zero-storage weight views of vLLM's shapes, and our experts' apply hands the call to the layer's
    FusedMoeGemm (here with torch stand-ins for the two GEMMs, as the kernels need a GPU); when the kernels refuse
    the experts the dense fallback stays, with the reason logged."""
    from safetensors.torch import load_file
    from vllm.model_executor.layers.fused_moe.oracle import int_wna16

    from vllm_humming.moe import experts as ours
    from vllm_humming.moe.fallback import torch_moe_fallback
    from vllm_humming.ops import moe_gemm

    fx = Path(__file__).parent / "vllm_cpu" / "fixtures" / "moe-ct-w4a16"
    sd = load_file(str(fx / "model.safetensors"))
    cfg = json.loads((fx / "config.json").read_text())["quantization_config"]
    base = "model.layers.0.mlp.experts"
    e, h, i = 8, 256, 256
    w = cfg["config_groups"]["group_0"]["weights"]
    schema = {"quant_method": "compressed-tensors", "format": "pack-quantized", "type": "int",
              "num_bits": w["num_bits"], "strategy": w["strategy"], "group_size": w["group_size"],
              "symmetric": w["symmetric"]}

    def make_layer():
        layer = torch.nn.Module()
        for side, parts in (("w13", ("gate_proj", "up_proj")), ("w2", ("down_proj",))):
            for t in ("weight_packed", "weight_scale"):
                stacked = torch.stack([torch.cat([sd[f"{base}.{x}.{p}.{t}"] for p in parts]) for x in range(e)])
                layer.register_parameter(f"{side}_{t}", torch.nn.Parameter(stacked, requires_grad=False))
        return layer

    class Side:   # ExpertGemm's interface on dense fp32 experts
        def __init__(self, qws):
            self.wd = torch.stack([q.dequantize(torch.float32) for q in qws])
            self.experts, self.n, self.k = self.wd.shape
            self.k8 = -(-self.k // 8) * 8

        def bt(self, tokens, topk):
            return 16

        def __call__(self, xs, tiles, tokens, topk):
            ex = tiles.repeat_interleave(16).long().clamp(min=0)
            return torch.einsum("rk,rnk->rn", xs[:, : self.k].float(), self.wd[ex]).to(torch.bfloat16)

    built = []

    def fake_build(q13, q2, dt, dev, name):
        built.append((len(q13), len(q2), dt, name))
        return moe_gemm.FusedMoeGemm(None, None, dt, name=name, sides=(Side(q13), Side(q2))), ""

    monkeypatch.setattr(ours, "_kernel_device", lambda dev: True)
    monkeypatch.setattr(moe_gemm, "build_fused_moe", fake_build)
    layer = make_layer()
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    assert built == [(e, e, torch.bfloat16, "moe")]
    assert layer.w13_weight.shape == (e, 2 * i, h) and layer.w2_weight.shape == (e, h, i)
    assert layer.w13_weight.stride(0) == 0 and layer.w13_weight.untyped_storage().nbytes() == 2
    classes = int_wna16.backend_to_kernel_cls(int_wna16.WNA16MoEBackend.HUMMING)
    experts = object.__new__(classes[1])
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, h, generator=g).to(torch.bfloat16)
    ids = torch.randint(0, e, (6, 2), generator=g)
    wts = torch.rand(6, 2, generator=g)
    out = torch.empty(6, h, dtype=torch.bfloat16)
    experts.apply(out, x, layer.w13_weight, layer.w2_weight, wts, ids, "silu", e, None, None, None, None, None, None,
                  False)
    d13 = torch.stack([q.dequantize(torch.float32) for q in ours._expert_qweights(make_layer(), "w13", schema)])
    d2 = torch.stack([q.dequantize(torch.float32) for q in ours._expert_qweights(make_layer(), "w2", schema)])
    want = torch_moe_fallback(x, d13, d2, wts, ids)
    torch.testing.assert_close(out.float(), want.float(), rtol=3e-2, atol=3e-2 * want.abs().max().item())

    # expert biases go to the kernels with the weights (FusedMoeGemm's bias epilogue), one row per expert
    got = []
    monkeypatch.setattr(moe_gemm, "build_fused_moe", lambda q13, q2, *a: (got.append((q13, q2)), (None, "a reason"))[1])
    layer = make_layer()
    b13, b2 = torch.randn(e, 2 * i, generator=g), torch.randn(e, h, generator=g)
    layer.register_parameter("w13_bias", torch.nn.Parameter(b13, requires_grad=False))
    layer.register_parameter("w2_bias", torch.nn.Parameter(b2, requires_grad=False))
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    (q13, q2), = got
    assert all(torch.equal(q.bias.float(), b13[x].to(torch.bfloat16).float()) for x, q in enumerate(q13))
    assert all(torch.equal(q.bias.float(), b2[x].to(torch.bfloat16).float()) for x, q in enumerate(q2))

    # the kernels refuse these experts: the dense fallback, the reason logged
    monkeypatch.setattr(moe_gemm, "build_fused_moe", lambda *a, **k: (None, "a reason"))
    layer = make_layer()
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    assert layer.w13_weight.stride(0) != 0 and torch.equal(layer.w13_weight, d13.to(torch.bfloat16))


def _oracle_experts_match_dense(expert_cls, layer, dense, g, e, h):
    """The oracle's expert class (ours, after install) on the converted layer vs the plain-torch experts on the
    dequantized weights, silu, 5 tokens x top-2."""
    from vllm_humming.moe.fallback import torch_moe_fallback

    x = torch.randn(5, h, generator=g).to(torch.bfloat16)
    ids = torch.randint(0, e, (5, 2), generator=g)
    wts = torch.rand(5, 2, generator=g)
    experts = object.__new__(expert_cls)
    out = torch.empty(5, h, dtype=torch.bfloat16)
    experts.apply(out, x, layer.w13_weight, layer.w2_weight, wts, ids, "silu", e, None, None, None, None, None, None,
                  False)
    want = torch_moe_fallback(x, dense["w13"], dense["w2"], wts, ids)
    torch.testing.assert_close(out.float(), want.float(), rtol=3e-2, atol=3e-2 * want.abs().max().item())


@pytest.mark.parametrize("kind", ["fp8_block", "fp8_channel", "fp8_tensor", "int8_channel", "int8_tensor"])
def test_moe_backend_eight_bit_oracles(vllm_env, forbid_upstream, kind):
    """--moe-backend humming for the fp8 and int8 oracles: the schema vLLM's own helper builds from the layer, our
    conversion to canonical weights (dense here: no GPU), the scale parameters the oracles read back afterwards, and
    the experts' output against the dequantized reference."""
    from vllm.model_executor.layers.fused_moe.oracle import fp8 as fp8_oracle
    from vllm.model_executor.layers.fused_moe.oracle import int8 as int8_oracle

    from vllm_humming.moe import experts as ours

    e, h, i = 4, 256, 128
    g = torch.Generator().manual_seed(len(kind))
    layer = torch.nn.Module()
    dense = {}
    for side, n, k in (("w13", 2 * i, h), ("w2", h, i)):
        if kind.startswith("fp8"):
            w = (torch.randn(e, n, k, generator=g) * 50).clamp(-448, 448).to(torch.float8_e4m3fn)
        else:
            w = torch.randint(-127, 128, (e, n, k), generator=g, dtype=torch.int8)
        if kind == "fp8_block":
            sc = torch.rand(e, n // 128, k // 128, generator=g) * 1e-3 + 1e-4
            full = sc.repeat_interleave(128, 1).repeat_interleave(128, 2)
            layer.register_parameter(f"{side}_weight_scale_inv", torch.nn.Parameter(sc, requires_grad=False))
        elif kind.endswith("channel"):
            sc = torch.rand(e, n, 1, generator=g) * 1e-3 + 1e-4
            full = sc.expand(e, n, k)
            layer.register_parameter(f"{side}_weight_scale", torch.nn.Parameter(sc, requires_grad=False))
        else:   # per tensor: w13 keeps one scale per shard (gate, up), w2 one
            sc = torch.rand(e, 2 if side == "w13" else 1, generator=g) * 1e-3 + 1e-4
            full = sc.repeat_interleave(n // sc.shape[1], 1).unsqueeze(-1).expand(e, n, k)
            layer.register_parameter(f"{side}_weight_scale", torch.nn.Parameter(sc, requires_grad=False))
        layer.register_parameter(f"{side}_weight", torch.nn.Parameter(w, requires_grad=False))
        dense[side] = w.float() * full
    if kind == "fp8_block":
        layer.weight_block_size = [128, 128]
    if kind.startswith("fp8"):
        schema = fp8_oracle._humming_fp8_weight_schema(layer, layer.w13_weight,
                                                       getattr(layer, "w13_weight_scale_inv", None)
                                                       if kind == "fp8_block" else layer.w13_weight_scale)
    else:
        schema = int8_oracle._humming_int8_weight_schema(layer.w13_weight, layer.w13_weight_scale)
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    assert layer.w13_weight.shape == (e, 2 * i, h) and layer.w2_weight.shape == (e, h, i)
    torch.testing.assert_close(layer.w13_weight.float(), dense["w13"].to(torch.bfloat16).float())
    torch.testing.assert_close(layer.w2_weight.float(), dense["w2"].to(torch.bfloat16).float())
    assert hasattr(layer, "w13_weight_scale") and hasattr(layer, "w2_weight_scale")   # what the oracles read back
    classes = fp8_oracle.backend_to_kernel_cls(fp8_oracle.Fp8MoeBackend.HUMMING)
    _oracle_experts_match_dense(classes[0], layer, dense, g, e, h)


def _e2m1_values(packed: torch.Tensor) -> torch.Tensor:
    """uint8 [E, N, K/2] e2m1 codes (element 2j in the low nibble) -> their float32 values [E, N, K]."""
    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    return table[torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(*packed.shape[:2], -1).long()]


def _e2m1_dense(packed: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """e2m1 codes x uint8 e8m0 group-32 scales [E, N, K/32] -> float32 [E, N, K]."""
    return _e2m1_values(packed) * torch.exp2(scale.float() - 127).repeat_interleave(32, dim=2)


def test_moe_backend_gpt_oss_mxfp4_oracle(vllm_env, forbid_upstream):
    """--moe-backend humming for the mxfp4 oracle (gpt-oss): the oracle's own call (quant_method gpt_oss_mxfp4, the
    layer's uint8 codes / e8m0 scales as vLLM's Mxfp4MoEMethod creates them, bf16 biases), the scale parameters it
    reads back, the swigluoai parameters it passes to get_humming_moe_quant_config, and the experts' output against a
    reference written out here: interleaved gate / up rows, biases on both GEMMs, gate <= limit, |up| <= limit."""
    from vllm.model_executor.layers.fused_moe.oracle import mxfp4 as mxfp4_oracle

    from vllm_humming.moe import experts as ours

    e, h, i = 4, 128, 64
    g = torch.Generator().manual_seed(11)
    layer = torch.nn.Module()
    dense, bias = {}, {}
    for side, n, k in (("w13", 2 * i, h), ("w2", h, i)):
        w = torch.randint(0, 256, (e, n, k // 2), generator=g, dtype=torch.uint8)
        sc = torch.randint(120, 127, (e, n, k // 32), generator=g, dtype=torch.uint8)
        b = (torch.randn(e, n, generator=g) * 0.1).to(torch.bfloat16)
        for name, t in (("weight", w), ("weight_scale", sc), ("bias", b)):
            layer.register_parameter(f"{side}_{name}", torch.nn.Parameter(t, requires_grad=False))
        dense[side], bias[side] = _e2m1_dense(w, sc), b.float()
    ours.convert_to_humming_moe_kernel_format(layer, quant_config={"quant_method": "gpt_oss_mxfp4"},
                                              input_schema=None, allow_input_schema_fallback=False)
    assert layer.w13_weight.shape == (e, 2 * i, h) and layer.w2_weight.shape == (e, h, i)
    torch.testing.assert_close(layer.w13_weight.float(), dense["w13"].to(torch.bfloat16).float())
    assert hasattr(layer, "w13_weight_scale") and hasattr(layer, "w2_weight_scale")   # the oracle returns them
    alpha, limit = 1.25, 1.5
    ours.get_humming_moe_quant_config(layer, gemm1_alpha=alpha, gemm1_beta=1.0, gemm1_clamp_limit=limit)
    with pytest.raises(ours.HummingMoEBackendUnsupported, match="beta=0.5"):
        ours.get_humming_moe_quant_config(layer, gemm1_alpha=alpha, gemm1_beta=0.5, gemm1_clamp_limit=limit)

    t, topk = 6, 2
    x = (torch.randn(t, h, generator=g) * 0.5).to(torch.bfloat16)
    ids = torch.randint(0, e, (t, topk), generator=g)
    wts = torch.rand(t, topk, generator=g)
    classes = mxfp4_oracle.backend_to_kernel_cls(mxfp4_oracle.Mxfp4MoeBackend.HUMMING)
    assert all(c.__module__ == ours.__name__ for c in classes)
    experts = object.__new__(classes[0])
    out = torch.empty(t, h, dtype=torch.bfloat16)
    experts.apply(out, x, layer.w13_weight, layer.w2_weight, wts, ids, "swigluoai", e, None, None, None, None, None,
                  None, False)
    want = torch.zeros(t, h)
    for tok in range(t):
        for j in range(topk):
            ex = int(ids[tok, j])
            hh = x[tok].float() @ dense["w13"][ex].t() + bias["w13"][ex]
            hh = hh.to(torch.bfloat16).float()
            gate, up = hh[::2].clamp(max=limit), hh[1::2].clamp(-limit, limit)
            a = ((up + 1) * gate * torch.sigmoid(alpha * gate)).to(torch.bfloat16).float()
            want[tok] += wts[tok, j] * (a @ dense["w2"][ex].t() + bias["w2"][ex])
    torch.testing.assert_close(out.float(), want, rtol=3e-2, atol=3e-2 * want.abs().max().item())
    # without the biases and the parameters the result is far off (the test can fail)
    assert (out.float() - want).abs().max() < 0.1 * want.abs().max()


@pytest.mark.parametrize("kind", ["compressed-tensors", "modelopt"])
def test_moe_backend_nvfp4_oracle(vllm_env, forbid_upstream, kind):
    """--moe-backend humming for the nvfp4 oracle, with the layer as it stands when the oracle calls the converter:
    e2m1 codes, e4m3 group-16 scales and a second-level scale per expert (w13: per gate / up shard, equal here) --
    compressed-tensors' global scale divides, ModelOpt's scale_2 multiplies.  The parameters the oracle and the
    method read back afterwards exist, and the experts' output matches the dequantized reference; gate / up shards
    with different second-level scales are refused."""
    from vllm.model_executor.layers.fused_moe.oracle import nvfp4 as nvfp4_oracle

    from vllm_humming.moe import experts as ours

    e, h, i = 3, 128, 64
    g = torch.Generator().manual_seed(5)

    def build(unequal=False):
        layer = torch.nn.Module()
        dense = {}
        for side, n, k in (("w13", 2 * i, h), ("w2", h, i)):
            w = torch.randint(0, 256, (e, n, k // 2), generator=g, dtype=torch.uint8)
            sc = (torch.rand(e, n, k // 16, generator=g) * 2 + 0.25).to(torch.float8_e4m3fn)
            per = torch.rand(e, 1, generator=g) * 0.02 + 0.01           # the value multiplier of each expert
            if side == "w13":
                per = per.repeat(1, 2)
                if unequal:
                    per[1, 1] *= 2
            dense[side] = _e2m1_values(w) * sc.float().repeat_interleave(16, dim=2) * per[:, :1].unsqueeze(-1)
            layer.register_parameter(f"{side}_weight", torch.nn.Parameter(w, requires_grad=False))
            layer.register_parameter(f"{side}_weight_scale", torch.nn.Parameter(sc, requires_grad=False))
            if kind == "compressed-tensors":
                layer.register_parameter(f"{side}_weight_global_scale",
                                         torch.nn.Parameter(1.0 / per, requires_grad=False))
                setattr(layer, f"{side}_weight_packed", getattr(layer, f"{side}_weight"))
            else:
                layer.register_parameter(f"{side}_weight_scale_2", torch.nn.Parameter(per, requires_grad=False))
        return layer, dense

    schema = ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "type": "float",
               "num_bits": 4, "strategy": "group", "group_size": 16} if kind == "compressed-tensors"
              else {"quant_method": "modelopt", "quant_algo": "nvfp4"})
    layer, dense = build()
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    for side in ("w13", "w2"):   # what the oracle and the methods read back
        for p in ("weight", "weight_scale", "weight_scale_2"):
            assert isinstance(getattr(layer, f"{side}_{p}"), torch.nn.Parameter)
    torch.testing.assert_close(layer.w13_weight.float(), dense["w13"].to(torch.bfloat16).float(),
                               rtol=1e-2, atol=1e-6)
    ours.get_humming_moe_quant_config(layer, gemm1_alpha=None, gemm1_beta=None, gemm1_clamp_limit=None)
    classes = nvfp4_oracle.backend_to_kernel_cls(nvfp4_oracle.NvFp4MoeBackend.HUMMING)
    _oracle_experts_match_dense(classes[0], layer, dense, g, e, h)
    layer, _ = build(unequal=True)
    with pytest.raises(ours.HummingMoEBackendUnsupported, match=r"different second-level scales \(experts \[1\]"):
        ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)


def test_moe_backend_mxfp8_through_the_fp8_oracle(vllm_env, forbid_upstream):
    """MXFP8 experts (e4m3 codes, e8m0 group-32 scales): the fp8 oracle's own schema helper recognises them by the
    scale dtype; our conversion and the experts' output against the dequantized reference."""
    from vllm.model_executor.layers.fused_moe.oracle import fp8 as fp8_oracle

    from vllm_humming.moe import experts as ours

    e, h, i = 3, 128, 64
    g = torch.Generator().manual_seed(8)
    layer = torch.nn.Module()
    dense = {}
    for side, n, k in (("w13", 2 * i, h), ("w2", h, i)):
        w = (torch.randn(e, n, k, generator=g) * 20).clamp(-448, 448).to(torch.float8_e4m3fn)
        sc = torch.randint(118, 126, (e, n, k // 32), generator=g, dtype=torch.uint8)
        layer.register_parameter(f"{side}_weight", torch.nn.Parameter(w, requires_grad=False))
        layer.register_parameter(f"{side}_weight_scale", torch.nn.Parameter(sc, requires_grad=False))
        dense[side] = w.float() * torch.exp2(sc.float() - 127).repeat_interleave(32, dim=2)
    schema = fp8_oracle._humming_fp8_weight_schema(layer, layer.w13_weight, layer.w13_weight_scale)
    assert schema == {"quant_method": "modelopt", "quant_algo": "mxfp8"}
    ours.convert_to_humming_moe_kernel_format(layer, quant_config=schema)
    torch.testing.assert_close(layer.w2_weight.float(), dense["w2"].to(torch.bfloat16).float())
    classes = fp8_oracle.backend_to_kernel_cls(fp8_oracle.Fp8MoeBackend.HUMMING)
    _oracle_experts_match_dense(classes[0], layer, dense, g, e, h)


def test_moe_backend_w4a8_fails_with_our_message(vllm_env, monkeypatch):
    """The W4A8 MoE oracle builds upstream humming schema objects before it converts.  Without the upstream package
    the facade's ImportError becomes our error naming the path and --quantization humming; with it, our converter
    refuses the schema objects (no quant config) -- loud either way, and the upstream kernels never run."""
    import vllm.utils.humming as facade
    from vllm.model_executor.layers.fused_moe.oracle import w4a8

    from vllm_humming.moe import experts as ours

    layer = torch.nn.Module()
    w = torch.zeros(2, 8, 8)
    with pytest.raises(ours.HummingMoEBackendUnsupported, match="weight schemas vllm-humming does not read"):
        ours.convert_to_humming_moe_kernel_format(layer, weight_schema=object(), input_schema=object())
    # the upstream package absent (whether or not this venv has it)
    for k in list(vars(facade)):
        if k in getattr(facade, "_EXPORTS", {}):
            monkeypatch.delattr(facade, k, raising=False)
    for mod in [m for m in list(sys.modules) if m == "humming" or m.startswith("humming.")] + ["humming"]:
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ours.HummingMoEBackendUnsupported, match="W4A8 MoE experts.*--quantization humming"):
        w4a8.convert_to_w4a8_moe_kernel_format(w4a8.W4A8MoeBackend.HUMMING, layer, 128, w, w, w, w)


def test_moe_backend_mxfp4_oracle_refuses_cut_scale_groups(vllm_env, forbid_upstream):
    from vllm_humming.moe import experts as ours

    layer = torch.nn.Module()
    for side, n, k in (("w13", 2 * 48, 128), ("w2", 128, 48)):   # a TP shard of 48 columns cuts the 32-column groups
        layer.register_parameter(f"{side}_weight", torch.nn.Parameter(
            torch.zeros(2, n, k // 2, dtype=torch.uint8), requires_grad=False))
        layer.register_parameter(f"{side}_weight_scale", torch.nn.Parameter(
            torch.zeros(2, n, k // 32, dtype=torch.uint8), requires_grad=False))
    with pytest.raises(ours.HummingMoEBackendUnsupported, match="multiple of 32"):
        ours.convert_to_humming_moe_kernel_format(layer, quant_config={"quant_method": "gpt_oss_mxfp4"})


# ----------------------------------------------------------------------------------------------- version guard
def test_version_guard_missing_symbol(vllm_env, monkeypatch):
    import vllm
    import vllm.model_executor.kernels.linear as kl

    from vllm_humming import plugin

    monkeypatch.delattr(kl, "_POSSIBLE_MXFP4_KERNELS")
    with pytest.raises(plugin.PluginVersionError) as ei:
        plugin.check_vllm()
    msg = str(ei.value)
    assert "_POSSIBLE_MXFP4_KERNELS" in msg and vllm.__version__ in msg
    monkeypatch.setitem(plugin._STATE, "registered", False)
    with pytest.raises(plugin.PluginVersionError):
        plugin.register()


def test_version_guard_unsupported_version(vllm_env, monkeypatch):
    import vllm

    from vllm_humming import plugin

    monkeypatch.setattr(vllm, "__version__", "0.34.1")
    with pytest.raises(plugin.PluginVersionError, match="0.34.1"):
        plugin.check_vllm()
    monkeypatch.setitem(plugin._STATE, "registered", False)
    monkeypatch.setenv(plugin.DISABLE_ENV, "1")
    plugin.register()                      # explicitly disabled: no error, nothing installed
    assert not plugin.is_registered()


# ----------------------------------------------------------------------------------------------- layer numerics
LAYERS = {   # prefix: (kind, [shard (name, n)], k)
    "model.layers.0.self_attn.qkv_proj": ("qkv", [("q_proj", 256), ("k_proj", 128), ("v_proj", 128)], 256),
    "model.layers.0.mlp.down_proj": ("row", [("down_proj", 256)], 512),
    "model.layers.0.self_attn.o_proj": ("row", [("o_proj", 256)], 256),
}

NUMERIC_FIXTURES = ["gptq-int4-g128", "gptq-int3-g128-actorder", "gptq-int2-g64", "gptq-int4-g32-asym-actorder",
                    "gptq-int8-channel-asym", "awq-int4-g128", "ct-w4a16-g128",
                    "ct-w4a16-asym-g64", "ct-w3a16-g128", "ct-w8a8-int8", "ct-w8a16-asym-channel", "ct-nvfp4",
                    "ct-mxfp4a16", "ct-fp8-block", "ct-fp8-dynamic", "fp8-block-deepseek", "modelopt-nvfp4"]


def _reference(fixture: str, prefix: str, x: torch.Tensor) -> torch.Tensor:
    """Independent path: full checkpoint tensors -> format converter -> reference_gemm, shard by shard."""
    from safetensors.torch import load_file

    from vllm_humming.quant_config.vllm_config import parse_checkpoint_config
    from vllm_humming.reference import reference_gemm

    sd = load_file(str(FIX / fixture / "model.safetensors"))
    ckpt = parse_checkpoint_config(_qcfg(fixture))
    kind, shards, k = LAYERS[prefix]
    base = prefix.rsplit(".", 1)[0]
    outs = []
    for sub, n in shards:
        name = f"{base}.{sub}"
        scheme = ckpt.scheme_for([name])
        t = {s.name: sd[f"{name}.{s.name}"] for s in scheme.tensors if f"{name}.{s.name}" in sd}
        qw = scheme.convert(t, n, k, name)
        act = scheme.act if scheme.act.quantized else None
        outs.append(reference_gemm(x, qw, act, scheme.static_value(t)))
    return torch.cat(outs, dim=-1)


def _build_and_run(fixture: str, prefix: str, x: torch.Tensor, tp_rank: int, tp_size: int) -> torch.Tensor:
    from safetensors.torch import load_file
    from vllm.model_executor.layers.linear import MergedColumnParallelLinear, QKVParallelLinear, RowParallelLinear
    from vllm.model_executor.layers.quantization import get_quantization_config

    qc = get_quantization_config("humming").from_config(_qcfg(fixture))
    qc.packed_modules_mapping = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]}
    kind, shards, k = LAYERS[prefix]
    dt = torch.float32
    if kind == "qkv":
        layer = QKVParallelLinear(256, 64, 4, 2, bias=False, quant_config=qc, prefix=prefix, params_dtype=dt)
    elif kind == "merged":
        layer = MergedColumnParallelLinear(256, [512, 512], bias=False, quant_config=qc, prefix=prefix,
                                           params_dtype=dt)
    else:
        layer = RowParallelLinear(k, shards[0][1], bias=False, quant_config=qc, prefix=prefix, params_dtype=dt)
    sd = load_file(str(FIX / fixture / "model.safetensors"))
    base = prefix.rsplit(".", 1)[0]
    for pname, p in layer.named_parameters():
        for i, (sub, _) in enumerate(shards):
            key = f"{base}.{sub}.{pname}"
            if key not in sd:
                continue
            if kind == "qkv":
                p.weight_loader(p, sd[key], "qkv"[i])
            elif kind == "merged":
                p.weight_loader(p, sd[key], i)
            else:
                p.weight_loader(p, sd[key])
    layer.quant_method.process_weights_after_loading(layer)
    y = layer(x)
    return y[0] if isinstance(y, tuple) else y


def _expected_shard(full: torch.Tensor, prefix: str, rank: int, size: int) -> torch.Tensor:
    kind, shards, _ = LAYERS[prefix]
    if kind == "row" or size == 1:
        return full
    parts, off = [], 0
    for _, n in shards:
        per = n // size
        parts.append(full[..., off + rank * per: off + (rank + 1) * per])
        off += n
    return torch.cat(parts, dim=-1)


@pytest.mark.parametrize("fixture", NUMERIC_FIXTURES)
def test_layers_match_reference_tp1(vllm_env, forbid_upstream, fixture):
    g = torch.Generator().manual_seed(1)
    for prefix, (kind, shards, k) in LAYERS.items():
        x = torch.randn(5, k, generator=g)
        got = _build_and_run(fixture, prefix, x, 0, 1)
        want = _reference(fixture, prefix, x)
        torch.testing.assert_close(got, want, rtol=2e-4, atol=2e-4, msg=lambda m: f"{fixture} {prefix}: {m}")


def _tp_worker(rank, size, port, fixtures, out_dir):
    from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel

    from vllm_humming.plugin import register

    register()
    torch.manual_seed(0)
    with set_current_vllm_config(VllmConfig(device_config=DeviceConfig(device="cpu"))):
        init_distributed_environment(world_size=size, rank=rank, local_rank=rank,
                                     distributed_init_method=f"tcp://127.0.0.1:{port}", backend="gloo")
        initialize_model_parallel(size)
        res = {}
        for fixture in fixtures:
            g = torch.Generator().manual_seed(2)
            for prefix, (kind, shards, k) in LAYERS.items():
                x = torch.randn(4, k, generator=g)
                if fixture in BLOCK_128 and kind == "qkv":
                    continue        # 64-row k/v shards cannot split 128-row scale blocks (vLLM refuses this too)
                x_in = x.chunk(size, dim=-1)[rank].contiguous() if kind == "row" else x
                res[f"{fixture}|{prefix}"] = (x, _build_and_run(fixture, prefix, x_in, rank, size))
        torch.save(res, os.path.join(out_dir, f"rank{rank}.pt"))


BLOCK_128 = {"ct-fp8-block", "fp8-block-deepseek"}
TP_FIXTURES = ["gptq-int3-g128-actorder", "gptq-int4-g32-asym-actorder", "gptq-int4-g128", "awq-int4-g128", "ct-w4a16-asym-g64", "ct-nvfp4",
               "ct-fp8-block", "modelopt-nvfp4"]


def test_layers_match_reference_tp2(vllm_env, tmp_path):
    """gloo world of 2: column shards (qkv, gate_up) and row shards (act-order GPTQ, group scales) stay exact."""
    import torch.multiprocessing as mp

    port = _free_port()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_tp_worker, args=(r, 2, port, TP_FIXTURES, str(tmp_path))) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    for r in range(2):
        res = torch.load(tmp_path / f"rank{r}.pt")
        for key, (x, got) in res.items():
            fixture, prefix = key.split("|")
            want = _expected_shard(_reference(fixture, prefix, x), prefix, r, 2)
            torch.testing.assert_close(got, want, rtol=2e-4, atol=2e-4, msg=lambda m: f"rank {r} {key}: {m}")


def test_linear_backend_kernel_numerics(vllm_env, forbid_upstream):
    """--linear-backend humming through vLLM's own compressed-tensors method: our kernel class processes the layer
    (its canonical buffer appears) and the output equals the reference."""
    from safetensors.torch import load_file
    from vllm.model_executor.layers.linear import RowParallelLinear
    from vllm.model_executor.layers.quantization import get_quantization_config

    for fixture in ("ct-w4a16-g128", "ct-w4a16-asym-g64", "ct-w8a8-int8", "ct-nvfp4", "ct-mxfp4a16"):
        cfg = _qcfg(fixture)
        qc = get_quantization_config("compressed-tensors").from_config(cfg)
        prefix = "model.layers.0.mlp.down_proj"
        layer = RowParallelLinear(512, 256, bias=False, quant_config=qc, prefix=prefix, params_dtype=torch.bfloat16)
        sd = load_file(str(FIX / fixture / "model.safetensors"))
        for pname, p in layer.named_parameters():
            key = f"{prefix}.{pname}"
            if key in sd:
                p.weight_loader(p, sd[key])
        layer.quant_method.process_weights_after_loading(layer)
        assert hasattr(layer, "hm_qweight"), f"{fixture}: our kernel did not process the layer"
        x = torch.randn(3, 512, generator=torch.Generator().manual_seed(3)).to(torch.bfloat16)
        got = layer(x)
        got = (got[0] if isinstance(got, tuple) else got).float()
        want = _reference(fixture, prefix, x.float())
        torch.testing.assert_close(got, want, rtol=3e-2, atol=3e-2, msg=lambda m: f"{fixture}: {m}")
