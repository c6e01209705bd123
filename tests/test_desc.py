"""WeightDesc / ActDesc / ScaleSpec: canonical strings round-trip; every invalid combination is a DescError that
names the field at fault."""

from __future__ import annotations

import re

import pytest

from vllm_humming import dtypes as D
from vllm_humming.desc import (ACT_NVFP4, FP8_BLOCK, FP8_CHANNEL, MXFP4, MXINT4, NAMED_FORMATS, NVFP4, ActDesc,
                               DescError, ScaleSpec, WeightDesc, named_format)

WEIGHT_STRINGS = [
    "w:int8", "w:float8_e4m3fn", "w:uint4b8",
    "w:uint4b8,s:g128:bfloat16", "w:uint4b8,s:g32:float16", "w:uint8b128,s:channel:float16",
    "w:int4,s:g64:bfloat16", "w:int8,s:channel:float32", "w:int2,s:g16:float16", "w:int3,s:g256:bfloat16",
    "w:uint4,s:g128:float16,zp:int", "w:uint4,s:g64:bfloat16,zp:float", "w:uint8,s:channel:float32,zp:int",
    "w:uint2,s:g16:float16,zp:int", "w:uint3,s:g64:bfloat16,zp:int", "w:uint1,s:g128:float16,zp:float",
    "w:uint5,s:channel:bfloat16,zp:int", "w:uint7,s:g32:float32,zp:float",
    "w:float4_e2m1,s:g32:float8_e8m0fnu", "w:int4,s:g32:float8_e8m0fnu",
    "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32", "w:float4_e2m1,s:g16:ue4m3,s2:channel:float32",
    "w:float8_e4m3fn,s:b128x128:float32", "w:float8_e4m3fn,s:b64x32:bfloat16,s2:tensor:float32",
    "w:float8_e4m3fn,s:channel:float32", "w:float8_e5m2,s:tensor:float32", "w:float8_e5m2,s:g128:float8_e8m0fnu",
    "w:float6_e3m2,s:g32:float8_e8m0fnu", "w:float6_e2m3,s:g32:float8_e8m0fnu",
    "w:float5_e3m1,s:g128:bfloat16", "w:float8_e2m5,s:channel:bfloat16", "w:float7_e4m2,s:g64:float16",
    "w:float4_e1m2,s:g128:float16", "w:float8_e6m1,s:tensor:float32",
    "w:uint4b8,s:g128:float16,s2:channel:float32", "w:int8,s:tensor:float32",
]


@pytest.mark.parametrize("text", WEIGHT_STRINGS)
def test_weight_canonical_round_trip(text):
    d = WeightDesc.parse(text)
    assert str(d) == text
    assert WeightDesc.parse(str(d)) == d and hash(WeightDesc.parse(str(d))) == hash(d)
    # the same description built from objects
    fields = dict(p.split(":", 1) for p in text.split(","))
    built = WeightDesc(D.parse_dtype(fields["w"]),
                       ScaleSpec.parse(fields["s"]) if "s" in fields else None,
                       ScaleSpec.parse(fields["s2"]) if "s2" in fields else None,
                       fields.get("zp"))
    assert built == d


def test_weight_parse_accepts_aliases_and_spaces():
    d = WeightDesc.parse("w:fp4, s:g32:e8m0")
    assert d == MXFP4 and str(d) == "w:float4_e2m1,s:g32:float8_e8m0fnu"
    assert WeightDesc.parse("w:uint4b8,s:g128:bf16") == WeightDesc("uint4b8", "g128:bfloat16")


@pytest.mark.parametrize("name", sorted(NAMED_FORMATS))
def test_named_formats(name):
    w, a = NAMED_FORMATS[name]
    assert named_format(name) == (w, a) and named_format(name.upper()) == (w, a)
    assert WeightDesc.parse(name) == w
    assert WeightDesc.parse(str(w)) == w and ActDesc.parse(str(a)) == a


def test_named_format_contents():
    assert str(MXFP4) == "w:float4_e2m1,s:g32:float8_e8m0fnu"
    assert str(MXINT4) == "w:int4,s:g32:float8_e8m0fnu"
    assert str(NVFP4) == "w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32"
    assert str(FP8_BLOCK) == "w:float8_e4m3fn,s:b128x128:float32"
    assert str(FP8_CHANNEL) == "w:float8_e4m3fn,s:channel:float32"
    assert str(ACT_NVFP4) == "a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32"
    with pytest.raises(DescError, match="unknown format name 'nvfp5'.*known: "):
        named_format("nvfp5")


ACT_STRINGS = [
    "a:bfloat16", "a:float16",
    "a:float8_e4m3fn,s:token:float32,dynamic", "a:float8_e4m3fn,s:tensor:float32,static",
    "a:float8_e4m3fn,s:tensor:float32,dynamic", "a:float8_e5m2,s:g128:float32,dynamic",
    "a:float8_e5m2,s:tensor:float32,static", "a:int8,s:token:float32,dynamic", "a:int8,s:tensor:float32,static",
    "a:int8,s:g64:float16,dynamic", "a:int4,s:g32:bfloat16,dynamic", "a:int4,s:token:float32,dynamic",
    "a:float4_e2m1,s:g32:float8_e8m0fnu,dynamic", "a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float32",
    "a:float8_e4m3fn,s:g128:float8_e8m0fnu,dynamic",
]


