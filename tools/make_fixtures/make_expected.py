"""Compute, ONCE, each writing tool's own reconstruction of a few layers of every test fixture and store it under
tests/fixtures/expected/<fixture>.safetensors (with tool name and version in the metadata), so CI can check our
reader against the tools without installing them.

Run in the tools venv (outside the repo), e.g. /root/venvs/tools with torch 2.13.0, compressed-tensors 0.19.0,
transformers 5.17.0, autoawq 0.2.9 (installed --no-deps + accelerate):

    /root/venvs/tools/bin/python tools/make_fixtures/make_expected.py

Per format, the reconstruction used:
* compressed-tensors: the format's own compressor class ``decompress`` (BaseCompressor registry), fed the module's
  tensors and the QuantizationScheme from config.json -- exactly what CT does when it decompresses a model.
* AWQ: AutoAWQ's ``awq.utils.packing_utils.dequantize_gemm`` (loaded from its file, bypassing awq/__init__ which
  needs datasets), transposed to [N, K].
* GPTQ: the expected file of gptq-int4-g128 is now written by make_gptq.py with gptqmodel 7.7.0 itself (its own
  venv: it pins torch 2.14.1 / transformers 5.24).  Without that venv, ``gptq_reference_dequant`` below (used when
  this script is asked for a gptq fixture by name) re-implements gptqmodel's documented torch dequant
  (``PackableQuantLinear.dequantize_weight``: per-row shift tables, GPTQ's 3-bit 10-1-10-1-10 word scheme with its
  two fix-ups, ``(zeros + 1)`` for v1 checkpoints, ``scales[g_idx] * (w - zeros[g_idx])``) independently of our
  reader (which unpacks a bit stream instead).  Recorded as tool "gptq-reference (re-implementation)".
* Extra constructed fixtures (see make_extra.py) record their own reference in their own metadata.
"""

import importlib.util
import json
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures")
LAYERS = ["model.layers.0.self_attn.k_proj", "model.layers.0.mlp.down_proj"]
MOE_LAYERS = ["model.layers.0.self_attn.k_proj", "model.layers.0.mlp.experts.0.down_proj",
              "model.layers.0.mlp.experts.1.gate_proj"]
ROWS = 64   # rows stored per layer (k_proj 128 rows, down_proj 256): keeps the files small


def module_tensors(path, mod):
    with safe_open(os.path.join(path, "model.safetensors"), "pt") as f:
        return {k[len(mod) + 1:]: f.get_tensor(k) for k in f.keys() if k.startswith(mod + ".")
                and "." not in k[len(mod) + 1:]}


# ------------------------------------------------------------------------------------------------ tools
def ct_dequant(path, mod, cfg):
    import compressed_tensors
    from compressed_tensors.compressors.base import BaseCompressor
    from compressed_tensors.quantization import QuantizationScheme

    qc = cfg["quantization_config"]
    group = next(iter(qc["config_groups"].values()))
    scheme = QuantizationScheme(**group)
    fmt = group.get("format") or qc["format"]
    comp = BaseCompressor.get_value_from_registry(fmt)
    sd = module_tensors(path, mod)
    out = comp.decompress(sd, scheme)
    return out["weight"], f"compressed-tensors {compressed_tensors.__version__} {comp.__name__}.decompress"


def awq_dequant(path, mod, cfg):
    pkg = importlib.util.find_spec("awq").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("awq_packing_utils", os.path.join(pkg, "utils", "packing_utils.py"))
    pu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pu)
    qc = cfg["quantization_config"]
    sd = module_tensors(path, mod)
    w = pu.dequantize_gemm(sd["qweight"], sd["qzeros"], sd["scales"], qc["bits"], qc["group_size"])
    from importlib.metadata import version
    return w.t().contiguous(), f"autoawq {version('autoawq')} packing_utils.dequantize_gemm"


