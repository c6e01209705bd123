"""`vllm-humming inspect` and `vllm-humming dequantize` on the fixture checkpoints."""

from __future__ import annotations

import json
import os

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from vllm_humming.cli import main
from vllm_humming.quant_config.reader import read_checkpoint

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
EXP = os.path.join(FIX, "expected")


def test_inspect_text(capsys):
    assert main(["inspect", os.path.join(FIX, "gptq-int4-g128")]) == 0
    out = capsys.readouterr().out
    assert "quant_method=gptq" in out
    assert "model.layers.0.mlp.down_proj" in out
    assert "weight: w:uint4b8,s:g128:float16" in out
    assert "model.layers.0.mlp.down_proj.qweight I32 [64, 256]" in out
    assert "kernel: " in out


def test_inspect_json_every_fixture(capsys):
    for name in sorted(os.listdir(FIX)):
        if name == "expected" or not os.path.isdir(os.path.join(FIX, name)):
            continue
        assert main(["inspect", os.path.join(FIX, name), "--json"]) == 0, name
        rep = json.loads(capsys.readouterr().out)
        q = [l for l in rep["layers"] if l["kind"] == "quantized"]
        assert q, name
        for l in q:
            assert l["weight"] and l["act"] and l["kernel"] and l["tensors"], (name, l)
            for t in l["tensors"]:
                assert set(t) == {"name", "dtype", "shape"}


def test_inspect_reports_fallback_reason_and_unquantized(capsys):
    assert main(["inspect", os.path.join(FIX, "ct-w8a8-int8"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    l = next(l for l in rep["layers"] if l["name"].endswith("down_proj"))
    assert l["act"] == "a:int8,s:token:float32,dynamic"
    assert "fallback" in l["kernel"] or "kernel family unknown" not in l["kernel"]
    assert main(["inspect", os.path.join(FIX, "moe-ct-w4a16"), "--layer", "mlp.gate"]) == 0
    out = capsys.readouterr().out
    assert "unquantized: in the ignore list" in out


def test_inspect_error_exit_code(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": {"quant_method": "hqq"}}))
    (tmp_path / "model.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    assert main(["inspect", str(tmp_path)]) == 1
    assert "unknown quant_method 'hqq'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["gptq-int4-g128", "ct-w4a16-g128", "ct-nvfp4"])
def test_dequantize_writes_bf16_checkpoint(tmp_path, name):
    src = os.path.join(FIX, name)
    out = tmp_path / "dq"
    assert main(["dequantize", src, str(out)]) == 0
    cfg = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in cfg and cfg["model_type"] == "llama"
    sd = load_file(out / "model.safetensors")
    ck = read_checkpoint(src)
    for rec in ck.quantized_layers:
        w = sd[f"{rec.name}.weight"]
        assert w.dtype == torch.bfloat16 and tuple(w.shape) == rec.qweight().shape
        assert torch.equal(w, rec.qweight().dequantize().to(torch.bfloat16))
        assert not any(k.startswith(rec.name + ".") and k != f"{rec.name}.weight" for k in sd)
    for name_ in ck.other:                         # norms copied bit for bit
        assert torch.equal(sd[name_], ck.get_tensor(name_))
    # the result is an unquantized checkpoint our reader reads as such
    dq = read_checkpoint(str(out))
    assert dq.method == "none" and not dq.quantized_layers
    with safe_open(os.path.join(EXP, name + ".safetensors"), "pt") as f:
        for k in f.keys():
            e = f.get_tensor(k)
            torch.testing.assert_close(sd[k + ".weight"][: e.shape[0]].float(), e.float(), rtol=2 ** -7, atol=1e-6)


def test_dequantize_undoes_act_order_and_copies_tokenizer(tmp_path):
    """An act-order GPTQ layer is written with input channels back in the original order."""
    from test_readers import make_gptq
    from safetensors.torch import save_file

    src = tmp_path / "ao"
    src.mkdir()
    qweight, qzeros, scales, g_idx, want = make_gptq(64, 128, 4, 32, True, True, False)
    save_file({"m.proj.qweight": qweight, "m.proj.qzeros": qzeros, "m.proj.scales": scales, "m.proj.g_idx": g_idx,
               "m.norm.weight": torch.ones(8)}, src / "model.safetensors")
    (src / "config.json").write_text(json.dumps({"quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": True, "sym": True,
        "checkpoint_format": "gptq"}}))
    (src / "tokenizer.json").write_text("{}")
    out = tmp_path / "out"
    assert main(["dequantize", str(src), str(out), "--dtype", "float32"]) == 0
    sd = load_file(out / "model.safetensors")
    torch.testing.assert_close(sd["m.proj.weight"], want, rtol=0, atol=0)
    assert torch.equal(sd["m.norm.weight"], torch.ones(8))
    assert (out / "tokenizer.json").exists()


def test_dequantize_gptoss_layout(tmp_path):
    out = tmp_path / "g"
    assert main(["dequantize", os.path.join(FIX, "gptoss-mxfp4"), str(out)]) == 0
    sd = load_file(out / "model.safetensors")
    w = sd["model.layers.0.mlp.experts.gate_up_proj"]
    assert w.shape == (2, 256, 512)                       # [E, K, N] as transformers' GptOss keeps it
    assert sd["model.layers.0.mlp.experts.gate_up_proj_bias"].shape == (2, 512)
    with safe_open(os.path.join(EXP, "gptoss-mxfp4.safetensors"), "pt") as f:
        e = f.get_tensor("model.layers.0.mlp.experts.gate_up_proj.1")
    torch.testing.assert_close(w[1].t()[:64].float(), e, rtol=2 ** -7, atol=0)
