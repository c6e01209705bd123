"""Read a quantized checkpoint folder into per-layer records with our descriptions and canonical tensors.

    ckpt = read_checkpoint("path/to/model")           # parses configs and safetensors headers only
    for rec in ckpt.layers.values():
        print(rec.name, rec.kind, rec.weight_desc, rec.act_desc, rec.tensors)
        qw = rec.qweight()                              # QuantizedWeight, built on first use (reads the tensors)

Where the quantization config comes from, in order: ``config.json`` ``quantization_config``, ``quantize_config.json``
(GPTQ tools), ``hf_quant_config.json`` (NVIDIA ModelOpt).  Supported ``quant_method`` values: gptq, awq,
compressed-tensors, modelopt (NVFP4 / FP8), fp8 (DeepSeek-style block FP8 / HF fine-grained FP8), mxfp4 (gpt-oss) and
humming (our own format, below).  Tensors come from ``model.safetensors``, a sharded set with
``model.safetensors.index.json``, or every ``*.safetensors`` in the folder.

Layers are found from the tensor names: a module prefix whose tensors are a quantized format's set (``qweight``;
``weight_packed``; ``weight`` + ``weight_scale`` ...) is a quantized layer; a module with a 2-D floating ``weight``
is an unquantized layer (embeddings, lm_head, MoE routers, ignored modules); everything else (norms, biases of
other modules, buffers) is an "other" tensor that ``dequantize`` copies.

The native ``humming`` format (what vllm-humming writes)::

    config.json  "quantization_config": {
        "quant_method": "humming", "format_version": 1,
        "layers": {"<module>": {"weight": "<WeightDesc string>", "act": "<ActDesc string>", "shape": [N, K]}, ...},
        "ignore": ["lm_head", ...]}
    tensors      <module>.qweight  int32 [N, ceil(K*bits/32)]  canonical packing (vllm_humming.packing)
                 <module>.scale    per desc.num_scale_groups; 8-bit scale types as uint8 codes
                 <module>.zero     uint8 codes (int zero points) or the scale dtype (float zero points)
                 <module>.scale2   float32 [1] or [N]
                 <module>.k_perm   int64 [K] (act-order input-channel order)
                 <module>.input_scale  float32 [1], static activation scale (multiplier), when act is static
                 <module>.bias     the module's own bias, unchanged
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from ..desc import ActDesc, DescError, ScaleSpec, WeightDesc
from ..dtypes import BF16, E4M3, FP16, FP32
from ..qweight import QuantizedWeight
from . import formats as F

__all__ = ["CheckpointError", "TensorInfo", "LayerRecord", "Checkpoint", "read_checkpoint", "SUPPORTED_METHODS",
           "write_native_checkpoint"]

SUPPORTED_METHODS = ("gptq", "awq", "compressed-tensors", "modelopt", "fp8", "mxfp4", "humming")


class CheckpointError(DescError):
    """A checkpoint that cannot be read: names the file, the layer and the tensor at fault."""


# ------------------------------------------------------------------------------------------- safetensors access
_ST_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool, "F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2,
}
if hasattr(torch, "float8_e8m0fnu"):
    _ST_DTYPES["F8_E8M0"] = torch.float8_e8m0fnu
_ST_ITEMSIZE = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
                "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str            # safetensors spelling (BF16, I32, F8_E4M3 ...)
    shape: Tuple[int, ...]
    file: str

    def __str__(self) -> str:
        return f"{self.name} {self.dtype} {list(self.shape)}"


def _read_header(path: str) -> Dict[str, Any]:
    """Parse a safetensors header ourselves so a corrupt file gives a clear error before any tensor is read."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            raw = f.read(8)
            if len(raw) != 8:
                raise CheckpointError(f"{path}: corrupt safetensors file: shorter than the 8-byte header length")
            (n,) = struct.unpack("<Q", raw)
            if n > size - 8 or n > 100 * 1024 * 1024:
                raise CheckpointError(f"{path}: corrupt safetensors header: header length {n} exceeds the file size "
                                      f"{size}")
            header = json.loads(f.read(n).decode("utf-8"))
    except CheckpointError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: corrupt safetensors header: {e}") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: corrupt safetensors header: not a JSON object")
    data_len = size - 8 - n
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        try:
            dt, shape, (a, b) = meta["dtype"], meta["shape"], meta["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{path}: corrupt safetensors header: entry {name!r} lacks dtype/shape/data_offsets")
        if not (0 <= a <= b <= data_len):
            raise CheckpointError(f"{path}: corrupt safetensors header: tensor {name!r} data [{a}, {b}) lies outside "
                                  f"the {data_len}-byte data section (truncated file?)")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise CheckpointError(f"{path}: corrupt safetensors header: tensor {name!r} has shape {shape!r}")
        size = _ST_ITEMSIZE.get(dt)
        if size is not None:
            numel = 1
            for d in shape:
                numel *= d
            if numel * size != b - a:
                raise CheckpointError(f"{path}: corrupt safetensors header: tensor {name!r} {dt} {shape} needs "
                                      f"{numel * size} bytes, its data_offsets span {b - a}")
    return header


