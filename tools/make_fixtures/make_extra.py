"""Make the extra test fixtures that the shared set lacks, plus their expected dequantized weights.

Run in the tools venv (outside the repo):  /root/venvs/tools/bin/python tools/make_fixtures/make_extra.py [--full DIR]

Source weights: layer 0 of /work/shared/fixtures/llama-bf16 (self_attn q/k/v/o + mlp.down_proj) and, for gpt-oss
MXFP4, experts 0-1 of layer 0 of moe-bf16.  Default output: trimmed checkpoints in tests/fixtures/<name>/ (those
layers + layer-0 norms) and tests/fixtures/expected/<name>.safetensors.  With ``--full DIR`` every Linear of the
whole llama-bf16 model (lm_head excepted) is quantized and complete checkpoints (embeddings, norms, lm_head,
tokenizer) are written to DIR/<name>/ for e2e/run_fixture_models.py.

Who wrote what (also in tests/fixtures/README.md):
* ct-*: written by compressed-tensors 0.19.0 itself -- the format's compressor class ``compress`` with qparams from
  CT's ``calculate_qparams`` / ``generate_gparam`` on min/max of the bf16 weight (round-to-nearest, no calibration
  data, no llmcompressor); config from CT's ``QuantizationConfig``.  Expected = the compressor's ``decompress``.
* modelopt-nvfp4: CONSTRUCTED in ModelOpt's documented layout from the CT NVFP4 numbers (same e2m1 codes and e4m3
  group scales; ``weight_scale_2 = 1 / weight_global_scale``, ``input_scale = 1 / input_global_scale``), since
  ModelOpt itself is not installable here.  Expected = CT's decompress of the same numbers.
* fp8-block-deepseek: CONSTRUCTED DeepSeek-V3 layout (weight fp8 + weight_scale_inv fp32 [N/128, K/128]) from the CT
  FP8_BLOCK numbers.  Expected = transformers 5.17.0 ``Fp8Dequantize._dequantize_one``.
* gptoss-mxfp4: CONSTRUCTED gpt-oss layout (``experts.gate_up_proj_blocks`` uint8 [E, 2I, H/32, 16], ``_scales``
  [E, 2I, H/32], gate/up rows interleaved; ``down_proj_*``) from CT's MXFP4 compressor codes.  Expected =
  transformers 5.17.0 ``integrations.mxfp4.convert_moe_packed_tensors`` (transposed back to [N, K]).
* gptq-*: see make_gptq.py.
"""

import argparse
import json
import os
import shutil

import torch
from safetensors import safe_open
from safetensors.torch import save_file

import compressed_tensors
from compressed_tensors.compressors.base import BaseCompressor
from compressed_tensors.quantization import QuantizationArgs, QuantizationConfig, QuantizationScheme
from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES
from compressed_tensors.quantization.utils import calculate_qparams, generate_gparam

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures")
SHARED = "/work/shared/fixtures"
LAYER0 = ["model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj", "model.layers.0.self_attn.v_proj",
          "model.layers.0.self_attn.o_proj", "model.layers.0.mlp.down_proj"]
EXPECT = ["model.layers.0.self_attn.k_proj", "model.layers.0.mlp.down_proj"]
ROWS = 64
CT_VERSION = compressed_tensors.__version__


