"""Checkpoint readers: every fixture's dequantized weights equal what the writing tool itself reconstructs
(tests/fixtures/expected/, computed once by tools/make_fixtures/), are close to the bf16 originals, and bad
checkpoints fail with errors naming the layer and the tensor."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from vllm_humming.desc import ScaleSpec, WeightDesc
from vllm_humming.dtypes import E4M3, FP32
from vllm_humming.packing import pack_codes, unpack_codes
from vllm_humming.qweight import QuantizedWeight
from vllm_humming.quant_config import formats as F
from vllm_humming.quant_config.reader import CheckpointError, read_checkpoint, write_native_checkpoint

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
EXP = os.path.join(FIX, "expected")
FIXTURES = sorted(fn[:-12] for fn in os.listdir(EXP) if fn.endswith(".safetensors") and not fn.endswith("bf16.safetensors"))


def expected(name):
    with safe_open(os.path.join(EXP, name + ".safetensors"), "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata()


def ours(ckpt, key):
    if key in ckpt.layers:
        return ckpt.layers[key].qweight()
    base, e = key.rsplit(".", 1)          # gpt-oss fused experts: "<experts>.<proj>.<e>"
    return ckpt.layers[base].qweight()[int(e)]


def dense(qw):
    w = qw.dequantize()
    if qw.k_perm is not None:
        out = torch.empty_like(w)
        out[:, qw.k_perm] = w
        w = out
    return w


# ------------------------------------------------------------------------------------------- tool agreement
def test_every_fixture_has_an_expected_file():
    names = {d for d in os.listdir(FIX) if os.path.isdir(os.path.join(FIX, d)) and d != "expected"}
    assert names and names == set(FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_dequant_equals_tool_reconstruction(name):
    ckpt = read_checkpoint(os.path.join(FIX, name))
    exp, meta = expected(name)
    assert meta["tool"]
    for key, e in exp.items():
        w = dense(ours(ckpt, key))[: e.shape[0]]
        assert w.shape == e.shape, key
        # the tools compute in their storage dtype: compare after rounding ours to it (1 ulp slack for fp4 two-level)
        torch.testing.assert_close(w.to(e.dtype).float(), e.float(), rtol=2 ** -8, atol=1e-7, msg=f"{name} {key}")


LLAMA = [n for n in FIXTURES if not n.startswith(("moe", "gptoss"))]


@pytest.mark.parametrize("name", LLAMA)
def test_close_to_bf16_original(name):
    ckpt = read_checkpoint(os.path.join(FIX, name))
    orig, _ = expected("llama-bf16")
    for key, o in orig.items():
        w = dense(ours(ckpt, key))[: o.shape[0]]
        rel = ((w - o.float()).norm() / o.float().norm()).item()
        bits = ckpt.layers[key].weight_desc.bits
        bound = {2: 0.75, 3: 0.35, 4: 0.2, 8: 0.05}[bits]
        assert rel < bound, (name, key, rel)
        # and not trivially close: a 4-bit weight is not the original
        assert rel > 1e-4


def test_moe_close_to_original():
    ckpt = read_checkpoint(os.path.join(FIX, "moe-ct-w4a16"))
    orig, _ = expected("moe-bf16")
    for key, o in orig.items():
        w = dense(ours(ckpt, key))[: o.shape[0]]
        assert ((w - o.float()).norm() / o.float().norm()).item() < 0.2


# ------------------------------------------------------------------------------------------- descriptions
@pytest.mark.parametrize("name,layer,weight,act", [
    ("gptq-int4-g128", "model.layers.0.self_attn.q_proj", "w:uint4b8,s:g128:float16", "a:bfloat16"),
    ("awq-int4-g128", "model.layers.0.self_attn.q_proj", "w:uint4,s:g128:float16,zp:int", "a:bfloat16"),
    ("ct-w4a16-g128", "model.layers.0.mlp.down_proj", "w:uint4b8,s:g128:bfloat16", "a:bfloat16"),
    ("ct-w4afp8-packed", "model.layers.0.mlp.down_proj", "w:uint4b8,s:g128:bfloat16",
     "a:float8_e4m3fn,s:token:float32,dynamic"),
    ("ct-w8a8-int8", "model.layers.0.mlp.down_proj", "w:int8,s:channel:bfloat16", "a:int8,s:token:float32,dynamic"),
    ("ct-fp8-dynamic", "model.layers.0.mlp.down_proj", "w:float8_e4m3fn,s:channel:bfloat16",
     "a:float8_e4m3fn,s:token:float32,dynamic"),
    ("ct-w4a16-asym-g64", "model.layers.0.mlp.down_proj", "w:uint4,s:g64:bfloat16,zp:int", "a:bfloat16"),
    ("ct-w3a16-g128", "model.layers.0.mlp.down_proj", "w:uint3b4,s:g128:bfloat16", "a:bfloat16"),
    ("ct-fp8-block", "model.layers.0.mlp.down_proj", "w:float8_e4m3fn,s:b128x128:bfloat16",
     "a:float8_e4m3fn,s:g128:float32,dynamic"),
    ("fp8-block-deepseek", "model.layers.0.mlp.down_proj", "w:float8_e4m3fn,s:b128x128:float32",
     "a:float8_e4m3fn,s:g128:float32,dynamic"),
    ("ct-mxfp4a16", "model.layers.0.mlp.down_proj", "w:float4_e2m1,s:g32:float8_e8m0fnu", "a:bfloat16"),
    ("gptoss-mxfp4", "model.layers.0.mlp.experts.gate_up_proj", "w:float4_e2m1,s:g32:float8_e8m0fnu", "a:bfloat16"),
])
def test_descriptions(name, layer, weight, act):
    rec = read_checkpoint(os.path.join(FIX, name)).layers[layer]
    assert rec.kind == "quantized"
    assert str(rec.weight_desc) == weight
    assert str(rec.act_desc) == act


@pytest.mark.parametrize("name", ["ct-nvfp4", "modelopt-nvfp4"])
def test_nvfp4_global_scales_are_multipliers(name):
    """CT stores weight/input global scales inverted (divisors); ModelOpt stores multipliers.  Both fixtures hold the
    same numbers, so the records must agree exactly."""
    rec = read_checkpoint(os.path.join(FIX, name)).layers["model.layers.0.self_attn.k_proj"]
    qw = rec.qweight()
    assert str(qw.desc) == "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32"
    assert rec.act_desc.scale2 is not None
    other = read_checkpoint(os.path.join(FIX, "modelopt-nvfp4" if name == "ct-nvfp4" else "ct-nvfp4"))
    qo = other.layers["model.layers.0.self_attn.k_proj"].qweight()
    assert torch.equal(qw.qweight, qo.qweight) and torch.equal(qw.scale, qo.scale)
    torch.testing.assert_close(qw.scale2, qo.scale2, rtol=1e-6, atol=0)
    s_in = rec.act_tensors()["input_scale"]
    assert 1e-4 < float(s_in) < 1e-2        # amax 4 / (6 * 448): a multiplier, not its inverse (~672)


def test_gptoss_experts_and_bias():
    ckpt = read_checkpoint(os.path.join(FIX, "gptoss-mxfp4"))
    rec = ckpt.layers["model.layers.0.mlp.experts.gate_up_proj"]
    assert rec.num_experts == 2
    qws = rec.qweight()
    assert [q.shape for q in qws] == [(512, 256), (512, 256)]
    assert qws[1].bias is not None and qws[1].bias.shape == (512,)
    assert ckpt.layers["model.layers.0.mlp.router"].kind == "unquantized"
    assert "modules_to_not_convert" in ckpt.layers["model.layers.0.mlp.router"].reason


def test_ignore_lists_stay_unquantized():
    moe = read_checkpoint(os.path.join(FIX, "moe-ct-w4a16"))
    gate = moe.layers["model.layers.0.mlp.gate"]
    assert gate.kind == "unquantized" and "ignore" in gate.reason
    assert set(gate.tensors) == {"weight"}
    assert sum(1 for r in moe.layers.values() if r.kind == "quantized") == 10  # q,k,v,o + 2 experts x 3


def test_ct_regex_ignore_and_awq_modules_to_not_convert(tmp_path):
    src = os.path.join(FIX, "ct-w4a16-g128")
    dst = tmp_path / "ct"
    shutil.copytree(src, dst)
    sd = load_file(dst / "model.safetensors")
    for suf in ("weight_packed", "weight_scale", "weight_shape"):      # k_proj left in bf16, as an ignored layer is
        del sd[f"model.layers.0.self_attn.k_proj.{suf}"]
    sd["model.layers.0.self_attn.k_proj.weight"] = torch.zeros(128, 256, dtype=torch.bfloat16)
    save_file(sd, dst / "model.safetensors")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["ignore"] = ["lm_head", "re:.*self_attn\\.k_proj$"]
    (dst / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(dst))
    assert ck.layers["model.layers.0.self_attn.q_proj"].kind == "quantized"
    k = ck.layers["model.layers.0.self_attn.k_proj"]
    assert k.kind == "unquantized" and "ignore" in k.reason
    # an ignored module that nevertheless holds quantized tensors: config and tensors disagree -> clear error
    cfg["quantization_config"]["ignore"] = ["re:.*self_attn\\.[kv]_proj$"]
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"layer 'model.layers.0.self_attn.v_proj'.*ignore list.*weight_packed"):
        read_checkpoint(str(dst))

    awq = tmp_path / "awq"
    shutil.copytree(os.path.join(FIX, "awq-int4-g128"), awq)
    sd = load_file(awq / "model.safetensors")
    for suf in ("qweight", "qzeros", "scales"):
        del sd[f"model.layers.0.mlp.down_proj.{suf}"]
    sd["model.layers.0.mlp.down_proj.weight"] = torch.zeros(256, 512, dtype=torch.bfloat16)
    save_file(sd, awq / "model.safetensors")
    cfg = json.loads((awq / "config.json").read_text())
    cfg["quantization_config"]["modules_to_not_convert"] = ["mlp.down_proj"]
    (awq / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(awq))
    assert ck.layers["model.layers.0.mlp.down_proj"].reason == "in modules_to_not_convert"
    assert len(ck.quantized_layers) == 4


def test_gptq_dynamic_exclusion(tmp_path):
    dst = tmp_path / "g"
    shutil.copytree(os.path.join(FIX, "gptq-int4-g128"), dst)
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["dynamic"] = {"-:.*down_proj": {}, "+:.*k_proj": {"group_size": 64}}
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"down_proj.*excluded by the GPTQ 'dynamic' config.*qweight"):
        read_checkpoint(str(dst))
    cfg["quantization_config"]["dynamic"] = {"+:.*k_proj": {"group_size": 64}}
    (dst / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(dst))      # k_proj's scales are g128: the override makes them mis-shaped
    with pytest.raises(CheckpointError, match=r"k_proj.*'scales'.*shape"):
        ck.layers["model.layers.0.self_attn.k_proj"].qweight()
    assert ck.layers["model.layers.0.self_attn.q_proj"].weight_desc.group_size == 128


# ----------------------------------------------------------------------------- synthetic GPTQ (all bit widths)
def autogptq_pack_rows(intw: torch.Tensor, bits: int) -> torch.Tensor:
    """AutoGPTQ's documented pack loop along dim 0 of [R, C] ints (10-1-10-1-10 word scheme for 3 bits),
    written out word by word -- independent of vllm_humming.packing."""
    iw = intw.to(torch.int64)
    rows = iw.shape[0] * bits // 32
    q = torch.zeros(rows, iw.shape[1], dtype=torch.int64)
    i = row = 0
    while row < rows:
        if bits in (2, 4, 8):
            for j in range(i, i + 32 // bits):
                q[row] |= iw[j] << (bits * (j - i))
            i += 32 // bits
            row += 1
        else:
            for j in range(i, i + 10):
                q[row] |= iw[j] << (3 * (j - i))
            i += 10
            q[row] |= iw[i] << 30
            row += 1
            q[row] |= (iw[i] >> 2) & 1
            i += 1
            for j in range(i, i + 10):
                q[row] |= iw[j] << (3 * (j - i) + 1)
            i += 10
            q[row] |= iw[i] << 31
            row += 1
            q[row] |= (iw[i] >> 1) & 0x3
            i += 1
            for j in range(i, i + 10):
                q[row] |= iw[j] << (3 * (j - i) + 2)
            i += 10
            row += 1
    q &= 0xFFFFFFFF
    return torch.where(q >= 2 ** 31, q - 2 ** 32, q).to(torch.int32)


def make_gptq(n, k, bits, gs, sym, act_order, v2, seed=0, zero_at_min=False):
    g = torch.Generator().manual_seed(seed)
    maxq = 2 ** bits - 1
    ngroups = k // (gs if gs > 0 else k)
    w_int = torch.randint(0, maxq + 1, (k, n), generator=g)
    scales = (torch.rand(ngroups, n, generator=g) * 0.01 + 0.001).to(torch.float16)
    if sym:
        zeros = torch.full((ngroups, n), 2 ** (bits - 1))
    else:
        zeros = torch.randint(0, maxq + 1, (ngroups, n), generator=g)
        if zero_at_min:
            zeros[0, :] = 0      # the v1 "zero - 1" of 0 is -1 -> stored as all ones
    if act_order:
        perm = torch.randperm(k, generator=g)
        g_idx = torch.empty(k, dtype=torch.int32)
        g_idx[perm] = (torch.arange(k) // (gs if gs > 0 else k)).to(torch.int32)
    else:
        g_idx = (torch.arange(k) // (gs if gs > 0 else k)).to(torch.int32)
    stored = zeros if v2 else (zeros - 1) & maxq
    qweight = autogptq_pack_rows(w_int, bits)
    qzeros = autogptq_pack_rows(stored.t(), bits).t().contiguous()   # zeros packed along N
    want = (scales[g_idx.long()].float() * (w_int - zeros[g_idx.long()]).float()).t()   # [N, K]
    return qweight, qzeros, scales, g_idx, want


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("sym,act_order,v2,gs", [(True, False, False, 32), (False, False, True, 64),
                                                 (True, True, False, 32), (False, True, False, 32),
                                                 (False, False, False, -1)])
def test_gptq_synthetic(bits, sym, act_order, v2, gs):
    n, k = 96 if bits != 3 else 32 * 3, 128
    qweight, qzeros, scales, g_idx, want = make_gptq(n, k, bits, gs, sym, act_order, v2, zero_at_min=not sym)
    qw = F.gptq_to_qweight(qweight, qzeros, scales, g_idx, bits=bits, group_size=gs, sym=sym, desc_act=act_order,
                           checkpoint_format="gptq_v2" if v2 else "gptq", name="layer.x")
    if sym:
        assert qw.desc.zero_point is None and qw.desc.dtype.bias == 2 ** (bits - 1)
    else:
        assert qw.desc.zero_point == "int"
    assert (qw.k_perm is not None) == act_order
    assert qw.desc.scale.granularity == ("channel" if gs == -1 else "group")
    torch.testing.assert_close(dense(qw), want, rtol=0, atol=0)
    if act_order:     # storage groups are contiguous: column j belongs to group j // gs
        assert torch.equal(g_idx[qw.k_perm].long(), torch.arange(k) // gs)
        x = torch.randn(3, k)
        from vllm_humming.reference import reference_gemm
        torch.testing.assert_close(reference_gemm(x, qw), x @ want.t(), rtol=1e-4, atol=1e-4)


def test_gptq_sym_flag_but_nonmidpoint_zeros_keeps_zero_points():
    qweight, qzeros, scales, g_idx, want = make_gptq(64, 64, 4, 32, False, False, False)
    qw = F.gptq_to_qweight(qweight, qzeros, scales, g_idx, bits=4, group_size=32, sym=True, desc_act=False)
    assert qw.desc.zero_point == "int"
    torch.testing.assert_close(qw.dequantize(), want, rtol=0, atol=0)


def test_gptq_bad_g_idx_and_bits():
    qweight, qzeros, scales, g_idx, _ = make_gptq(64, 64, 4, 32, True, False, False)
    bad = torch.zeros(64, dtype=torch.int32)
    bad[:40] = 1         # group 1 gets 40 channels, group 0 gets 24
    with pytest.raises(F.FormatError, match=r"layer 'L'.*group_size=32"):
        F.gptq_to_qweight(qweight, qzeros, scales, bad, bits=4, group_size=32, name="L")
    with pytest.raises(F.FormatError, match=r"layer 'L'.*bit width 5.*2, 3, 4, 8"):
        F.gptq_to_qweight(qweight, qzeros, scales, g_idx, bits=5, group_size=32, name="L")
    with pytest.raises(F.FormatError, match=r"layer 'L'.*'scales'.*shape"):
        F.gptq_to_qweight(qweight, qzeros, scales[:1], g_idx, bits=4, group_size=32, name="L")
    with pytest.raises(F.FormatError, match=r"layer 'L'.*group size 512"):
        q, z, s, gi, _ = make_gptq(64, 1024, 4, 512, True, False, False)
        F.gptq_to_qweight(q, z, s, gi, bits=4, group_size=512, name="L")


# ---------------------------------------------------------------------------------------------- synthetic AWQ
def test_awq_synthetic_interleave():
    g = torch.Generator().manual_seed(1)
    n, k, gs = 64, 128, 64
    w_int = torch.randint(0, 16, (k, n), generator=g)
    zeros = torch.randint(0, 16, (k // gs, n), generator=g)
    scales = (torch.rand(k // gs, n, generator=g) * 0.01).to(torch.float16)

    def pack(t):   # AutoAWQ GEMM: nibble i of word c holds column 8c + [0,2,4,6,1,3,5,7][i]
        out = torch.zeros(t.shape[0], t.shape[1] // 8, dtype=torch.int64)
        for c in range(t.shape[1] // 8):
            for i, o in enumerate([0, 2, 4, 6, 1, 3, 5, 7]):
                out[:, c] |= t[:, 8 * c + o].to(torch.int64) << (4 * i)
        return torch.where(out >= 2 ** 31, out - 2 ** 32, out).to(torch.int32)

    qw = F.awq_to_qweight(pack(w_int), pack(zeros), scales, bits=4, group_size=gs, name="a")
    want = (scales.repeat_interleave(gs, 0).float() * (w_int - zeros.repeat_interleave(gs, 0)).float()).t()
    torch.testing.assert_close(qw.dequantize(), want, rtol=0, atol=0)


# --------------------------------------------------------------------------------------------- fused shards
def test_concat_shards_qkv_matches_individual():
    ck = read_checkpoint(os.path.join(FIX, "gptq-int4-g128"))
    names = [f"model.layers.0.self_attn.{p}_proj" for p in "qkv"]
    shards = [ck.layers[n].qweight() for n in names]
    fused = F.concat_shards(shards, names, name="qkv_proj")
    assert fused.shape == (512, 256)
    torch.testing.assert_close(fused.dequantize(), torch.cat([s.dequantize() for s in shards]), rtol=0, atol=0)


def test_concat_shards_per_tensor_scales_become_channel():
    ck = read_checkpoint(os.path.join(FIX, "ct-fp8-dynamic"))
    parts = []
    for i, p in enumerate("qkv"):
        qw = ck.layers[f"model.layers.0.self_attn.{p}_proj"].qweight()
        # a per-tensor-scaled fp8 shard (as FP8 per-tensor checkpoints store them), different scale per shard
        parts.append(QuantizedWeight(WeightDesc(E4M3, ScaleSpec("tensor", FP32)), qw.shape, qw.qweight,
                                     torch.tensor([[0.01 * (i + 1)]]), name=p))
    fused = F.concat_shards(parts, ["q", "k", "v"])
    assert fused.desc.scale.granularity == "channel"
    torch.testing.assert_close(fused.dequantize(), torch.cat([p.dequantize() for p in parts]))
    # same per-tensor scale: stays per tensor
    same = [QuantizedWeight(p.desc, p.shape, p.qweight, torch.tensor([[0.5]]), name=p.name) for p in parts]
    assert F.concat_shards(same).desc.scale.granularity == "tensor"


def test_concat_shards_errors_name_the_shards():
    ck = read_checkpoint(os.path.join(FIX, "ct-nvfp4"))
    a = ck.layers["model.layers.0.self_attn.k_proj"].qweight()
    e4 = WeightDesc(E4M3, ScaleSpec("tensor", E4M3))
    x = QuantizedWeight(e4, (16, 32), torch.zeros(16, 8, dtype=torch.int32), torch.tensor([[56]], dtype=torch.uint8))
    y = QuantizedWeight(e4, (16, 32), torch.zeros(16, 8, dtype=torch.int32), torch.tensor([[60]], dtype=torch.uint8))
    with pytest.raises(F.FormatError, match=r"'gate'.*'up'.*per-tensor scales"):
        F.concat_shards([x, y], ["gate", "up"], name="gate_up")
    g = read_checkpoint(os.path.join(FIX, "gptq-int4-g128")).layers["model.layers.0.self_attn.k_proj"].qweight()
    with pytest.raises(F.FormatError, match=r"different descriptions.*'k'.*'v'"):
        F.concat_shards([g, a], ["k", "v"])
    # nvfp4 shards with different global scales: second-level scale becomes per channel
    b = QuantizedWeight(a.desc, a.shape, a.qweight, a.scale, None, a.scale2 * 2, name="v")
    f = F.concat_shards([a, b], ["k", "v"])
    assert f.desc.scale2.granularity == "channel"
    torch.testing.assert_close(f.dequantize(), torch.cat([a.dequantize(), b.dequantize()]))


# -------------------------------------------------------------------------------------------- native format
def test_native_round_trip(tmp_path):
    qweight, qzeros, scales, g_idx, want = make_gptq(64, 128, 3, 32, False, True, False)
    act_order = F.gptq_to_qweight(qweight, qzeros, scales, g_idx, bits=3, group_size=32, sym=False, desc_act=True)
    nv = read_checkpoint(os.path.join(FIX, "ct-nvfp4")).layers["model.layers.0.self_attn.k_proj"]
    layers = {"model.a": (act_order, None), "model.b": (nv.qweight(), nv.act_desc)}
    write_native_checkpoint(str(tmp_path), layers, {"model.norm.weight": torch.ones(4)}, {"model_type": "llama"})
    ck = read_checkpoint(str(tmp_path))
    assert ck.method == "humming"
    a, b = ck.layers["model.a"].qweight(), ck.layers["model.b"].qweight()
    assert a.desc == act_order.desc and torch.equal(a.k_perm, act_order.k_perm)
    torch.testing.assert_close(dense(a), want, rtol=0, atol=0)
    assert ck.layers["model.b"].act_desc == nv.act_desc
    torch.testing.assert_close(b.dequantize(), nv.qweight().dequantize(), rtol=0, atol=0)
    assert "model.norm.weight" in ck.other


# ----------------------------------------------------------------------------------------------- file errors
def _copy(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(os.path.join(FIX, name), dst)
    return dst


def test_sharded_checkpoint(tmp_path):
    src = os.path.join(FIX, "awq-int4-g128")
    sd = load_file(os.path.join(src, "model.safetensors"))
    keys = sorted(sd)
    half = {k: sd[k] for k in keys[: len(keys) // 2]}, {k: sd[k] for k in keys[len(keys) // 2:]}
    dst = tmp_path / "sharded"
    dst.mkdir()
    shutil.copyfile(os.path.join(src, "config.json"), dst / "config.json")
    wmap = {}
    for i, part in enumerate(half):
        fn = f"model-0000{i + 1}-of-00002.safetensors"
        save_file(part, dst / fn)
        wmap.update({k: fn for k in part})
    (dst / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    a, b = read_checkpoint(src), read_checkpoint(str(dst))
    assert sorted(a.layers) == sorted(b.layers)
    for n in a.layers:
        if a.layers[n].kind == "quantized":
            assert torch.equal(a.layers[n].qweight().qweight, b.layers[n].qweight().qweight)
    # a shard listed in the index but missing
    os.remove(dst / "model-00002-of-00002.safetensors")
    with pytest.raises(CheckpointError, match="missing"):
        read_checkpoint(str(dst))


def test_unknown_quant_method(tmp_path):
    dst = _copy(tmp_path, "awq-int4-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["quant_method"] = "bitsandbytes"
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"unknown quant_method 'bitsandbytes'.*supported: gptq, awq"):
        read_checkpoint(str(dst))


def test_unsupported_bits_and_group_size_name_the_layer(tmp_path):
    dst = _copy(tmp_path, "gptq-int4-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["bits"] = 5
    (dst / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(dst))
    with pytest.raises(CheckpointError, match=r"layer 'model.layers.0.mlp.down_proj'.*bit width 5"):
        ck.layers["model.layers.0.mlp.down_proj"].qweight()
    dst = _copy(tmp_path, "ct-w4a16-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["config_groups"]["group_0"]["weights"]["num_bits"] = 9
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"layer 'model.layers.0.mlp.down_proj'.*num_bits 9"):
        read_checkpoint(str(dst)).layers["model.layers.0.mlp.down_proj"].weight_desc


def test_missing_and_misshaped_tensors_name_layer_and_tensor(tmp_path):
    dst = _copy(tmp_path, "gptq-int4-g128")
    sd = load_file(dst / "model.safetensors")
    del sd["model.layers.0.self_attn.q_proj.qzeros"]
    sd["model.layers.0.self_attn.k_proj.scales"] = sd["model.layers.0.self_attn.k_proj.scales"][:, :64].contiguous()
    save_file(sd, dst / "model.safetensors")
    ck = read_checkpoint(str(dst))
    with pytest.raises(CheckpointError, match=r"layer 'model.layers.0.self_attn.q_proj'.*qzeros is missing"):
        ck.layers["model.layers.0.self_attn.q_proj"].qweight()
    with pytest.raises(CheckpointError, match=r"layer 'model.layers.0.self_attn.k_proj'.*'(scales|qzeros)'.*shape"):
        ck.layers["model.layers.0.self_attn.k_proj"].qweight()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "short", "offsets"])
def test_corrupt_safetensors_header(tmp_path, damage):
    dst = _copy(tmp_path, "ct-w4a16-g128")
    p = dst / "model.safetensors"
    raw = p.read_bytes()
    if damage == "garbage":
        p.write_bytes(raw[:8] + b"{not json" + raw[17:])
    elif damage == "truncated":
        p.write_bytes(raw[: len(raw) // 2])
    elif damage == "offsets":        # a header whose first tensor claims one byte too many
        import struct
        n = struct.unpack("<Q", raw[:8])[0]
        h = json.loads(raw[8:8 + n])
        first = next(k for k in h if k != "__metadata__")
        h[first]["shape"] = [h[first]["shape"][0] + 1] + h[first]["shape"][1:]
        hb = json.dumps(h).encode()
        hb += b" " * ((8 - len(hb) % 8) % 8)
        p.write_bytes(struct.pack("<Q", len(hb)) + hb + raw[8 + n:])
    else:
        p.write_bytes(b"\x01\x02")
    with pytest.raises(CheckpointError, match=r"model.safetensors: corrupt safetensors"):
        read_checkpoint(str(dst))


def test_unsupported_formats_are_refused(tmp_path):
    dst = _copy(tmp_path, "gptq-int4-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["checkpoint_format"] = "gptq_p"
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"checkpoint_format 'gptq_p' is not supported"):
        read_checkpoint(str(dst))
    dst = _copy(tmp_path, "awq-int4-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["version"] = "gemv"
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"AWQ version 'gemv'"):
        read_checkpoint(str(dst))


def test_quantize_config_json_fallback(tmp_path):
    dst = _copy(tmp_path, "gptq-int4-g128")
    cfg = json.loads((dst / "config.json").read_text())
    del cfg["quantization_config"]
    (dst / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(dst))
    assert ck.method == "gptq" and len(ck.quantized_layers) == 5


# -------------------------------------------------------------------------------------------- converters only
def test_ct_pack_quantized_any_k_and_asym_zero_layout():
    """Converters work on tensors alone (the vLLM plugin path) for odd K, zero points packed along N."""
    g = torch.Generator().manual_seed(3)
    n, k, gs = 40, 96, 32
    q = torch.randint(-8, 8, (n, k), generator=g)
    zp = torch.randint(-8, 8, (n, k // gs), generator=g)
    scale = torch.rand(n, k // gs, generator=g).to(torch.bfloat16)
    packed = pack_codes((q + 8).to(torch.uint8), 4)
    zpacked = pack_codes((zp + 8).t().to(torch.uint8), 4).t().contiguous()       # [ceil(N/8), G]
    qw = F.ct_pack_quantized_to_qweight(packed, scale, torch.tensor([n, k]), zpacked, num_bits=4, group_size=gs,
                                        strategy="group", symmetric=False, name="x")
    want = (q - zp.repeat_interleave(gs, 1)).float() * scale.float().repeat_interleave(gs, 1)
    torch.testing.assert_close(qw.dequantize(), want, rtol=0, atol=0)


def test_fp8_block_odd_shapes_and_bytes_view():
    w = (torch.randn(200, 136) * 0.1).to(torch.float8_e4m3fn)
    s = torch.rand(2, 2) + 0.5
    qw = F.fp8_block_to_qweight(w, s, block=(128, 128), name="f")
    want = w.float() * s.repeat_interleave(128, 0)[:200].repeat_interleave(128, 1)[:, :136]
    torch.testing.assert_close(qw.dequantize(), want, rtol=0, atol=0)
    with pytest.raises(F.FormatError, match=r"layer 'f'.*'weight_scale_inv'.*\[2, 2\]"):
        F.fp8_block_to_qweight(w, torch.rand(1, 2), block=(128, 128), name="f")


def test_ct_actorder_group_g_idx(tmp_path):
    """compressed-tensors actorder='group' stores weight_g_idx: codes stay in input order, groups by g_idx."""
    dst = _copy(tmp_path, "ct-w4a16-g128")
    sd = load_file(dst / "model.safetensors")
    mod = "model.layers.0.mlp.down_proj"
    n, k = [int(v) for v in sd[f"{mod}.weight_shape"]]
    codes_sorted = unpack_codes(sd[f"{mod}.weight_packed"], 4, k)        # group j // 128 for storage column j
    perm = torch.randperm(k, generator=torch.Generator().manual_seed(5))
    g_idx = torch.empty(k, dtype=torch.int32)
    g_idx[perm] = (torch.arange(k) // 128).to(torch.int32)
    codes_orig = torch.empty_like(codes_sorted)
    codes_orig[:, perm] = codes_sorted                                    # input channel perm[j] holds column j
    sd[f"{mod}.weight_packed"] = pack_codes(codes_orig, 4)
    sd[f"{mod}.weight_g_idx"] = g_idx
    save_file(sd, dst / "model.safetensors")
    ref = read_checkpoint(os.path.join(FIX, "ct-w4a16-g128")).layers[mod].qweight().dequantize()
    qw = read_checkpoint(str(dst)).layers[mod].qweight()
    assert qw.k_perm is not None
    want = torch.empty_like(ref)
    want[:, perm] = ref
    torch.testing.assert_close(dense(qw), want, rtol=0, atol=0)


def test_modelopt_fp8_and_static_activation_scales(tmp_path):
    g = torch.Generator().manual_seed(2)
    w = (torch.randn(64, 128, generator=g) * 0.2).to(torch.float8_e4m3fn)
    save_file({"m.proj.weight": w, "m.proj.weight_scale": torch.tensor(0.03), "m.proj.input_scale": torch.tensor(0.5),
               "lm_head.weight": torch.zeros(8, 128, dtype=torch.bfloat16)}, tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"]}}))
    ck = read_checkpoint(str(tmp_path))
    rec = ck.layers["m.proj"]
    assert ck.method == "modelopt"
    assert str(rec.weight_desc) == "w:float8_e4m3fn,s:tensor:float32"
    assert str(rec.act_desc) == "a:float8_e4m3fn,s:tensor:float32,static"
    assert float(rec.act_tensors()["input_scale"]) == 0.5
    torch.testing.assert_close(rec.qweight().dequantize(), w.float() * 0.03, rtol=0, atol=0)
    assert ck.layers["lm_head"].kind == "unquantized"


def test_ct_static_per_tensor_input_scale(tmp_path):
    dst = _copy(tmp_path, "ct-w8a8-int8")
    cfg = json.loads((dst / "config.json").read_text())
    ia = cfg["quantization_config"]["config_groups"]["group_0"]["input_activations"]
    ia.update(strategy="tensor", dynamic=False)
    (dst / "config.json").write_text(json.dumps(cfg))
    ck = read_checkpoint(str(dst))
    rec = ck.layers["model.layers.0.mlp.down_proj"]
    assert str(rec.act_desc) == "a:int8,s:tensor:float32,static"
    with pytest.raises(CheckpointError, match=r"down_proj.*input_scale is missing"):
        rec.act_tensors()
    sd = load_file(dst / "model.safetensors")
    sd["model.layers.0.mlp.down_proj.input_scale"] = torch.tensor([0.25], dtype=torch.bfloat16)
    save_file(sd, dst / "model.safetensors")
    rec = read_checkpoint(str(dst)).layers["model.layers.0.mlp.down_proj"]
    assert rec.act_tensors()["input_scale"].tolist() == [0.25]
    assert "input_scale" in rec.tensors


def test_ct_non_compressed_status_refused(tmp_path):
    dst = _copy(tmp_path, "ct-w4a16-g128")
    cfg = json.loads((dst / "config.json").read_text())
    cfg["quantization_config"]["quantization_status"] = "frozen"
    (dst / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"quantization_status 'frozen'"):
        read_checkpoint(str(dst))