class _TensorStore:
    """Name -> (file) map over one or more safetensors files; tensors are read on demand."""

    def __init__(self, folder: str):
        self.folder = folder
        self.infos: Dict[str, TensorInfo] = {}
        index = os.path.join(folder, "model.safetensors.index.json")
        if os.path.exists(index):
            try:
                with open(index) as f:
                    wmap = json.load(f)["weight_map"]
            except (OSError, KeyError, json.JSONDecodeError) as e:
                raise CheckpointError(f"{index}: cannot read the shard index: {e}") from None
            files = sorted(set(wmap.values()))
        else:
            files = sorted(fn for fn in os.listdir(folder) if fn.endswith(".safetensors"))
            wmap = None
        if not files:
            raise CheckpointError(f"{folder}: no *.safetensors files (and no model.safetensors.index.json)")
        for fn in files:
            path = os.path.join(folder, fn)
            if not os.path.exists(path):
                raise CheckpointError(f"{index}: shard {fn!r} listed in the index is missing")
            for name, meta in _read_header(path).items():
                if name == "__metadata__":
                    continue
                if name in self.infos:
                    raise CheckpointError(f"{folder}: tensor {name!r} appears in both {self.infos[name].file} and {fn}")
                self.infos[name] = TensorInfo(name, meta["dtype"], tuple(meta["shape"]), fn)
        if wmap is not None:
            missing = [k for k in wmap if k not in self.infos]
            if missing:
                raise CheckpointError(f"{index}: tensors listed in the index are missing from their shards: "
                                      f"{missing[:5]}")
        self._handles: Dict[str, Any] = {}

    def get(self, name: str) -> torch.Tensor:
        from safetensors import safe_open

        info = self.infos.get(name)
        if info is None:
            raise CheckpointError(f"{self.folder}: tensor {name!r} not found")
        h = self._handles.get(info.file)
        if h is None:
            try:
                h = safe_open(os.path.join(self.folder, info.file), framework="pt")
            except Exception as e:  # safetensors raises its own error type
                raise CheckpointError(f"{os.path.join(self.folder, info.file)}: cannot open: {e}") from None
            self._handles[info.file] = h
        return h.get_tensor(name)


# ------------------------------------------------------------------------------------------------ layer records
@dataclass
class LayerRecord:
    name: str                                  # module name, e.g. model.layers.0.mlp.down_proj
    kind: str                                  # "quantized" | "unquantized"
    method: str                                # quant_method (or "none")
    fmt: str = ""                              # format detail, e.g. "pack-quantized", "gemm", "gptq_v2"
    _wdesc: Optional[WeightDesc] = None       # see the weight_desc property
    act_desc: Optional[ActDesc] = None
    tensors: Dict[str, TensorInfo] = field(default_factory=dict)   # suffix -> info
    reason: str = ""                           # why unquantized (ignored, no quantized tensors ...)
    num_experts: int = 0                       # >0: fused experts (gpt-oss), qweight() returns a list
    _build: Optional[Callable[[], Any]] = field(default=None, repr=False)
    _act_tensors: Optional[Callable[[], Dict[str, torch.Tensor]]] = field(default=None, repr=False)
    _cache: Any = field(default=None, repr=False)

    @property
    def weight_desc(self) -> Optional[WeightDesc]:
        """The layer's :class:`WeightDesc`.  Some depend on the data (GPTQ midpoint zeros -> symmetric), so the first
        access converts the layer once (without keeping the tensors unless :meth:`qweight` was called)."""
        if self._wdesc is None and self.kind == "quantized":
            keep = self._cache is not None
            qws = self.qweight()
            self._wdesc = (qws[0] if isinstance(qws, list) else qws).desc
            if not keep:
                self._cache = None
        return self._wdesc

    def qweight(self):
        """The canonical :class:`QuantizedWeight` (a list for fused experts), built on first call and cached."""
        if self.kind != "quantized":
            raise CheckpointError(f"layer {self.name!r} is not quantized ({self.reason})")
        if self._cache is None:
            try:
                self._cache = self._build()
            except CheckpointError:
                raise
            except DescError as e:
                raise CheckpointError(f"{e} [tensors: {', '.join(str(t) for t in self.tensors.values())}]") from None
        return self._cache

    def act_tensors(self) -> Dict[str, torch.Tensor]:
        """Static activation scales as value multipliers: {"input_scale": float32 [1]} (empty when dynamic)."""
        return self._act_tensors() if self._act_tensors else {}

    def describe(self) -> Dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "method": self.method, "format": self.fmt,
                "weight": None if self.weight_desc is None else str(self.weight_desc),
                "act": None if self.act_desc is None else str(self.act_desc),
                "num_experts": self.num_experts, "reason": self.reason,
                "tensors": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape)} for t in self.tensors.values()]}


