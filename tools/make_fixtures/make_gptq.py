"""GPTQ fixtures the shared set lacks, written by gptqmodel 7.7.0 itself (CPU), plus gptqmodel's own dequant.

Run in a separate venv (gptqmodel pins torch 2.14.1 / transformers 5.24):
    python3 -m venv /root/venvs/gptq && /root/venvs/gptq/bin/pip install gptqmodel==7.7.0
    GPTQMODEL_CPU_WORKERS=2 /root/venvs/gptq/bin/python tools/make_fixtures/make_gptq.py [--full DIR] [names...]

Same recipe as the shared gptq-int4-g128 (llama-bf16, 32 x 64 random-token calibration, seed 0), with other bits /
group sizes / act-order / asymmetric settings.  Full checkpoints go to --full DIR (default /tmp/humming-gptq-full);
the trimmed copies (layer-0 attention + down_proj + norms, as trim_shared.py) go to tests/fixtures/<name>/ and the
expected dequantized weights to tests/fixtures/expected/<name>.safetensors, computed by loading each layer's tensors
into gptqmodel's TorchLinear (also for the shared gptq-int4-g128, replacing make_expected.py's re-implementation), converting v1 qzeros as gptqmodel's loader does, and calling its ``dequantize_weight()``.
"""

import argparse
import os
import sys

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
FIX = os.path.join(ROOT, "tests", "fixtures")
SRC = "/work/shared/fixtures/llama-bf16"
CONFIGS = {
    "gptq-int3-g128-actorder": dict(bits=3, group_size=128, desc_act=True, sym=True),
    "gptq-int8-channel-asym": dict(bits=8, group_size=-1, desc_act=False, sym=False, act_group_aware=False),
    "gptq-int4-g32-asym-actorder": dict(bits=4, group_size=32, desc_act=True, sym=False),
    "gptq-int2-g64": dict(bits=2, group_size=64, desc_act=False, sym=True),
}
# the shared gptq-int4-g128 (made by the lead with the same tool): only its expected file is (re)computed here
SHARED_GPTQ = {"gptq-int4-g128": dict(bits=4, group_size=128, desc_act=False, sym=True)}
EXPECT = ["model.layers.0.self_attn.k_proj", "model.layers.0.mlp.down_proj"]
ROWS = 64


def quantize(name, out):
    from gptqmodel import GPTQModel, QuantizeConfig

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 1024, (32, 64), generator=g)
    calib = [{"input_ids": r.tolist(), "attention_mask": [1] * 64} for r in ids]
    qcfg = QuantizeConfig(**CONFIGS[name])
    model = GPTQModel.load(SRC, qcfg, device="cpu")
    model.quantize(calib, batch_size=1)
    model.save(out)


def expected(name, path):
    import gptqmodel
    from gptqmodel.nn_modules.qlinear.torch import TorchLinear
    from gptqmodel.utils.model import convert_gptq_v1_to_v2_format_module
    from safetensors import safe_open
    from safetensors.torch import save_file

    cfg = {**CONFIGS, **SHARED_GPTQ}[name]
    out = {}
    with safe_open(os.path.join(path, "model.safetensors"), "pt") as f:
        for mod in EXPECT:
            t = {k: f.get_tensor(f"{mod}.{k}") for k in ("qweight", "qzeros", "scales", "g_idx")}
            k_in = t["g_idx"].numel()
            n = t["scales"].shape[1]
            lin = TorchLinear(bits=cfg["bits"], group_size=cfg["group_size"], sym=cfg["sym"],
                                   desc_act=cfg["desc_act"], in_features=k_in, out_features=n, bias=False,
                                   pack_dtype=torch.int32, register_buffers=True)
            for k, v in t.items():
                getattr(lin, k).data.copy_(v)
            # what gptqmodel does when it loads a v1 ("gptq") checkpoint: add 1 to every packed zero field
            convert_gptq_v1_to_v2_format_module(lin, cfg["bits"], torch.int32)
            lin.post_init()
            w = lin.dequantize_weight()              # [K, N] in gptqmodel's internal (v2) zero convention
            out[mod] = w.t()[:ROWS].contiguous()
    save_file(out, os.path.join(FIX, "expected", f"{name}.safetensors"),
              metadata={"tool": f"gptqmodel {gptqmodel.__version__} TorchLinear.dequantize_weight (after its v1->v2 qzeros conversion)",
                        "rows": str(ROWS), "layers": ",".join(out), "fixture": name})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", default="/tmp/humming-gptq-full")
    ap.add_argument("--skip-quantize", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    from trim_shared import trim

    for name in a.names or list(CONFIGS) + list(SHARED_GPTQ):
        if name in SHARED_GPTQ:
            expected(name, os.path.join(os.path.dirname(SRC), name))
            print("done", name, flush=True)
            continue
        full = os.path.join(a.full, name)
        if not a.skip_quantize:
            quantize(name, full)
        trim(full, os.path.join(FIX, name))
        expected(name, full)
        print("done", name, flush=True)


if __name__ == "__main__":
    main()
