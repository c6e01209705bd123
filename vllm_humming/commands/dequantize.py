"""``vllm-humming dequantize CHECKPOINT OUT``: write a bf16 safetensors copy of a quantized checkpoint.

Every quantized linear layer becomes ``<layer>.weight`` (bf16 [N, K], input channels in the original order, i.e.
act-order permutations undone) plus its ``<layer>.bias``; gpt-oss fused MXFP4 experts become
``<experts>.<proj>`` bf16 [E, K, N] (+ ``<proj>_bias``), the layout transformers' GptOss uses unquantized.  All other
tensors (embeddings, norms, unquantized layers) are copied unchanged; static activation scales are dropped.
config.json is copied without ``quantization_config``; tokenizer and generation files are copied;
quantize_config.json / hf_quant_config.json are not."""

from __future__ import annotations

import json
import os
import shutil
import sys

import torch

COPY_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json",
              "generation_config.json", "vocab.json", "merges.txt", "chat_template.jinja", "chat_template.json")


def add_arguments(p):
    p.add_argument("checkpoint", help="quantized checkpoint folder")
    p.add_argument("out", help="output folder (created)")
    p.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))


def dense_weight(qw) -> torch.Tensor:
    """[N, K] float32 in the layer's original input-channel order."""
    w = qw.dequantize(torch.float32)
    if qw.k_perm is not None:
        out = torch.empty_like(w)
        out[:, qw.k_perm.to(w.device)] = w
        w = out
    return w


def run(args) -> int:
    from safetensors.torch import save_file

    from ..quant_config.reader import CheckpointError, read_checkpoint

    dtype = getattr(torch, args.dtype)
    try:
        ckpt = read_checkpoint(args.checkpoint)
        if os.path.abspath(args.out) == os.path.abspath(args.checkpoint):
            raise CheckpointError("OUT must differ from CHECKPOINT")
        tensors = {}
        for name, rec in ckpt.layers.items():
            if rec.kind != "quantized":
                for t in rec.tensors.values():
                    tensors[t.name] = ckpt.get_tensor(t.name)
                continue
            qw = rec.qweight()
            if isinstance(qw, list):        # gpt-oss fused experts: [E, K, N]
                tensors[name] = torch.stack([dense_weight(q).t() for q in qw]).to(dtype).contiguous()
                if qw[0].bias is not None:
                    tensors[f"{name}_bias"] = torch.stack([q.bias for q in qw]).to(dtype).contiguous()
            else:
                tensors[f"{name}.weight"] = dense_weight(qw).to(dtype).contiguous()
                if qw.bias is not None:
                    tensors[f"{name}.bias"] = qw.bias.to(dtype).contiguous()
            rec._cache = None
        for name in ckpt.other:
            tensors[name] = ckpt.get_tensor(name)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    save_file(tensors, os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
    cfg = dict(ckpt.config)
    cfg.pop("quantization_config", None)
    cfg.pop("compression_config", None)
    cfg["torch_dtype"] = args.dtype
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    for fn in COPY_FILES:
        src = os.path.join(args.checkpoint, fn)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(args.out, fn))
    nq = len(ckpt.quantized_layers)
    print(f"wrote {args.out}: {len(tensors)} tensors ({nq} dequantized layers) as {args.dtype}")
    return 0