@dataclass
class Checkpoint:
    path: str
    config: Dict[str, Any]
    quant_config: Optional[Dict[str, Any]]
    method: str
    layers: Dict[str, LayerRecord]
    other: Dict[str, TensorInfo]               # tensors of no linear layer (norms, buffers ...)
    store: _TensorStore = field(repr=False)

    def get_tensor(self, name: str) -> torch.Tensor:
        return self.store.get(name)

    @property
    def quantized_layers(self) -> List[LayerRecord]:
        return [r for r in self.layers.values() if r.kind == "quantized"]


# ------------------------------------------------------------------------------------------------ config parsing
def _load_json(path: str) -> Optional[Dict[str, Any]]:
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: cannot parse JSON: {e}") from None


def _quant_config(folder: str, config: Dict[str, Any]) -> Tuple[Optional[Dict[str, Any]], str]:
    qc = config.get("quantization_config") or config.get("compression_config")
    if qc:
        return qc, "config.json quantization_config"
    qc = _load_json(os.path.join(folder, "quantize_config.json"))
    if qc:
        qc = dict(qc)
        qc.setdefault("quant_method", "gptq")
        return qc, "quantize_config.json"
    hq = _load_json(os.path.join(folder, "hf_quant_config.json"))
    if hq:
        q = dict(hq.get("quantization", hq))
        q.setdefault("quant_method", "modelopt")
        return q, "hf_quant_config.json"
    return None, ""


def _dense_act(config: Dict[str, Any]) -> ActDesc:
    dt = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16")
    return ActDesc(FP16 if "float16" in dt and "bfloat" not in dt else BF16)


def _ct_match(name: str, target: str) -> bool:
    if target.startswith("re:"):
        return re.match(target[3:], name) is not None
    return target == name


def _listed(mod: str, patterns) -> bool:
    """HF-style skip lists: exact name, ``re:`` regex, shell wildcard (``model.layers.*.mlp.router``) or substring
    (AutoAWQ / transformers ``modules_to_not_convert`` semantics)."""
    for p in patterns or ():
        if p.startswith("re:"):
            if re.match(p[3:], mod):
                return True
        elif any(c in p for c in "*?["):
            if fnmatch.fnmatchcase(mod, p) or fnmatch.fnmatchcase(mod, p + ".*"):
                return True
        elif p == mod or p in mod:
            return True
    return False


def _ct_is_class_target(target: str) -> bool:
    return not target.startswith("re:") and "." not in target and target[:1].isupper()


# ------------------------------------------------------------------------------------------------ the reader
_QUANT_SUFFIXES = ("qweight", "qzeros", "scales", "g_idx", "weight_packed", "weight_scale", "weight_shape",
                   "weight_zero_point", "weight_global_scale", "weight_g_idx", "input_scale", "input_global_scale",
                   "input_zero_point", "weight_scale_2", "weight_scale_inv", "scale", "zero", "scale2", "k_perm",
                   "output_scale", "k_scale", "v_scale")


def _split(name: str) -> Tuple[str, str]:
    i = name.rfind(".")
    return (name[:i], name[i + 1:]) if i >= 0 else ("", name)