def load_bf16(name="llama-bf16"):
    with safe_open(os.path.join(SHARED, name, "model.safetensors"), "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def linears(sd, full):
    if not full:
        return list(LAYER0)
    return sorted(k[:-7] for k, v in sd.items() if k.endswith(".weight") and v.dim() == 2
                  and "embed" not in k and not k.startswith("lm_head"))


def passthrough(sd, quantized, full):
    out = {}
    for k, v in sd.items():
        mod = k.rsplit(".", 1)[0]
        if mod in quantized:
            continue
        if full or (k.startswith("model.layers.0.") and "layernorm" in k):
            out[k] = v
    return out


def write(dst, tensors, config, extra_files=None, full=False, src="llama-bf16"):
    os.makedirs(dst, exist_ok=True)
    save_file(tensors, os.path.join(dst, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for fn, obj in (extra_files or {}).items():
        with open(os.path.join(dst, fn), "w") as f:
            json.dump(obj, f, indent=2)
    if full:
        for fn in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
            shutil.copyfile(os.path.join(SHARED, src, fn), os.path.join(dst, fn))
    print(dst, len(tensors), "tensors", os.path.getsize(os.path.join(dst, "model.safetensors")) // 1000, "kB")


def save_expected(name, exp, tool):
    out = {k: v[:ROWS].contiguous() for k, v in exp.items()}
    save_file(out, os.path.join(FIX, "expected", f"{name}.safetensors"),
              metadata={"tool": tool, "rows": str(ROWS), "layers": ",".join(out), "fixture": name})


# --------------------------------------------------------------------------------------------- CT quantization
def minmax(w, args):
    n, k = w.shape
    s = args.strategy.value if hasattr(args.strategy, "value") else args.strategy
    if s in ("group", "tensor_group"):
        v = w.float().reshape(n, k // args.group_size, args.group_size)
        return v.amin(-1), v.amax(-1)
    if s == "channel":
        return w.float().amin(1, keepdim=True), w.float().amax(1, keepdim=True)
    if s == "block":
        bn, bk = args.block_structure
        v = w.float().reshape(n // bn, bn, k // bk, bk).transpose(1, 2).reshape(n // bn, k // bk, -1)
        return v.amin(-1), v.amax(-1)
    return w.float().amin().reshape(1), w.float().amax().reshape(1)


def ct_compress(w, scheme, fmt):
    args = scheme.weights
    mn, mx = minmax(w, args)
    sd = {"weight": w}
    gs = None
    s = args.strategy.value if hasattr(args.strategy, "value") else args.strategy
    if s == "tensor_group":
        gs = generate_gparam(w.float().amin(), w.float().amax())
        sd["weight_global_scale"] = gs
    scale, zp = calculate_qparams(mn, mx, args, global_scale=gs)
    sd["weight_scale"] = scale.to(w.dtype) if scale.dtype in (torch.float32,) and s != "tensor_group" else scale
    if not args.symmetric:
        sd["weight_zero_point"] = zp
    comp = BaseCompressor.get_value_from_registry(fmt)
    return comp.compress(sd, scheme), comp


CT_FIXTURES = {
    # name: (preset or custom weights args, format, input activations)
    "ct-w4a16-asym-g64": (dict(weights=QuantizationArgs(num_bits=4, type="int", symmetric=False, group_size=64,
                                                        strategy="group")), "pack-quantized"),
    "ct-w3a16-g128": (PRESET_SCHEMES["W3A16"], "pack-quantized"),
    "ct-w8a16-asym-channel": (dict(weights=QuantizationArgs(num_bits=8, type="int", symmetric=False,
                                                            strategy="channel")), "int-quantized"),
    "ct-nvfp4": (PRESET_SCHEMES["NVFP4"], "nvfp4-pack-quantized"),
    "ct-fp8-block": (PRESET_SCHEMES["FP8_BLOCK"], "float-quantized"),
    "ct-mxfp4a16": (PRESET_SCHEMES["MXFP4A16"], "mxfp4-pack-quantized"),
}


def make_ct(name, preset, fmt, sd, full, out_root):
    scheme = QuantizationScheme(targets=["Linear"], **preset)
    mods = linears(sd, full)
    tensors, expected, numbers = passthrough(sd, set(mods), full), {}, {}
    for mod in mods:
        w = sd[mod + ".weight"]
        comp_sd, comp = ct_compress(w, scheme, fmt)
        if scheme.input_activations is not None and not scheme.input_activations.dynamic is True:
            # a static (or 'local' NVFP4) activation global scale: from a fixed pseudo-activation amax of 4.0
            comp_sd["input_global_scale"] = generate_gparam(torch.tensor(-4.0), torch.tensor(4.0))
        for k, v in comp_sd.items():
            tensors[f"{mod}.{k}"] = v.contiguous()
        numbers[mod] = comp_sd
        if mod in EXPECT:
            expected[mod] = comp.decompress(comp_sd, scheme)["weight"]
    qc = QuantizationConfig(config_groups={"group_0": scheme}, format=fmt, quantization_status="compressed",
                            ignore=["lm_head"]).model_dump(mode="json")
    qc["version"] = CT_VERSION
    cfg = json.load(open(os.path.join(SHARED, "llama-bf16", "config.json")))
    cfg["quantization_config"] = qc
    write(os.path.join(out_root, name), tensors, cfg, full=full)
    if not full:
        save_expected(name, expected, f"compressed-tensors {CT_VERSION} {comp.__name__}.decompress")
    return numbers, scheme


def make_modelopt(nv_numbers, sd, full, out_root, nv_scheme):
    tensors = passthrough(sd, set(nv_numbers), full)
    expected = {}
    for mod, c in nv_numbers.items():
        tensors[f"{mod}.weight"] = c["weight_packed"]
        tensors[f"{mod}.weight_scale"] = c["weight_scale"]
        tensors[f"{mod}.weight_scale_2"] = (1.0 / c["weight_global_scale"].float()).reshape(())
        tensors[f"{mod}.input_scale"] = (1.0 / c["input_global_scale"].float()).reshape(())
        if mod in EXPECT:
            comp = BaseCompressor.get_value_from_registry("nvfp4-pack-quantized")
            expected[mod] = comp.decompress(c, nv_scheme)["weight"]
    hq = {"producer": {"name": "modelopt", "version": "constructed (see tools/make_fixtures/make_extra.py)"},
          "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                           "exclude_modules": ["lm_head"]}}
    cfg = json.load(open(os.path.join(SHARED, "llama-bf16", "config.json")))
    write(os.path.join(out_root, "modelopt-nvfp4"), tensors, cfg, {"hf_quant_config.json": hq}, full=full)
    if not full:
        save_expected("modelopt-nvfp4", expected, f"compressed-tensors {CT_VERSION} NVFP4PackedCompressor.decompress "
                                                  "(same numbers; ModelOpt layout constructed)")


def make_fp8_block(fp8_numbers, sd, full, out_root):
    from transformers.integrations.finegrained_fp8 import Fp8Dequantize
    import transformers

    tensors = passthrough(sd, set(fp8_numbers), full)
    expected = {}
    deq = Fp8Dequantize(None)
    for mod, c in fp8_numbers.items():
        tensors[f"{mod}.weight"] = c["weight"]
        tensors[f"{mod}.weight_scale_inv"] = c["weight_scale"].float().contiguous()
        if mod in EXPECT:
            expected[mod] = deq._dequantize_one(c["weight"], c["weight_scale"].float(), torch.float32)
    cfg = json.load(open(os.path.join(SHARED, "llama-bf16", "config.json")))
    cfg["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                  "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]}
    write(os.path.join(out_root, "fp8-block-deepseek"), tensors, cfg, full=full)
    if not full:
        save_expected("fp8-block-deepseek", expected,
                      f"transformers {transformers.__version__} Fp8Dequantize._dequantize_one")


def make_gptoss(out_root):
    """gpt-oss-style fused MXFP4 experts for layer 0 of moe-bf16, experts 0-1 (trimmed fixture only)."""
    import transformers
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors

    sd = load_bf16("moe-bf16")
    scheme = QuantizationScheme(targets=["Linear"], **PRESET_SCHEMES["MXFP4A16"])
    pre = "model.layers.0.mlp.experts"
    tensors, expected = {}, {}
    for proj in ("gate_up_proj", "down_proj"):
        blocks, scales = [], []
        for e in range(2):
            if proj == "gate_up_proj":
                g, u = sd[f"{pre}.{e}.gate_proj.weight"], sd[f"{pre}.{e}.up_proj.weight"]
                w = torch.stack([g, u], 1).reshape(-1, g.shape[1])          # rows interleaved gate/up
            else:
                w = sd[f"{pre}.{e}.down_proj.weight"]
            c, _ = ct_compress(w, scheme, "mxfp4-pack-quantized")
            n, k = w.shape
            blocks.append(c["weight_packed"].reshape(n, k // 32, 16))
            scales.append(c["weight_scale"].reshape(n, k // 32))
        tensors[f"{pre}.{proj}_blocks"] = torch.stack(blocks).contiguous()
        tensors[f"{pre}.{proj}_scales"] = torch.stack(scales).contiguous()
        tensors[f"{pre}.{proj}_bias"] = torch.linspace(-0.1, 0.1, blocks[0].shape[0]).repeat(2, 1).to(torch.bfloat16)
        deq = convert_moe_packed_tensors(tensors[f"{pre}.{proj}_blocks"], tensors[f"{pre}.{proj}_scales"],
                                         dtype=torch.float32)           # [E, K, N]
        for e in range(2):
            expected[f"{pre}.{proj}.{e}"] = deq[e].t().contiguous()
    tensors["model.layers.0.mlp.router.weight"] = sd["model.layers.0.mlp.gate.weight"]
    cfg = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 256,
           "intermediate_size": 256, "num_local_experts": 2, "num_hidden_layers": 1,
           "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn",
                                                                                      "model.layers.*.mlp.router",
                                                                                      "model.embed_tokens", "lm_head"]}}
    write(os.path.join(out_root, "gptoss-mxfp4"), tensors, cfg)
    save_expected("gptoss-mxfp4", expected, f"transformers {transformers.__version__} convert_moe_packed_tensors")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", default=None, help="write complete checkpoints here instead of trimmed test fixtures")
    a = ap.parse_args()
    full = a.full is not None
    out_root = a.full or FIX
    os.makedirs(os.path.join(FIX, "expected"), exist_ok=True)
    sd = load_bf16()
    numbers = {}
    for name, (preset, fmt) in CT_FIXTURES.items():
        numbers[name] = make_ct(name, preset, fmt, sd, full, out_root)
    make_modelopt(numbers["ct-nvfp4"][0], sd, full, out_root, numbers["ct-nvfp4"][1])
    make_fp8_block(numbers["ct-fp8-block"][0], sd, full, out_root)
    if not full:
        make_gptoss(out_root)


if __name__ == "__main__":
    main()