@pytest.mark.parametrize("text", ACT_STRINGS)
def test_act_canonical_round_trip(text):
    a = ActDesc.parse(text)
    assert str(a) == text
    assert ActDesc.parse(str(a)) == a and hash(ActDesc.parse(text)) == hash(a)
    assert a.quantized == (text not in ("a:bfloat16", "a:float16"))


def test_act_defaults():
    assert ActDesc() == ActDesc.parse("a:bfloat16") and not ActDesc().quantized
    assert ActDesc.parse("a:fp8,s:token:fp32") == ActDesc(D.E4M3, ScaleSpec("token", D.FP32), dynamic=True)


def test_num_scale_groups():
    assert WeightDesc.parse("w:int4,s:g128:float16").num_scale_groups(256, 300) == (256, 3)
    assert WeightDesc.parse("w:int4,s:channel:float16").num_scale_groups(256, 300) == (256, 1)
    assert WeightDesc.parse("w:int4,s:tensor:float32").num_scale_groups(256, 300) == (1, 1)
    assert FP8_BLOCK.num_scale_groups(300, 129) == (3, 2)
    assert WeightDesc.parse("w:int4").num_scale_groups(8, 8) == (0, 0)
    assert WeightDesc.parse("w:int4,s:g32:float16").group_size == 32 and FP8_BLOCK.group_size is None
    assert NVFP4.bits == 4 and FP8_CHANNEL.bits == 8


# (description, regex the message must contain: the field at fault)
BAD_WEIGHTS = [
    ("w:float8_e8m0fnu,s:g32:float32", "scale-only"),
    ("w:ue4m3,s:g32:float32", "scale-only"),
    ("w:bfloat16", "float weights have 4..8 bits"),
    ("w:float16,s:channel:float32", "float weights have 4..8 bits"),
    ("w:float32", "float weights have 4..8 bits"),
    ("w:int4,s:g48:float16", "group size 48"),
    ("w:int4,s:g0:float16", "group size 0"),
    ("w:int4,s:g512:float16", "group size 512"),
    ("w:int4,s:channel:int8", "scale dtype"),
    ("w:int4,s:channel:float8_e5m2", "scale dtype"),
    ("w:int4,s:g128:float4_e2m1", "scale dtype"),
    ("w:int4,s:token:float32", "granularity 'token'"),
    ("w:int4,s:row:float32", "granularity 'row'"),
    ("w:float8_e4m3fn,s:b100x128:float32", "block"),
    ("w:float8_e4m3fn,s:b0x128:float32", "block"),
    ("w:float8_e4m3fn,s:b128:float32", "block"),
    ("w:float8_e4m3fn,s:bxx:float32", "block"),
    ("w:float8_e4m3fn,s:block:float32", "block"),
    ("w:int4,s:group:float16", "group scales as g<size>"),
    ("w:int4,s:g128", "scale spec 'g128'"),
    ("w:int4,s:g128:float32:x", "scale spec"),
    ("w:uint4,zp:int", "first-level scale"),
    ("w:uint4,s:g128:float16,zp:maybe", "zero_point"),
    ("w:uint4,zp:maybe", "zero_point"),
    ("w:int4,s:g128:float16,zp:int", "plain unsigned"),
    ("w:uint4b8,s:g128:float16,zp:int", "plain unsigned"),
    ("w:float4_e2m1,s:g32:float16,zp:float", "integer weights only"),
    ("w:uint4,s:tensor:float32,zp:int", "zero points go with channel or group"),
    ("w:uint4,s:b128x128:float32,zp:int", "zero points go with channel or group"),
    ("w:uint4,s:g128:float8_e4m3fn,zp:int", "zero points need a bf16/fp16/fp32 scale"),
    ("w:uint4,s:g32:float8_e8m0fnu,zp:float", "zero points need a bf16/fp16/fp32 scale"),
    ("w:float4_e2m1,s:channel:float8_e8m0fnu", "e8m0"),
    ("w:float4_e2m1,s:b128x128:float8_e8m0fnu", "e8m0"),
    ("w:float4_e2m1,s:tensor:float8_e8m0fnu", "e8m0"),
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:g16:float32", "second-level scale"),
    ("w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:bfloat16", "second-level scale"),
    ("w:float8_e4m3fn,s:b128x128:float32,s2:channel:float32", "per-channel second-level"),
    ("w:float8_e4m3fn,s:tensor:float32,s2:channel:float32", "per-channel second-level"),
    ("w:int4,s2:tensor:float32", "first-level scale"),
    ("w:int9", "weight dtype"),
    ("w:nf4,s:g64:float16", "weight dtype"),
    ("w:int4,s:g128:fp99", "scale dtype"),
    ("s:g128:float16", "no 'w:<dtype>' field"),
    ("w:int4,x:1", "unknown field 'x'"),
    ("w:int4,", "unknown field ''"),
    ("w:int4,w:int8", "'w' is given twice"),
    ("w:uint4,s:g128:float16,zp:int,zp:float", "'zp' is given twice"),
]