def read_checkpoint(path: str) -> Checkpoint:
    """Read configs and safetensors headers of a checkpoint folder; tensors load lazily per layer."""
    if not os.path.isdir(path):
        raise CheckpointError(f"{path}: not a checkpoint folder")
    config = _load_json(os.path.join(path, "config.json")) or {}
    qc, source = _quant_config(path, config)
    store = _TensorStore(path)
    method = (qc or {}).get("quant_method", "none")
    method = str(method).lower().replace("_", "-") if method != "none" else "none"
    if method == "compressed_tensors":
        method = "compressed-tensors"
    if qc is not None and method not in SUPPORTED_METHODS:
        raise CheckpointError(f"{path}: unknown quant_method {qc.get('quant_method')!r} in {source}; supported: "
                              f"{', '.join(SUPPORTED_METHODS)}")

    modules: Dict[str, Dict[str, TensorInfo]] = {}
    for name, info in store.infos.items():
        mod, suf = _split(name)
        modules.setdefault(mod, {})[suf] = info

    ckpt = Checkpoint(path, config, qc, method, {}, {}, store)
    handler = {"gptq": _GPTQ, "awq": _AWQ, "compressed-tensors": _CT, "modelopt": _ModelOpt, "fp8": _FP8,
               "mxfp4": _MXFP4, "humming": _Native}.get(method, _Plain)(ckpt, qc or {})
    claimed = set()
    if isinstance(handler, _MXFP4):
        for rec in _mxfp4_records(ckpt, handler, modules):
            ckpt.layers[rec.name] = rec
            claimed.update(t.name for t in rec.tensors.values())
    for mod, tens in sorted(modules.items()):
        if any(t.name in claimed for t in tens.values()):
            continue
        rec = handler.record(mod, tens)
        if rec is None:
            continue
        ckpt.layers[mod] = rec
        claimed.update(t.name for t in rec.tensors.values())
    for name, info in store.infos.items():
        if name not in claimed:
            ckpt.other[name] = info
    return ckpt


class _Plain:
    """Unquantized checkpoint / unquantized modules of any checkpoint."""

    method = "none"

    def __init__(self, ckpt: Checkpoint, qc: Dict[str, Any]):
        self.ckpt, self.qc = ckpt, qc
        self.act = _dense_act(ckpt.config)

    def ignored(self, mod: str) -> str:
        return ""

    def unquantized(self, mod: str, tens: Dict[str, TensorInfo], reason: str) -> Optional[LayerRecord]:
        w = tens.get("weight")
        if w is None or len(w.shape) != 2 or w.dtype not in ("BF16", "F16", "F32"):
            found = sorted(set(tens) & set(_QUANT_SUFFIXES) - {"bias"})
            if found and self.method != "none" and ("ignore" in reason or "not_convert" in reason
                                                    or "exclude" in reason or "dynamic" in reason):
                raise CheckpointError(f"layer {mod!r} ({self.method}): {reason}, so it should be unquantized, but it "
                                      f"holds quantized tensors {found}; the config and the tensors disagree")
            return None
        keep = {"weight": w}
        if "bias" in tens:
            keep["bias"] = tens["bias"]
        return LayerRecord(mod, "unquantized", self.method, "", None, None, keep, reason)

    def record(self, mod: str, tens: Dict[str, TensorInfo]) -> Optional[LayerRecord]:
        return self.unquantized(mod, tens, "checkpoint is not quantized" if self.method == "none" else
                                "no quantized tensors")

    # helpers for subclasses
    def load(self, mod: str, tens: Dict[str, TensorInfo], suf: str, required: bool = True) -> Optional[torch.Tensor]:
        info = tens.get(suf)
        if info is None:
            if required:
                raise CheckpointError(f"layer {mod!r} ({self.method}): tensor {mod}.{suf} is missing; found "
                                      f"{sorted(tens)}")
            return None
        return self.ckpt.get_tensor(info.name)

    def make(self, mod, tens, used, fmt, desc, act, build, act_tensors=None, num_experts=0) -> LayerRecord:
        keep = {s: tens[s] for s in used if s in tens}
        return LayerRecord(mod, "quantized", self.method, fmt, desc, act, keep, "", num_experts, build, act_tensors)


