"""``vllm-humming inspect CHECKPOINT [--json]``: per layer, the description, the tensors found and the kernel family
it will use (or why it falls back / stays unquantized).  Reads configs and safetensors headers; each quantized layer
is converted once to learn its exact description (some depend on the data, e.g. GPTQ symmetric zero points)."""

from __future__ import annotations

import json
import sys


def add_arguments(p):
    p.add_argument("checkpoint", help="checkpoint folder (config.json + *.safetensors)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--layer", default=None, help="only layers whose name contains this string")


def kernel_family(desc, act) -> str:
    try:
        from ..ops.gemm import kernel_family as kf
    except Exception:  # the kernel module is optional (CUDA toolchain) or not there yet
        return "torch fallback (kernel family unknown)"
    try:
        return kf(desc, act)
    except Exception as e:  # a description no kernel family takes
        return f"torch fallback ({e})"


def layer_report(rec) -> dict:
    d = rec.describe()
    if rec.kind == "quantized":
        d["weight"] = str(rec.weight_desc)
        d["kernel"] = kernel_family(rec.weight_desc, rec.act_desc)
        d["static_act_scales"] = {k: v.reshape(-1).tolist() for k, v in rec.act_tensors().items()}
    else:
        d["kernel"] = f"unquantized bf16 ({rec.reason})"
    return d


def run(args) -> int:
    from ..quant_config.reader import CheckpointError, read_checkpoint

    try:
        ckpt = read_checkpoint(args.checkpoint)
        layers = [layer_report(r) for name, r in sorted(ckpt.layers.items())
                  if args.layer is None or args.layer in name]
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    other = [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape)} for t in ckpt.other.values()]
    if args.json:
        json.dump({"checkpoint": ckpt.path, "quant_method": ckpt.method, "layers": layers, "other_tensors": other},
                  sys.stdout, indent=2)
        print()
        return 0
    nq = sum(1 for l in layers if l["kind"] == "quantized")
    print(f"{ckpt.path}: quant_method={ckpt.method}, {nq} quantized / {len(layers) - nq} unquantized layers, "
          f"{len(other)} other tensors")
    for l in layers:
        if l["kind"] == "quantized":
            ex = f" experts={l['num_experts']}" if l["num_experts"] else ""
            print(f"  {l['name']}  [{l['method']} {l['format']}]{ex}")
            print(f"      weight: {l['weight']}")
            print(f"      act:    {l['act']}" + (f"  static scales {l['static_act_scales']}"
                                                  if l["static_act_scales"] else ""))
            print(f"      kernel: {l['kernel']}")
        else:
            print(f"  {l['name']}  [unquantized: {l['reason']}]")
        for t in l["tensors"]:
            print(f"      {t['name']} {t['dtype']} {t['shape']}")
    return 0