@pytest.mark.parametrize("text,field", BAD_WEIGHTS, ids=[b[0] for b in BAD_WEIGHTS])
def test_invalid_weight_descriptions(text, field):
    with pytest.raises(DescError, match=re.escape(field)):
        WeightDesc.parse(text)


BAD_WEIGHT_OBJECTS = [
    (lambda: WeightDesc(D.INT4, ScaleSpec("group", D.FP16)), "group size None"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("block", D.FP32)), "block"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("block", D.FP32, block=(128, 128, 128))), "block"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("channel", D.FP32, group_size=128)), "group_size"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("channel", D.FP32, block=(128, 128))), "block"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("block", D.FP32, block=("a", 2))), "block"),
    (lambda: WeightDesc(D.INT4, ScaleSpec("group", "bogus", group_size=32)), "scale dtype"),
    (lambda: WeightDesc("bogus"), "weight dtype"),
    (lambda: WeightDesc(D.INT4, 3), "scale (s)"),
    (lambda: WeightDesc(D.UINT4, ScaleSpec("group", D.FP16, group_size=64), zero_point="yes"), "zero_point"),
]


@pytest.mark.parametrize("make,field", BAD_WEIGHT_OBJECTS, ids=[b[1] + str(i) for i, b in enumerate(BAD_WEIGHT_OBJECTS)])
def test_invalid_weight_objects(make, field):
    with pytest.raises(DescError, match=re.escape(field)):
        make()


BAD_ACTS = [
    ("a:float32,s:tensor:float32,dynamic", "activations quantize to one of"),
    ("a:uint4,s:token:float32,dynamic", "activations quantize to one of"),
    ("a:float6_e3m2,s:g32:float8_e8m0fnu,dynamic", "activations quantize to one of"),
    ("a:float8_e4m3fn", "need a scale"),
    ("a:bfloat16,s:tensor:float32", "take no scale"),
    ("a:float16,s:tensor:float32,static", "take no scale"),
    ("a:bfloat16,s2:tensor:float32", "take no scale"),
    ("a:int8,s:token:float32,static", "static activation scales are per tensor"),
    ("a:int8,s:g128:float32,static", "static activation scales are per tensor"),
    ("a:int8,s:g100:float32,dynamic", "group size 100"),
    ("a:int8,s:channel:float32,dynamic", "granularity 'channel'"),
    ("a:int8,s:b128x128:float32,dynamic", "granularity 'block'"),
    ("a:float4_e2m1,s:token:float8_e8m0fnu,dynamic", "e8m0"),
    ("a:float4_e2m1,s:tensor:float8_e8m0fnu,dynamic", "e8m0"),
    ("a:int8,s:token:int8,dynamic", "scale dtype"),
    ("a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:channel:float32", "second-level activation scale (s2)"),
    ("a:float4_e2m1,s:g16:float8_e4m3fn,dynamic,s2:tensor:float16", "second-level activation scale (s2)"),
    ("a:float8_e4m3fn,s:tensor:float32,static,s2:tensor:float32", "second-level activation scale (s2) goes with"),
    ("a:float8_e4m3fn,s:token:float32,dynamic,s2:tensor:float32", "second-level activation scale (s2) goes with"),
    ("a:float8_e4m3fn,s:tensor:float32,dynamic,static", "one of 'dynamic' or 'static'"),
    ("a:float8_e4m3fn,s:tensor:float32,dynamic:yes", "'dynamic' takes no value"),
    ("a:float8_e4m3fn,s:tensor:float32,bogus", "unknown field 'bogus'"),
    ("a:fp99", "activation dtype"),
    ("a:float8_e4m3fn,a:int8,s:token:float32", "'a' is given twice"),
    ("a:int8,s:token", "scale spec 'token'"),
]


@pytest.mark.parametrize("text,field", BAD_ACTS, ids=[b[0] for b in BAD_ACTS])
def test_invalid_act_descriptions(text, field):
    with pytest.raises(DescError, match=re.escape(field)):
        ActDesc.parse(text)


def test_desc_error_messages_quote_the_description():
    with pytest.raises(DescError) as ei:
        WeightDesc.parse("w:int4,s:g48:float16")
    assert "w:int4,s:g48:float16" in str(ei.value) and "16, 32, 64, 128, 256" in str(ei.value)
    with pytest.raises(DescError) as ei:
        ActDesc.parse("a:int8,s:token:float32,static")
    assert "a:int8,s:token:float32,static" in str(ei.value)


def test_descriptions_are_frozen_and_hashable():
    d = WeightDesc.parse("w:uint4b8,s:g128:bfloat16")
    with pytest.raises(Exception):
        d.dtype = D.INT4
    cache = {d: 1, NVFP4: 2, ActDesc.parse("a:int8,s:token:float32,dynamic"): 3}
    assert cache[WeightDesc.parse("w:uint4b8,s:g128:bfloat16")] == 1
    assert cache[WeightDesc.parse("nvfp4")] == 2