# --------------------------------------------------------------------------------------------------------- GPTQ
class _GPTQ(_Plain):
    method = "gptq"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        fmt = str(qc.get("checkpoint_format") or qc.get("format") or "gptq").lower()
        if fmt not in ("gptq", "gptq_v2"):
            raise CheckpointError(f"{ckpt.path}: GPTQ checkpoint_format {fmt!r} is not supported; supported: 'gptq' "
                                  f"(v1) and 'gptq_v2' (gptqmodel's planar 'gptq_p', marlin and bitblas layouts are not)")
        if qc.get("is_marlin_format") or qc.get("is_bitblas_format"):
            raise CheckpointError(f"{ckpt.path}: GPTQ checkpoints saved in the Marlin/BitBLAS layout "
                                  f"(is_marlin_format / is_bitblas_format) are not supported; use the plain gptq layout")
        self.cfmt = fmt
        self.dynamic = qc.get("dynamic") or {}

    def params(self, mod: str) -> Optional[Dict[str, Any]]:
        p = {k: self.qc.get(k) for k in ("bits", "group_size", "sym", "desc_act")}
        for pat, over in self.dynamic.items():
            neg = pat.startswith("-:")
            rx = pat[2:] if pat[:2] in ("-:", "+:") else pat
            if re.match(rx, mod):
                if neg:
                    return None
                p.update({k: v for k, v in (over or {}).items() if k in p})
        return p

    def record(self, mod, tens):
        if "qweight" not in tens:
            return self.unquantized(mod, tens, "no GPTQ tensors (not quantized by the tool)")
        p = self.params(mod)
        if p is None:
            return self.unquantized(mod, tens, "excluded by the GPTQ 'dynamic' config")
        bits, gs = int(p["bits"]), int(p["group_size"] if p["group_size"] is not None else -1)

        def build():
            return F.gptq_to_qweight(self.load(mod, tens, "qweight"), self.load(mod, tens, "qzeros"),
                                     self.load(mod, tens, "scales"), self.load(mod, tens, "g_idx", False),
                                     bits=bits, group_size=gs, sym=bool(p["sym"]), desc_act=bool(p["desc_act"]),
                                     checkpoint_format=self.cfmt, name=mod, bias=self.load(mod, tens, "bias", False))

        return self.make(mod, tens, ("qweight", "qzeros", "scales", "g_idx", "bias"), self.cfmt, None, self.act,
                         build)


# ---------------------------------------------------------------------------------------------------------- AWQ
class _AWQ(_Plain):
    method = "awq"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        ver = str(qc.get("version", "gemm")).lower()
        if ver != "gemm":
            raise CheckpointError(f"{ckpt.path}: AWQ version {ver!r} is not supported; supported: 'gemm'")
        if not qc.get("zero_point", True):
            raise CheckpointError(f"{ckpt.path}: AWQ without zero points is not supported (zero_point=false)")
        self.skip = qc.get("modules_to_not_convert") or []

    def record(self, mod, tens):
        if _listed(mod, self.skip):
            return self.unquantized(mod, tens, "in modules_to_not_convert")
        if "qweight" not in tens:
            return self.unquantized(mod, tens, "no AWQ tensors")
        bits, gs = int(self.qc.get("bits", self.qc.get("w_bit", 4))), int(self.qc.get("group_size",
                                                                                     self.qc.get("q_group_size", 128)))

        def build():
            return F.awq_to_qweight(self.load(mod, tens, "qweight"), self.load(mod, tens, "qzeros"),
                                    self.load(mod, tens, "scales"), bits=bits, group_size=gs, name=mod,
                                    bias=self.load(mod, tens, "bias", False))

        return self.make(mod, tens, ("qweight", "qzeros", "scales", "bias"), "gemm", None, self.act, build)


