"""Copy the shared fixtures (/work/shared/fixtures) into tests/fixtures/, trimmed to a few layers.

Tensors are copied byte for byte (safetensors load + save of the selected names): the trimmed checkpoint is still
exactly what the writing tool produced, only with fewer layers.  Kept: every tensor of layer 0's self-attention
(q/k/v/o), mlp.down_proj and the layer-0 norms; for the MoE fixtures experts 0 and 1 and the router.  config.json
and the small json files are copied unchanged (tokenizer files are not: no test needs them).

    python tools/make_fixtures/trim_shared.py [--src /work/shared/fixtures] [--dst tests/fixtures]
"""

import argparse
import os
import re
import shutil

from safetensors import safe_open
from safetensors.torch import save_file

FIXTURES = ["gptq-int4-g128", "awq-int4-g128", "ct-w4a16-g128", "ct-fp8-dynamic", "ct-w8a8-int8", "ct-w4afp8-packed",
            "moe-ct-w4a16"]
KEEP = re.compile(r"^model\.layers\.0\.(self_attn\.[qkvo]_proj|mlp\.down_proj|mlp\.experts\.[01]\.(gate|up|down)_proj"
                  r"|mlp\.gate|input_layernorm|post_attention_layernorm)\.")
SMALL_JSON = ("config.json", "quantize_config.json", "hf_quant_config.json", "generation_config.json")


def trim(src: str, dst: str):
    os.makedirs(dst, exist_ok=True)
    for fn in SMALL_JSON:
        if os.path.exists(os.path.join(src, fn)):
            shutil.copyfile(os.path.join(src, fn), os.path.join(dst, fn))
    with safe_open(os.path.join(src, "model.safetensors"), "pt") as f:
        meta = f.metadata()
        keep = {k: f.get_tensor(k) for k in f.keys() if KEEP.match(k)}
    save_file(keep, os.path.join(dst, "model.safetensors"), metadata=meta)
    print(f"{dst}: {len(keep)} tensors, {os.path.getsize(os.path.join(dst, 'model.safetensors')) / 1e3:.0f} kB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default="/work/shared/fixtures")
    ap.add_argument("--dst", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures"))
    a = ap.parse_args()
    for name in FIXTURES:
        trim(os.path.join(a.src, name), os.path.join(a.dst, name))


if __name__ == "__main__":
    main()