def gptq_reference_dequant(qweight, qzeros, scales, g_idx, bits, v1=True):
    """gptqmodel-style torch dequant -> [N, K] float (see the module docstring)."""
    maxq = (1 << bits) - 1
    if bits in (2, 4, 8):
        wf = torch.arange(0, 32, bits, dtype=torch.int32)
        z = torch.bitwise_right_shift(qzeros.unsqueeze(2).expand(-1, -1, 32 // bits), wf.view(1, 1, -1))
        z = (z & maxq).reshape(qzeros.shape[0], -1)[:, : scales.shape[1]]
        w = torch.bitwise_right_shift(qweight.unsqueeze(1).expand(-1, 32 // bits, -1), wf.view(1, -1, 1)) & maxq
        w = w.reshape(-1, w.shape[2])
    elif bits == 3:
        wf = torch.tensor([[0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0],
                           [0, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31],
                           [0, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0]], dtype=torch.int32).reshape(1, 3, 12)
        z = qzeros.reshape(qzeros.shape[0], qzeros.shape[1] // 3, 3, 1).expand(-1, -1, -1, 12)
        z = torch.bitwise_right_shift(z, wf.unsqueeze(0))
        z[:, :, 0, 10] = (z[:, :, 0, 10] & 0x3) | ((z[:, :, 1, 0] << 2) & 0x4)
        z[:, :, 1, 11] = (z[:, :, 1, 11] & 0x1) | ((z[:, :, 2, 0] << 1) & 0x6)
        z = z & 0x7
        z = torch.cat([z[:, :, 0, :11], z[:, :, 1, 1:12], z[:, :, 2, 1:11]], dim=2).reshape(scales.shape)
        w = qweight.reshape(qweight.shape[0] // 3, 3, 1, qweight.shape[1]).expand(-1, -1, 12, -1)
        w = torch.bitwise_right_shift(w, wf.unsqueeze(-1)) & 0x7
        w[:, 0, 10] = (w[:, 0, 10] & 0x3) | ((w[:, 1, 0] << 2) & 0x4)
        w[:, 1, 11] = (w[:, 1, 11] & 0x1) | ((w[:, 2, 0] << 1) & 0x6)
        w = w & 0x7
        w = torch.cat([w[:, 0, :11], w[:, 1, 1:12], w[:, 2, 1:11]], dim=1)
    else:
        raise ValueError(bits)
    if v1:
        z = z + 1          # gptqmodel converts v1 -> v2 by adding 1 to every packed zero
        z = z & maxq       # a v1 zero of 0 was stored as -1 (all ones): wraps back to 0
    g = g_idx.long()
    w = w[: g.numel()]
    deq = scales[g].float() * (w.float() - z[g].float())     # [K, N]
    return deq.t().contiguous()


def gptq_dequant(path, mod, cfg):
    qc = cfg.get("quantization_config") or json.load(open(os.path.join(path, "quantize_config.json")))
    sd = module_tensors(path, mod)
    fmt = qc.get("checkpoint_format") or qc.get("format") or "gptq"
    w = gptq_reference_dequant(sd["qweight"], sd["qzeros"], sd["scales"], sd["g_idx"], qc["bits"], fmt == "gptq")
    return w.to(sd["scales"].dtype), "gptq-reference (re-implementation of gptqmodel 7.7.0 torch dequant)"


TOOLS = {"gptq": gptq_dequant, "awq": awq_dequant, "compressed-tensors": ct_dequant}


def make(name, layers):
    path = os.path.join(FIX, name)
    cfg = json.load(open(os.path.join(path, "config.json")))
    qc = cfg.get("quantization_config")
    method = qc["quant_method"] if qc else "gptq"
    fn = TOOLS[method]
    out, meta = {}, {}
    for mod in layers:
        w, tool = fn(path, mod, cfg)
        out[mod] = w[:ROWS].contiguous()
        meta["tool"] = tool
    meta.update({"fixture": name, "rows": str(ROWS), "layers": ",".join(layers)})
    os.makedirs(os.path.join(FIX, "expected"), exist_ok=True)
    save_file(out, os.path.join(FIX, "expected", f"{name}.safetensors"), metadata=meta)
    print(name, meta["tool"], {k: (v.dtype, list(v.shape)) for k, v in out.items()})


def originals(src_root):
    for name, layers in (("llama-bf16", LAYERS), ("moe-bf16", MOE_LAYERS)):
        with safe_open(os.path.join(src_root, name, "model.safetensors"), "pt") as f:
            out = {m: f.get_tensor(m + ".weight")[:ROWS].contiguous() for m in layers}
        save_file(out, os.path.join(FIX, "expected", f"{name}.safetensors"),
                  metadata={"tool": "transformers 5.17.0 (bf16 original, copied)", "rows": str(ROWS),
                            "layers": ",".join(layers)})
        print(name, "originals")


if __name__ == "__main__":
    names = sys.argv[1:] or ["awq-int4-g128", "ct-w4a16-g128", "ct-fp8-dynamic", "ct-w8a8-int8",
                             "ct-w4afp8-packed", "moe-ct-w4a16"]
    for n in names:
        make(n, MOE_LAYERS if n.startswith("moe") else LAYERS)
    if not sys.argv[1:]:
        originals("/work/shared/fixtures")