# ------------------------------------------------------------------------------------------- compressed-tensors
class _CT(_Plain):
    method = "compressed-tensors"
    FORMATS = ("pack-quantized", "int-quantized", "float-quantized", "naive-quantized", "nvfp4-pack-quantized",
               "mxfp4-pack-quantized")

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        self.ignore = list(qc.get("ignore") or [])
        self.groups = qc.get("config_groups") or {}
        self.default_fmt = qc.get("format")
        status = qc.get("quantization_status", "compressed")
        if status != "compressed":
            raise CheckpointError(f"{ckpt.path}: compressed-tensors quantization_status {status!r}: only compressed "
                                  f"checkpoints hold quantized tensors (a 'frozen'/'calibration' save is fake-quantized "
                                  f"bf16; load it as an unquantized model)")
        if qc.get("sparsity_config"):
            sc = qc["sparsity_config"]
            if sc.get("format") not in (None, "dense"):
                raise CheckpointError(f"{ckpt.path}: compressed-tensors sparsity format {sc.get('format')!r} is not "
                                      f"supported (dense only)")
        if qc.get("transform_config"):
            raise CheckpointError(f"{ckpt.path}: compressed-tensors transforms (transform_config) are not supported")

    def scheme(self, mod: str) -> Tuple[Optional[Dict[str, Any]], str]:
        for gname, g in self.groups.items():
            targets = g.get("targets") or []
            if any(_ct_match(mod, t) for t in targets if not _ct_is_class_target(t)):
                return g, gname
        for gname, g in self.groups.items():
            if any(_ct_is_class_target(t) for t in g.get("targets") or []):
                return g, gname
        return None, ""

    def record(self, mod, tens):
        if any(_ct_match(mod, t) for t in self.ignore):
            return self.unquantized(mod, tens, "in the ignore list")
        quant_tensors = {"weight_packed", "weight_scale"} & set(tens)
        if not quant_tensors:
            return self.unquantized(mod, tens, "no compressed-tensors weight tensors")
        g, gname = self.scheme(mod)
        if g is None:
            raise CheckpointError(f"layer {mod!r} (compressed-tensors): has quantized tensors but matches no "
                                  f"config_groups target")
        fmt = g.get("format") or self.default_fmt
        if fmt not in self.FORMATS:
            raise CheckpointError(f"layer {mod!r} (compressed-tensors): format {fmt!r} is not supported; supported: "
                                  f"{', '.join(self.FORMATS)}")
        w = g.get("weights") or {}
        ia = g.get("input_activations")
        try:
            act = F.ct_act_desc(ia, mod) if ia else self.act
        except DescError as e:
            raise CheckpointError(str(e)) from None
        typ, bits = w.get("type", "int"), int(w.get("num_bits", 8))
        strategy, gs = w.get("strategy"), w.get("group_size")
        sym = w.get("symmetric", True)
        block = w.get("block_structure")
        ld = lambda s, req=True: self.load(mod, tens, s, req)

        if fmt == "pack-quantized":
            if typ != "int":
                raise CheckpointError(f"layer {mod!r} (compressed-tensors pack-quantized): weight type {typ!r}; "
                                      f"pack-quantized holds int weights")

            def build():
                qw = F.ct_pack_quantized_to_qweight(ld("weight_packed"), ld("weight_scale"), ld("weight_shape", False),
                                                    ld("weight_zero_point", False) if not sym else None,
                                                    num_bits=bits, group_size=gs, strategy=strategy, symmetric=sym,
                                                    name=mod, bias=ld("bias", False))
                return _apply_g_idx(qw, ld("weight_g_idx", False), gs, mod)
            used = ("weight_packed", "weight_scale", "weight_shape", "weight_zero_point", "weight_g_idx", "bias")
        elif fmt == "nvfp4-pack-quantized":
            def build():
                return F.ct_nvfp4_to_qweight(ld("weight_packed"), ld("weight_scale"), ld("weight_global_scale"),
                                             weight_shape=ld("weight_shape", False), group_size=gs or 16, name=mod,
                                             bias=ld("bias", False))
            used = ("weight_packed", "weight_scale", "weight_global_scale", "weight_shape", "bias")
        elif fmt == "mxfp4-pack-quantized":
            def build():
                return F.ct_mxfp4_to_qweight(ld("weight_packed"), ld("weight_scale"),
                                             weight_shape=ld("weight_shape", False), name=mod, bias=ld("bias", False))
            used = ("weight_packed", "weight_scale", "weight_shape", "bias")
        elif typ == "float":
            def build():
                return F.ct_float_quantized_to_qweight(ld("weight"), ld("weight_scale"), block_structure=block,
                                                       group_size=gs, strategy=strategy, name=mod,
                                                       bias=ld("bias", False))
            used = ("weight", "weight_scale", "bias")
        else:
            def build():
                qw = F.ct_int_quantized_to_qweight(ld("weight"), ld("weight_scale"),
                                                   ld("weight_zero_point", False) if not sym else None,
                                                   num_bits=bits, group_size=gs, strategy=strategy, symmetric=sym,
                                                   name=mod, bias=ld("bias", False))
                return _apply_g_idx(qw, ld("weight_g_idx", False), gs, mod)
            used = ("weight", "weight_scale", "weight_zero_point", "weight_g_idx", "bias")

        act_tensors = None
        if act.quantized and not act.dynamic:
            act_tensors = lambda: {"input_scale": ld("input_scale").to(torch.float32).reshape(1)}
            used = used + ("input_scale",)
        elif act.scale2 is not None and "input_global_scale" in tens:
            act_tensors = lambda: {"input_scale": (1.0 / ld("input_global_scale").to(torch.float32)).reshape(1)}
            used = used + ("input_global_scale",)
        return self.make(mod, tens, used, fmt, None, act, build, act_tensors)


def _apply_g_idx(qw: QuantizedWeight, g_idx: Optional[torch.Tensor], group_size, name: str) -> QuantizedWeight:
    """Reorder a weight's columns by a g_idx (activation-ordered groups) into contiguous groups + ``k_perm``."""
    if g_idx is None:
        return qw
    n, k = qw.shape
    perm = F.gptq_k_perm(g_idx, k, group_size or -1, name)
    if perm is None:
        return qw
    from ..packing import pack_codes, unpack_codes

    codes = unpack_codes(qw.qweight, qw.desc.bits, k)[:, perm]
    return QuantizedWeight(qw.desc, qw.shape, pack_codes(codes, qw.desc.bits), qw.scale, qw.zero, qw.scale2, perm,
                           qw.bias, name)


