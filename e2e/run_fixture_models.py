#!/usr/bin/env python3
"""End-to-end check of fixture checkpoints through our reader and ``humming_linear``, with transformers models.

For each checkpoint:
  1. ``read_checkpoint`` -> per-layer QuantizedWeight + ActDesc.
  2. Build the architecture with transformers (``AutoModelForCausalLM.from_config``, quantization_config removed),
     load the unquantized tensors, and replace every quantized ``nn.Linear`` with a module that calls
     ``vllm_humming.ops.prepare_linear`` / ``humming_linear`` (our GPU kernel on CUDA, the torch fallback elsewhere).
     MoE experts (Qwen3-MoE style per-expert checkpoints) are run expert by expert through humming_linear.
  3. Build the same model a second time with *reference* layers: the dequantized weight in float32 and, for layers
     with quantized activations, the reference fake-quantization of the input (vllm_humming.reference) -- i.e. what
     the checkpoint means, computed plainly.
  4. Run a fixed batch of random prompts through both and report max / mean |logit diff| and the teacher-forced
     log-probability difference; pass when mean |dlogprob| <= --tol (default 0.01; see /work/shared/fixtures/README.md:
     bf16-vs-fp32 noise is ~0.0015, 4-bit quantization itself moves log-probs by ~0.04-0.05).
  5. With an unquantized original (``--original``, or llama-bf16 / moe-bf16 found next to the checkpoint) also print
     the quantized-vs-original difference, for information.

    python e2e/run_fixture_models.py [CHECKPOINT ...] [--device cuda|cpu] [--dtype bfloat16|float32] [--json OUT]

Without CHECKPOINT it runs every quantized fixture under $HUMMING_FIXTURES (default /work/shared/fixtures).
``--repo-fixtures`` runs the trimmed fixtures of tests/fixtures/ instead (layer-0 layers quantized, the rest of the
model taken from the bf16 original in $HUMMING_FIXTURES), which covers every format we read: GPTQ 2/3/4/8-bit, act-order,
asymmetric, AWQ, compressed-tensors int/fp8/NVFP4/MXFP4/W4A8/W8A8, ModelOpt NVFP4, DeepSeek FP8 block.
Needs torch, transformers (5.x) and safetensors; vLLM is not used.  Exit status 1 when a checkpoint fails.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from vllm_humming.ops import humming_linear, prepare_linear  # noqa: E402
from vllm_humming.quant_config.reader import read_checkpoint  # noqa: E402
from vllm_humming.reference import dequantize_activations, quantize_activations  # noqa: E402

_EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<e>\d+)\.(?P<proj>gate|up|down)_proj$")


# ------------------------------------------------------------------------------------------------ layer modules
def _dense(qw) -> torch.Tensor:
    return qw.dequantize(torch.float32)


class HummingLinear(nn.Module):
    """y = humming_linear(x, prepare_linear(qw, act)) -- our op (kernel on CUDA, fallback elsewhere)."""

    def __init__(self, qw, act, act_tensors, dtype, device):
        super().__init__()
        kw = {}
        static = act_tensors.get("input_scale")
        params = inspect.signature(prepare_linear).parameters
        self.note = ""
        if static is not None:
            for cand in ("static_act_scale", "act_scale", "input_scale"):
                if cand in params:
                    kw[cand] = static.to(device)
                    break
            else:
                self.note = "prepare_linear takes no static activation scale: reference path for this layer"
        self.pl = prepare_linear(qw, act, out_dtype=dtype, device=device, **kw)
        self.static = None if static is None else static.to(device)
        self.act = act

    @property
    def backend(self):
        return "reference" if self.note else self.pl.backend

    def forward(self, x):
        if self.note:    # no way to pass the static scale through the op yet
            return _ref_forward(x, self.pl.qw.k_perm, self.act, self.static, self.pl.dense_weight().float(),
                                self.pl.qw.bias).to(x.dtype)
        return humming_linear(x, self.pl)


def _ref_forward(x, k_perm, act, static, w, bias):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1]).to(torch.float32)
    if k_perm is not None:
        x2 = x2[:, k_perm]
    if act is not None and act.quantized:
        codes, s = quantize_activations(x2, act, static)
        x2 = dequantize_activations(codes, s, act, static)
    y = x2 @ w.t()
    if bias is not None:
        y = y + bias.to(torch.float32)
    return y.reshape(*shape[:-1], w.shape[0])


class ReferenceLinear(nn.Module):
    """The checkpoint's meaning in float32: fake-quantized input (if the layer quantizes activations) times the
    dequantized weight."""

    def __init__(self, qw, act, act_tensors, device):
        super().__init__()
        self.w = _dense(qw).to(device)
        self.k_perm = None if qw.k_perm is None else qw.k_perm.to(device)
        self.bias = None if qw.bias is None else qw.bias.to(device)
        self.act = act
        self.static = act_tensors.get("input_scale")
        if self.static is not None:
            self.static = self.static.to(device)
        self.backend = "reference"

    def forward(self, x):
        return _ref_forward(x, self.k_perm, self.act, self.static, self.w, self.bias).to(x.dtype)


class PerExpertMoE(nn.Module):
    """Drop-in for transformers' fused ``*Experts`` (forward(hidden, top_k_index, top_k_weights)), one linear module
    per expert projection."""

    def __init__(self, gate, up, down, act_fn):
        super().__init__()
        self.gate, self.up, self.down = nn.ModuleList(gate), nn.ModuleList(up), nn.ModuleList(down)
        self.num_experts = len(gate)
        self.act_fn = act_fn

    def forward(self, hidden_states, top_k_index, top_k_weights):
        out = torch.zeros_like(hidden_states)
        for e in range(self.num_experts):
            pos, tok = _route(top_k_index, e)
            if tok.numel() == 0:
                continue
            x = hidden_states[tok]
            h = self.act_fn(self.gate[e](x)) * self.up[e](x)
            y = self.down[e](h) * top_k_weights[tok, pos, None]
            out.index_add_(0, tok, y.to(out.dtype))
        return out


def _route(top_k_index, e):
    tok, pos = torch.where(top_k_index == e)
    return pos, tok


# --------------------------------------------------------------------------------------------------- building
def _config(path):
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(path)
    for attr in ("quantization_config", "compression_config"):
        if hasattr(cfg, attr):
            delattr(cfg, attr)
    return cfg


def _set_tensor(model, name, value, loaded):
    try:
        t = model.get_parameter(name)
    except AttributeError:
        try:
            t = model.get_buffer(name)
        except AttributeError:
            return False
    if tuple(t.shape) != tuple(value.shape):
        raise ValueError(f"{name}: checkpoint shape {list(value.shape)} != model shape {list(t.shape)}")
    with torch.no_grad():
        t.copy_(value.to(t.dtype))
    loaded.add(name)
    return True


def merged_view(ckpt, base=None):
    """name -> (record, get_tensor) for every layer, and name -> get_tensor for other tensors.  With ``base`` (an
    unquantized checkpoint of the same model), whatever the checkpoint lacks is taken from it: trimmed test fixtures
    (tests/fixtures/*, a few quantized layers) then run as whole models, the rest of the layers in bf16."""
    layers = {n: (r, ckpt.get_tensor) for n, r in ckpt.layers.items()}
    other = {n: ckpt.get_tensor for n in ckpt.other}
    if base is not None:
        have = set(ckpt.store.infos)
        for n, r in base.layers.items():
            if n not in layers:
                layers[n] = (r, base.get_tensor)
        for n in base.other:
            if n not in have and n not in other:
                other[n] = base.get_tensor
    return layers, other


def build(path, ckpt, mode, dtype, device, base=None):
    """mode: 'humming' | 'reference' | 'original' (an unquantized checkpoint)."""
    from transformers import AutoModelForCausalLM

    cfg = _config(path)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg).to(dtype).eval()
    loaded, replaced, backends = set(), set(), {}
    experts = {}
    layers, other = merged_view(ckpt, base)
    for name, (rec, get) in layers.items():
        m = _EXPERT.match(name)
        if rec.kind == "quantized":
            if rec.num_experts:
                raise NotImplementedError(f"{name}: fused (gpt-oss) experts are not wired into this e2e script yet")
            qw = rec.qweight()
            mod = (HummingLinear(qw, rec.act_desc, rec.act_tensors(), dtype, device) if mode == "humming"
                   else ReferenceLinear(qw, rec.act_desc, rec.act_tensors(), device))
            backends[name] = mod.backend
        else:
            w = get(rec.tensors["weight"].name)
            b = get(rec.tensors["bias"].name) if "bias" in rec.tensors else None
            if not m:
                _set_tensor(model, f"{name}.weight", w, loaded) or _missing(name)
                if b is not None:
                    _set_tensor(model, f"{name}.bias", b, loaded)
                continue
            mod = nn.Linear(w.shape[1], w.shape[0], bias=b is not None).to(dtype)
            with torch.no_grad():
                mod.weight.copy_(w)
                if b is not None:
                    mod.bias.copy_(b)
        if m:
            experts.setdefault(m["experts"], {}).setdefault(m["proj"], {})[int(m["e"])] = mod
        else:
            parent, _, child = name.rpartition(".")
            old = model.get_submodule(name)
            if not isinstance(old, nn.Linear):
                raise TypeError(f"{name}: expected an nn.Linear in the model, found {type(old).__name__}")
            setattr(model.get_submodule(parent), child, mod.to(device))
            replaced.update(f"{name}.{p}" for p, _ in old.named_parameters())
    for ex_name, projs in experts.items():
        old = model.get_submodule(ex_name)
        n = old.num_experts
        if any(sorted(projs.get(p, {})) != list(range(n)) for p in ("gate", "up", "down")):
            raise ValueError(f"{ex_name}: the checkpoint does not hold gate/up/down for all {n} experts "
                             f"(pass --base with the unquantized original)")
        mods = [[projs[p][e] for e in range(n)] for p in ("gate", "up", "down")]
        parent, _, child = ex_name.rpartition(".")
        setattr(model.get_submodule(parent), child, PerExpertMoE(*mods, old.act_fn).to(device))
        replaced.update(f"{ex_name}.{p}" for p, _ in old.named_parameters())
    for name, get in other.items():
        _set_tensor(model, name, get(name), loaded)
    model = model.to(device)
    missing = [p for p, _ in model.named_parameters() if p not in loaded and not _inside(p, replaced, ckpt)]
    if missing:
        raise ValueError(f"{path}: model parameters not in the checkpoint: {missing[:8]} (a trimmed fixture needs "
                         f"--base with the unquantized original)")
    return model, backends


def _inside(p, replaced, ckpt):
    # parameters of modules we installed (HummingLinear / ReferenceLinear / PerExpertMoE) hold no nn.Parameters;
    # nn.Linear experts of unquantized checkpoints were filled from the checkpoint when built
    return p in replaced or ".experts." in p


def _missing(name):
    raise ValueError(f"{name}: tensor not found in the model")


# ------------------------------------------------------------------------------------------------- comparison
def prompts(vocab, batch=4, seq=32):
    g = torch.Generator().manual_seed(0)
    return torch.randint(3, vocab, (batch, seq), generator=g)


@torch.no_grad()
def logits_of(model, ids, device):
    return model(input_ids=ids.to(device)).logits.float().cpu()


def compare(a, b, ids):
    la, lb = torch.log_softmax(a, -1), torch.log_softmax(b, -1)
    tgt = ids[:, 1:].unsqueeze(-1)
    ta, tb = la[:, :-1].gather(-1, tgt), lb[:, :-1].gather(-1, tgt)
    d = (a - b).abs()
    return {"max_abs_logit_diff": d.max().item(), "mean_abs_logit_diff": d.mean().item(),
            "mean_abs_dlogprob": (ta - tb).abs().mean().item(), "max_abs_dlogprob": (ta - tb).abs().max().item(),
            "argmax_agreement": (a.argmax(-1) == b.argmax(-1)).float().mean().item()}


def find_original(path, config):
    """The unquantized original of a fixture: llama-bf16 / moe-bf16 next to it or under $HUMMING_FIXTURES
    (default /work/shared/fixtures)."""
    name = "moe-bf16" if "moe" in str(config.get("model_type", "")) else "llama-bf16"
    for root in (os.path.dirname(os.path.abspath(path)), os.environ.get("HUMMING_FIXTURES", "/work/shared/fixtures")):
        cand = os.path.join(root, name)
        if os.path.isdir(cand) and os.path.abspath(cand) != os.path.abspath(path):
            return cand
    return None


def run_one(path, args, device, dtype):
    t0 = time.time()
    ckpt = read_checkpoint(path)
    if not ckpt.quantized_layers:
        return {"checkpoint": path, "skipped": "no quantized layers"}
    orig = args.original or find_original(path, ckpt.config)
    trimmed = not any("embed_tokens" in n for n in ckpt.store.infos)
    if ckpt.method == "mxfp4":
        raise NotImplementedError("gpt-oss fused MXFP4 experts: no gpt-oss model wired into this script yet")
    base_path = args.base or (orig if trimmed else None)
    if trimmed and not base_path:
        raise NotImplementedError("trimmed checkpoint and no unquantized original found (set HUMMING_FIXTURES)")
    base = read_checkpoint(base_path) if base_path else None
    q, backends = build(path, ckpt, "humming", dtype, device, base)
    r, _ = build(path, ckpt, "reference", torch.float32, device, base)
    vocab = q.config.vocab_size
    ids = prompts(vocab, args.batch, args.seq)
    lq, lr = logits_of(q, ids, device), logits_of(r, ids, device)
    res = {"checkpoint": path, "method": ckpt.method, "device": str(device), "dtype": str(dtype),
           "layers": len(backends), "backends": sorted(set(backends.values())),
           "fallback_layers": sum(1 for b in backends.values() if b != "kernel"),
           "vs_reference": compare(lq, lr, ids)}
    if base_path:
        res["base"] = base_path
    if orig:
        ock = read_checkpoint(orig)
        o, _ = build(orig, ock, "original", torch.float32, device)
        res["original"] = orig
        res["reference_vs_original"] = compare(lr, logits_of(o, ids, device), ids)
    act_q = any(r.act_desc is not None and r.act_desc.quantized for r in ckpt.quantized_layers)
    res["tol"] = args.tol_act if act_q and dtype != torch.float32 else args.tol
    res["ok"] = res["vs_reference"]["mean_abs_dlogprob"] <= res["tol"]
    res["seconds"] = round(time.time() - t0, 2)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="*")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default=None, choices=("bfloat16", "float16", "float32"),
                    help="activation dtype of the humming model (default: bfloat16 on CUDA, float32 on CPU)")
    ap.add_argument("--tol", type=float, default=0.01, help="max mean |teacher-forced dlogprob| vs the reference")
    ap.add_argument("--tol-act", type=float, default=0.025,
                    help="the same for checkpoints that quantize activations, run in bf16/fp16: a bf16-rounded input "
                         "flips fp8 codes (3 mantissa bits), measured ~0.012 on the CPU fallback for ct-fp8-dynamic "
                         "and ct-w4afp8-packed (quantization itself: 0.02 / 0.047)")
    ap.add_argument("--original", default=None, help="unquantized checkpoint to report quantization error against")
    ap.add_argument("--base", default=None,
                    help="unquantized checkpoint that supplies what a trimmed checkpoint lacks (default for a checkpoint "
                         "without embeddings: the original, see --original)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--repo-fixtures", action="store_true", help="run the trimmed fixtures of tests/fixtures/")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype or ("bfloat16" if device.type == "cuda" else "float32"))
    paths = args.checkpoints
    if args.repo_fixtures:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
        paths = [os.path.join(root, d) for d in sorted(os.listdir(root))
                 if os.path.isdir(os.path.join(root, d)) and d != "expected"]
    if not paths:
        root = os.environ.get("HUMMING_FIXTURES", "/work/shared/fixtures")
        paths = [os.path.join(root, d) for d in sorted(os.listdir(root))
                 if os.path.isdir(os.path.join(root, d)) and not d.endswith("bf16")]
    results, failed = [], 0
    for p in paths:
        try:
            res = run_one(p, args, device, dtype)
        except NotImplementedError as e:
            res = {"checkpoint": p, "skipped": str(e)}
        except Exception as e:  # report and go on with the next checkpoint
            res = {"checkpoint": p, "ok": False, "error": f"{type(e).__name__}: {e}"}
        results.append(res)
        if "skipped" in res:
            print(f"SKIP {p}: {res['skipped']}")
            continue
        if not res.get("ok"):
            failed += 1
        if "error" in res:
            print(f"FAIL {p}: {res['error']}")
            continue
        v = res["vs_reference"]
        line = (f"{'PASS' if res['ok'] else 'FAIL'} {os.path.basename(p)} [{res['method']}, {res['layers']} layers, "
                f"backends {res['backends']}]: vs reference max|dlogit| {v['max_abs_logit_diff']:.4g} "
                f"mean|dlogit| {v['mean_abs_logit_diff']:.4g} mean|dlogprob| {v['mean_abs_dlogprob']:.4g}")
        if "reference_vs_original" in res:
            line += f"; quantization vs original mean|dlogprob| {res['reference_vs_original']['mean_abs_dlogprob']:.4g}"
        print(line + f" ({res['seconds']}s)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