# -------------------------------------------------------------------------------------------------- ModelOpt
class _ModelOpt(_Plain):
    method = "modelopt"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        self.algo = str(qc.get("quant_algo", "")).upper()
        if self.algo not in ("NVFP4", "FP8"):
            raise CheckpointError(f"{ckpt.path}: ModelOpt quant_algo {qc.get('quant_algo')!r} is not supported; "
                                  f"supported: NVFP4, FP8")
        self.exclude = list(qc.get("exclude_modules") or qc.get("ignore") or [])
        self.group_size = int(qc.get("group_size") or 16)

    def record(self, mod, tens):
        if _listed(mod, self.exclude):
            return self.unquantized(mod, tens, "in exclude_modules")
        w = tens.get("weight")
        if w is None or "weight_scale" not in tens:
            return self.unquantized(mod, tens, "no ModelOpt scales")
        ld = lambda s, req=True: self.load(mod, tens, s, req)
        if self.algo == "NVFP4":
            def build():
                return F.modelopt_nvfp4_to_qweight(ld("weight"), ld("weight_scale"), ld("weight_scale_2"),
                                                   group_size=self.group_size, name=mod, bias=ld("bias", False))
            act = ActDesc("float4_e2m1", ScaleSpec("group", E4M3, group_size=16), True, ScaleSpec("tensor", FP32)) \
                if "input_scale" in tens else self.act
            used = ("weight", "weight_scale", "weight_scale_2", "input_scale", "bias")
        else:
            def build():
                return F.fp8_tensor_to_qweight(ld("weight"), ld("weight_scale"), name=mod, bias=ld("bias", False))
            act = ActDesc(E4M3, ScaleSpec("tensor", FP32), False) if "input_scale" in tens else self.act
            used = ("weight", "weight_scale", "input_scale", "bias")
        act_tensors = (lambda: {"input_scale": ld("input_scale").to(torch.float32).reshape(1)}) \
            if "input_scale" in tens else None
        return self.make(mod, tens, used, self.algo.lower(), None, act, build, act_tensors)


# ------------------------------------------------------------------------------------------------------- FP8
class _FP8(_Plain):
    method = "fp8"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        self.block = qc.get("weight_block_size")
        self.scheme = qc.get("activation_scheme", "dynamic")
        fmt = str(qc.get("fmt", "e4m3")).lower()
        if fmt not in ("e4m3", "float8_e4m3fn"):
            raise CheckpointError(f"{ckpt.path}: fp8 fmt {fmt!r} is not supported; supported: e4m3")
        self.skip = list(qc.get("modules_to_not_convert") or qc.get("ignored_layers") or [])

    def record(self, mod, tens):
        if _listed(mod, self.skip):
            return self.unquantized(mod, tens, "in modules_to_not_convert")
        w = tens.get("weight")
        if w is None or w.dtype != "F8_E4M3":
            return self.unquantized(mod, tens, "weight is not fp8")
        ld = lambda s, req=True: self.load(mod, tens, s, req)
        if "weight_scale_inv" in tens:
            def build():
                return F.fp8_block_to_qweight(ld("weight"), ld("weight_scale_inv"), block=self.block or (128, 128),
                                              name=mod, bias=ld("bias", False))
            used = ("weight", "weight_scale_inv", "bias")
        else:
            def build():
                return F.fp8_tensor_to_qweight(ld("weight"), ld("weight_scale"), name=mod, bias=ld("bias", False))
            used = ("weight", "weight_scale", "bias")
        act_tensors = None
        if self.scheme == "static":
            act = ActDesc(E4M3, ScaleSpec("tensor", FP32), False)
            act_tensors = lambda: {"input_scale": ld("input_scale").to(torch.float32).reshape(1)}
            used += ("input_scale",)
        elif self.block:
            act = ActDesc(E4M3, ScaleSpec("group", FP32, group_size=int(self.block[1])), True)
        else:
            act = ActDesc(E4M3, ScaleSpec("token", FP32), True)
        return self.make(mod, tens, used, "block" if self.block else "tensor", None, act, build, act_tensors)


# ------------------------------------------------------------------------------------------------------ MXFP4
class _MXFP4(_Plain):
    """gpt-oss: ``<experts>.gate_up_proj_blocks|_scales|_bias`` and ``<experts>.down_proj_*``: one record per
    projection, named ``<experts>.gate_up_proj`` / ``<experts>.down_proj``, with ``num_experts`` = E."""

    method = "mxfp4"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        self.skip = list(qc.get("modules_to_not_convert") or [])

    def record(self, mod, tens):
        return self.unquantized(mod, tens, "in modules_to_not_convert" if _listed(mod, self.skip)
                                else "no MXFP4 blocks")


def _mxfp4_records(ckpt: Checkpoint, handler: _MXFP4, modules: Dict[str, Dict[str, TensorInfo]]):
    out = []
    for mod, tens in sorted(modules.items()):
        if _listed(mod, handler.skip):
            continue
        for suf, info in sorted(tens.items()):
            if not suf.endswith("_blocks"):
                continue
            proj = suf[: -len("_blocks")]
            name = f"{mod}.{proj}"
            sc = tens.get(f"{proj}_scales")
            if sc is None:
                raise CheckpointError(f"layer {name!r} (mxfp4): tensor {mod}.{proj}_scales is missing")
            used = {"blocks": info, "scales": sc}
            if f"{proj}_bias" in tens:
                used["bias"] = tens[f"{proj}_bias"]
            get = ckpt.get_tensor

            def build(info=info, sc=sc, used=used, name=name):
                b, s = get(info.name), get(sc.name)
                bias = get(used["bias"].name) if "bias" in used else None
                if b.dim() == 4:
                    return F.mxfp4_experts_to_qweights(b, s, bias, name=name)
                return F.mxfp4_blocks_to_qweight(b, s, name=name, bias=bias)

            e = info.shape[0] if len(info.shape) == 4 else 0
            rec = LayerRecord(name, "quantized", "mxfp4", "gpt-oss blocks", None, handler.act, used, "", e, build)
            out.append(rec)
    return out


# ------------------------------------------------------------------------------------------------------ native
class _Native(_Plain):
    method = "humming"

    def __init__(self, ckpt, qc):
        super().__init__(ckpt, qc)
        ver = int(qc.get("format_version", 1))
        if ver != 1:
            raise CheckpointError(f"{ckpt.path}: humming format_version {ver} is not supported (1)")
        self.map = qc.get("layers") or {}

    def record(self, mod, tens):
        spec = self.map.get(mod)
        if spec is None:
            return self.unquantized(mod, tens, "not in the humming layer map")
        try:
            desc = WeightDesc.parse(spec["weight"])
            act = ActDesc.parse(spec.get("act") or str(self.act))
        except (DescError, KeyError, TypeError) as e:
            raise CheckpointError(f"layer {mod!r} (humming): bad layer entry {spec!r}: {e}") from None
        shape = spec.get("shape")
        if not shape or len(shape) != 2:
            raise CheckpointError(f"layer {mod!r} (humming): layer entry needs \"shape\": [N, K]")
        ld = lambda s, req=True: self.load(mod, tens, s, req)

        def build():
            t = {s: ld(s, s == "qweight") for s in F.NATIVE_TENSORS}
            return F.native_to_qweight({k: v for k, v in t.items() if v is not None}, desc, shape, name=mod,
                                       bias=ld("bias", False))
        act_tensors = (lambda: {"input_scale": ld("input_scale").to(torch.float32).reshape(1)}) \
            if act.quantized and not act.dynamic else None
        return self.make(mod, tens, F.NATIVE_TENSORS + ("input_scale", "bias"), "native", desc, act, build,
                         act_tensors)


# ------------------------------------------------------------------------------------------------------ writer
def write_native_checkpoint(out_dir: str, layers: Dict[str, Tuple[QuantizedWeight, ActDesc]],
                            other: Dict[str, torch.Tensor], config: Optional[Dict[str, Any]] = None,
                            ignore: Optional[List[str]] = None) -> None:
    """Write the native ``humming`` format: canonical tensors + the description map in config.json."""
    from safetensors.torch import save_file

    os.makedirs(out_dir, exist_ok=True)
    tensors = dict(other)
    lmap = {}
    for name, (qw, act) in layers.items():
        for suf, t in F.qweight_to_native(qw).items():
            tensors[f"{name}.{suf}"] = t.contiguous()
        if qw.bias is not None:
            tensors[f"{name}.bias"] = qw.bias.contiguous()
        lmap[name] = {"weight": str(qw.desc), "act": str(act or ActDesc("bfloat16")), "shape": list(qw.shape)}
    cfg = dict(config or {})
    cfg["quantization_config"] = {"quant_method": "humming", "format_version": 1, "layers": lmap,
                                  "ignore": list(ignore or [])}
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
