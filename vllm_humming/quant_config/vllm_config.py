"""``--quantization humming``: one vLLM QuantizationConfig for every checkpoint format our readers understand.

The plugin registers :class:`HummingVllmConfig` under the name ``humming`` (replacing vLLM's in-tree config of the
same name, which calls the upstream ``humming-kernels`` package).  It reads the checkpoint's own
``quantization_config`` and builds, per layer, a :class:`LayerScheme`: which tensors the checkpoint stores for that
layer (names, dtypes, shapes, which dimension is N / K and how it is packed), how to turn them into our canonical
:class:`~vllm_humming.qweight.QuantizedWeight`, and the activation description.  Layers the checkpoint leaves
unquantized (``ignore`` / ``modules_to_not_convert`` / ``dynamic`` ``-:`` rules / lm_head) stay vLLM's unquantized
layers.

Checkpoint formats (``quant_method``):
    gptq (incl. 2/3/8-bit, act-order, v1/v2 zero points)     awq (GEMM)
    compressed-tensors: pack-quantized int (W4A16, W8A16, asym), int-quantized (W8A8 int8, W8A16 int8),
                        float-quantized (FP8 channel/tensor/block), nvfp4-pack-quantized, mxfp4-pack-quantized
    modelopt (NVFP4)      fp8 (with weight_block_size, or per tensor)      humming (our native format)

Online quantization of an unquantized (bf16/fp16) checkpoint to a description of your choice:

    vllm serve MODEL --quantization humming \\
        --hf-overrides '{"quantization_config": {"quant_method": "humming", "weight": "w:uint4b8,s:g128:bfloat16"}}'

or ``HUMMING_ONLINE_QUANT="w:uint4b8,s:g128:bfloat16" vllm serve MODEL --quantization humming`` (the environment
variable is used when the checkpoint carries no quantization_config).  ``weight`` is a canonical weight description
or a named format (``mxfp4``, ``nvfp4-w4a16``, ``fp8-channel`` ...); optional keys: ``act`` (activation description,
default bf16/fp16), ``ignore`` (module names or ``re:`` patterns kept unquantized; lm_head always is).
"""

from __future__ import annotations

import json
from fractions import Fraction
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from ..desc import ActDesc, DescError, ScaleSpec, WeightDesc, named_format, NAMED_FORMATS
from ..qweight import QuantizedWeight
from . import formats as F

logger = logging.getLogger("vllm_humming")

__all__ = ["TensorSpec", "LayerScheme", "parse_checkpoint_config", "HummingConfigError", "make_vllm_config_class",
           "ONLINE_ENV", "HummingVllmConfig"]

ONLINE_ENV = "HUMMING_ONLINE_QUANT"


class HummingConfigError(DescError):
    """A quantization_config (or layer) that --quantization humming cannot serve, with what is supported."""


# ---------------------------------------------------------------------------------------------------- tensor specs
@dataclass
class TensorSpec:
    """One checkpoint tensor of a linear layer, for an [N, K] weight (N = output features)."""

    name: str
    dtype: torch.dtype
    shape: Callable[[int, int], Tuple[int, ...]]   # (N, K) -> checkpoint shape
    n_dim: Optional[int] = None                     # dimension that runs along N (None: not per output row)
    n_per: Fraction = Fraction(1)                             # N elements per entry along n_dim (8 for 4-bit packed along N;
                                                    # 128 for 128-row scale blocks)
    k_dim: Optional[int] = None                     # dimension that runs along K (only informative)
    per_shard: bool = False                         # one scalar per logical shard of a fused layer
    float_scale: bool = False                       # keep the checkpoint's float dtype exactly (load into fp32)
    optional: bool = False                          # may be absent from the checkpoint (e.g. g_idx)
    ignore_load: bool = False                       # accept loads but ignore the value (weight_shape)


@dataclass
class LayerScheme:
    """How one quantized linear layer is stored and how it becomes a canonical weight."""

    fmt: str
    tensors: List[TensorSpec]
    convert: Callable[[Dict[str, torch.Tensor], int, int, str], QuantizedWeight]   # (tensors, N, K, name)
    act: ActDesc = field(default_factory=ActDesc)
    static_act_tensor: Optional[str] = None   # name of a per-shard static input scale tensor
    online: Optional[WeightDesc] = None       # quantize a dense checkpoint weight to this description at load
    static_act_inverted: bool = False         # the tensor stores 1/scale (compressed-tensors NVFP4 global scale)

    def static_value(self, tensors: Dict[str, torch.Tensor]) -> Optional[torch.Tensor]:
        """The static activation value (float32 [1]) the ActDesc needs: its per-tensor scale, or its second-level
        scale s2.  Fused shards share one input, so the largest scale of the shards is used (as vLLM does)."""
        if not self.act.quantized or (self.act.dynamic and self.act.scale2 is None):
            return None
        t = tensors.get(self.static_act_tensor) if self.static_act_tensor else None
        if t is None:
            raise HummingConfigError(f"{self.fmt}: activation description {self.act} needs the static input scale "
                                     f"tensor {self.static_act_tensor!r}, which the checkpoint does not have")
        t = t.reshape(-1).to(torch.float32)
        v = (1.0 / t.max()) if self.static_act_inverted else t.max()
        return v.reshape(1)

    def describe(self) -> str:
        return f"{self.fmt} -> " + (str(self.online) if self.online else "checkpoint description") + f", {self.act}"


def _pw(k: int, bits: int) -> int:
    return -(-k * bits // 32)


def _ngroups(k: int, gs: Optional[int]) -> int:
    return 1 if gs is None or gs <= 0 else -(-k // gs)


# ------------------------------------------------------------------------------------------------------ schemes
def gptq_scheme(cfg: dict) -> LayerScheme:
    bits = int(cfg.get("bits", 4))
    gs = int(cfg.get("group_size", 128))
    sym = bool(cfg.get("sym", True))
    desc_act = bool(cfg.get("desc_act", False))
    cf = str(cfg.get("checkpoint_format", cfg.get("format", "gptq")) or "gptq")
    if cf not in ("gptq", "gptq_v2"):
        raise HummingConfigError(f"gptq checkpoint_format {cf!r} is not supported; supported: gptq, gptq_v2")
    if bits not in (2, 3, 4, 8):
        raise HummingConfigError(f"gptq bits={bits} is not supported; supported: 2, 3, 4, 8")
    sp = Fraction(32, bits)
    tensors = [
        TensorSpec("qweight", torch.int32, lambda n, k: (_pw(k, bits), n), n_dim=1, k_dim=0),
        TensorSpec("qzeros", torch.int32, lambda n, k: (_ngroups(k, gs), _pw(n, bits)), n_dim=1, n_per=sp, k_dim=0),
        TensorSpec("scales", torch.float32, lambda n, k: (_ngroups(k, gs), n), n_dim=1, k_dim=0, float_scale=True),
        TensorSpec("g_idx", torch.int32, lambda n, k: (k,), k_dim=0, optional=True),
    ]

    def convert(t, n, k, name):
        g_idx = t.get("g_idx")
        return F.gptq_to_qweight(t["qweight"], t["qzeros"], t["scales"], g_idx, bits=bits, group_size=gs, sym=sym,
                                 desc_act=desc_act, checkpoint_format=cf, name=name)

    return LayerScheme(f"gptq {bits}-bit g{gs}{' act-order' if desc_act else ''}", tensors, convert)


def awq_scheme(cfg: dict) -> LayerScheme:
    bits = int(cfg.get("bits", cfg.get("w_bit", 4)))
    gs = int(cfg.get("group_size", cfg.get("q_group_size", 128)))
    version = str(cfg.get("version", "gemm")).lower()
    if bits != 4 or version != "gemm":
        raise HummingConfigError(f"awq bits={bits} version={version!r} is not supported; supported: 4-bit GEMM")
    if not cfg.get("zero_point", True):
        raise HummingConfigError("awq zero_point=false is not supported (AutoAWQ GEMM checkpoints carry zero points)")
    tensors = [
        TensorSpec("qweight", torch.int32, lambda n, k: (k, n // 8), n_dim=1, n_per=8, k_dim=0),
        TensorSpec("qzeros", torch.int32, lambda n, k: (_ngroups(k, gs), n // 8), n_dim=1, n_per=8, k_dim=0),
        TensorSpec("scales", torch.float32, lambda n, k: (_ngroups(k, gs), n), n_dim=1, k_dim=0, float_scale=True),
    ]

    def convert(t, n, k, name):
        return F.awq_to_qweight(t["qweight"], t["qzeros"], t["scales"], bits=bits, group_size=gs, name=name)

    return LayerScheme(f"awq 4-bit g{gs}", tensors, convert)


def _ct_group(w: dict) -> Optional[int]:
    if w.get("strategy") in ("group", "tensor_group"):
        return int(w["group_size"])
    return None


def _ct_scale_spec(w: dict, name: str = "weight_scale") -> TensorSpec:
    strategy = w.get("strategy")
    gs = _ct_group(w)
    if strategy == "tensor":
        return TensorSpec(name, torch.float32, lambda n, k: (1,), per_shard=True, float_scale=True)
    if strategy == "channel":
        return TensorSpec(name, torch.float32, lambda n, k: (n, 1), n_dim=0, float_scale=True)
    if strategy in ("group", "tensor_group"):
        return TensorSpec(name, torch.float32, lambda n, k: (n, _ngroups(k, gs)), n_dim=0, k_dim=1, float_scale=True)
    if strategy == "block":
        bn, bk = (int(v) for v in w["block_structure"])
        return TensorSpec(name, torch.float32, lambda n, k: (-(-n // bn), -(-k // bk)), n_dim=0, n_per=bn, k_dim=1,
                          float_scale=True)
    raise HummingConfigError(f"compressed-tensors weight strategy {strategy!r} is not supported; supported: "
                             f"tensor, channel, group, block")


def ct_scheme(group: dict, fmt: str) -> LayerScheme:
    w = dict(group.get("weights") or {})
    a = group.get("input_activations")
    fmt = group.get("format") or fmt
    act = F.ct_act_desc(a) if a else ActDesc()
    static_act = None
    if act.quantized and (not act.dynamic or act.scale2 is not None):
        static_act = "input_global_scale" if act.scale2 is not None else "input_scale"
    bits = int(w.get("num_bits", 8))
    typ = w.get("type", "int")
    sym = bool(w.get("symmetric", True))
    strategy = w.get("strategy")
    gs = _ct_group(w)
    tensors: List[TensorSpec] = []
    if fmt == "pack-quantized" and typ == "int":
        tensors = [TensorSpec("weight_packed", torch.int32, lambda n, k: (n, _pw(k, bits)), n_dim=0, k_dim=1),
                   _ct_scale_spec(w),
                   TensorSpec("weight_shape", torch.int64, lambda n, k: (2,), ignore_load=True)]
        if not sym:
            tensors.append(TensorSpec("weight_zero_point", torch.int32,
                                      lambda n, k: (_pw(n, bits), _ngroups(k, gs) if gs else 1),
                                      n_dim=0, n_per=Fraction(32, bits)))
        if w.get("actorder") == "group":
            tensors.append(TensorSpec("weight_g_idx", torch.int32, lambda n, k: (k,), k_dim=0, optional=True))

        def convert(t, n, k, name):
            qw = F.ct_pack_quantized_to_qweight(t["weight_packed"], t["weight_scale"].to(t["weight_scale"].dtype),
                                                torch.tensor([n, k]), t.get("weight_zero_point"), num_bits=bits,
                                                group_size=gs, strategy=strategy, symmetric=sym, name=name)
            return _apply_ct_g_idx(qw, t.get("weight_g_idx"), gs, name)
    elif fmt in ("int-quantized", "naive-quantized") and typ == "int":
        tensors = [TensorSpec("weight", torch.int8, lambda n, k: (n, k), n_dim=0, k_dim=1), _ct_scale_spec(w)]
        if not sym:
            tensors.append(TensorSpec("weight_zero_point", torch.int8, lambda n, k: (n, _ngroups(k, gs) if gs else 1),
                                      n_dim=0))

        def convert(t, n, k, name):
            return F.ct_int_quantized_to_qweight(t["weight"], t["weight_scale"], t.get("weight_zero_point"),
                                                 num_bits=bits, group_size=gs, strategy=strategy, symmetric=sym,
                                                 name=name)
    elif fmt in ("float-quantized", "naive-quantized") and typ == "float":
        tensors = [TensorSpec("weight", torch.float8_e4m3fn, lambda n, k: (n, k), n_dim=0, k_dim=1),
                   _ct_scale_spec(w)]
        block = w.get("block_structure")

        def convert(t, n, k, name):
            return F.ct_float_quantized_to_qweight(t["weight"], t["weight_scale"], block_structure=block,
                                                   group_size=gs, strategy=strategy, name=name)
    elif fmt == "nvfp4-pack-quantized":
        tensors = [TensorSpec("weight_packed", torch.uint8, lambda n, k: (n, k // 2), n_dim=0, k_dim=1),
                   TensorSpec("weight_scale", torch.float8_e4m3fn, lambda n, k: (n, _ngroups(k, 16)), n_dim=0,
                              k_dim=1),
                   TensorSpec("weight_global_scale", torch.float32, lambda n, k: (1,), per_shard=True)]

        def convert(t, n, k, name):
            return F.ct_nvfp4_to_qweight(t["weight_packed"], t["weight_scale"], t["weight_global_scale"],
                                         weight_shape=torch.tensor([n, k]), name=name)
        # activations: our NVFP4 activation path is weight-only for now (see module docstring of the plugin)
    elif fmt == "mxfp4-pack-quantized":
        tensors = [TensorSpec("weight_packed", torch.uint8, lambda n, k: (n, k // 2), n_dim=0, k_dim=1),
                   TensorSpec("weight_scale", torch.uint8, lambda n, k: (n, _ngroups(k, 32)), n_dim=0, k_dim=1)]

        def convert(t, n, k, name):
            return F.ct_mxfp4_to_qweight(t["weight_packed"], t["weight_scale"], weight_shape=torch.tensor([n, k]),
                                         name=name)
    else:
        raise HummingConfigError(f"compressed-tensors format {fmt!r} with {typ} weights of {bits} bits is not "
                                 f"supported; supported: pack-quantized int, int-quantized int, float-quantized fp8, "
                                 f"nvfp4-pack-quantized, mxfp4-pack-quantized")
    if static_act:
        tensors.append(TensorSpec(static_act, torch.float32, lambda n, k: (1,), per_shard=True))
    return LayerScheme(f"compressed-tensors {fmt} {typ}{bits} {strategy}", tensors, convert, act, static_act,
                       static_act_inverted=static_act == "input_global_scale")


def _apply_ct_g_idx(qw: QuantizedWeight, g_idx: Optional[torch.Tensor], gs: Optional[int], name: str):
    """compressed-tensors actorder=group: ``weight_g_idx[k]`` is input channel k's group, codes stay in channel
    order.  Reorder the codes so every group is contiguous (the same storage order as GPTQ act-order)."""
    if g_idx is None:
        return qw
    n, k = qw.shape
    perm = F.gptq_k_perm(g_idx, k, gs or k, name)
    if perm is None:
        return qw
    from ..packing import pack_codes, unpack_codes

    codes = unpack_codes(qw.qweight, qw.desc.bits, k)[:, perm]
    return QuantizedWeight(qw.desc, qw.shape, pack_codes(codes, qw.desc.bits), qw.scale, qw.zero, qw.scale2, perm,
                           qw.bias, qw.name)


def modelopt_scheme(cfg: dict) -> LayerScheme:
    algo = str(cfg.get("quant_algo") or cfg.get("quantization", {}).get("quant_algo", "")).upper()
    if algo not in ("NVFP4", "W4A16_NVFP4"):
        raise HummingConfigError(f"modelopt quant_algo {algo!r} is not supported; supported: NVFP4")
    tensors = [TensorSpec("weight", torch.uint8, lambda n, k: (n, k // 2), n_dim=0, k_dim=1),
               TensorSpec("weight_scale", torch.float8_e4m3fn, lambda n, k: (n, _ngroups(k, 16)), n_dim=0, k_dim=1),
               TensorSpec("weight_scale_2", torch.float32, lambda n, k: (1,), per_shard=True),
               TensorSpec("input_scale", torch.float32, lambda n, k: (1,), per_shard=True, optional=True)]

    def convert(t, n, k, name):
        return F.modelopt_nvfp4_to_qweight(t["weight"], t["weight_scale"], t["weight_scale_2"], k=k, name=name)

    if algo == "NVFP4":       # W4A4: NVFP4 activations, input_scale = the global multiplier s2 (amax / (6 * 448))
        from ..desc import ACT_NVFP4

        return LayerScheme("modelopt nvfp4 w4a4", tensors, convert, ACT_NVFP4, "input_scale")
    return LayerScheme("modelopt nvfp4 w4a16", tensors, convert)


def fp8_scheme(cfg: dict) -> LayerScheme:
    block = cfg.get("weight_block_size")
    if block:
        bn, bk = (int(v) for v in block)
        tensors = [TensorSpec("weight", torch.float8_e4m3fn, lambda n, k: (n, k), n_dim=0, k_dim=1),
                   TensorSpec("weight_scale_inv", torch.float32, lambda n, k: (-(-n // bn), -(-k // bk)), n_dim=0,
                              n_per=bn, k_dim=1)]

        def convert(t, n, k, name):
            return F.fp8_block_to_qweight(t["weight"], t["weight_scale_inv"], block=(bn, bk), name=name)

        # DeepSeek-style W8A8: activations quantized to e4m3 per token and group of bk channels, dynamically
        act = ActDesc("float8_e4m3fn", ScaleSpec("group", "float32", group_size=bk)) \
            if cfg.get("activation_scheme", "dynamic") == "dynamic" else ActDesc()
        return LayerScheme(f"fp8 block {bn}x{bk}", tensors, convert, act)
    if cfg.get("activation_scheme", "dynamic") != "dynamic":
        raise HummingConfigError("fp8 checkpoints with static activation scales are not supported; use dynamic")
    tensors = [TensorSpec("weight", torch.float8_e4m3fn, lambda n, k: (n, k), n_dim=0, k_dim=1),
               TensorSpec("weight_scale", torch.float32, lambda n, k: (1,), per_shard=True)]

    def convert(t, n, k, name):
        return F.fp8_tensor_to_qweight(t["weight"], t["weight_scale"], name=name)

    return LayerScheme("fp8 per-tensor", tensors, convert, ActDesc("float8_e4m3fn", ScaleSpec("tensor", "float32")))


def native_scheme(desc: WeightDesc, act: ActDesc, has_perm: bool = False) -> LayerScheme:
    d = desc
    tensors = [TensorSpec("qweight", torch.int32, lambda n, k: (n, _pw(k, d.bits)), n_dim=0, k_dim=1)]
    if d.scale is not None:
        sdt = d.scale.dtype.torch_dtype if d.scale.dtype.bits > 8 else torch.uint8
        per = d.scale.block[0] if d.scale.granularity == "block" else 1
        if d.scale.granularity == "tensor":
            raise HummingConfigError(f"native format {d}: per-tensor first-level scales cannot be split across fused "
                                     f"shards; store per-channel scales")
        tensors.append(TensorSpec("scale", sdt, lambda n, k: d.num_scale_groups(n, k), n_dim=0, n_per=per))
        if d.zero_point is not None:
            zdt = torch.uint8 if d.zero_point == "int" else sdt
            tensors.append(TensorSpec("zero", zdt, lambda n, k: d.num_scale_groups(n, k), n_dim=0, n_per=per))
    if d.scale2 is not None:
        if d.scale2.granularity == "tensor":
            tensors.append(TensorSpec("scale2", torch.float32, lambda n, k: (1,), per_shard=True))
        else:
            tensors.append(TensorSpec("scale2", torch.float32, lambda n, k: (n,), n_dim=0))
    if has_perm:
        tensors.append(TensorSpec("k_perm", torch.int64, lambda n, k: (k,), k_dim=0))

    def convert(t, n, k, name):
        return F.native_to_qweight(dict(t), d, (n, k), name=name)

    return LayerScheme(f"humming native {d}", tensors, convert, act)


def online_scheme(desc: WeightDesc, act: ActDesc) -> LayerScheme:
    return LayerScheme(f"online {desc}", [], lambda t, n, k, name: None, act, online=desc)


# ------------------------------------------------------------------------------------------------ config parsing
def _matches(rule: str, name: str) -> bool:
    if rule.startswith("re:"):
        return re.match(rule[3:], name) is not None
    return name == rule or name.endswith("." + rule) or rule in name.split(".")


def parse_weight_desc(s: Any, where: str) -> Tuple[WeightDesc, Optional[ActDesc]]:
    if isinstance(s, WeightDesc):
        return s, None
    if not isinstance(s, str) or not s.strip():
        raise HummingConfigError(f"{where}: a weight description string is required, e.g. 'w:uint4b8,s:g128:bfloat16'"
                                 f" or one of {', '.join(sorted(NAMED_FORMATS))}")
    key = s.strip().lower()
    if key in NAMED_FORMATS:
        w, a = named_format(key)
        return w, a
    try:
        return WeightDesc.parse(s), None
    except DescError as e:
        raise HummingConfigError(f"{where}: {e}") from None


class CheckpointConfig:
    """The checkpoint's quantization_config, answering per layer: skipped?  which scheme?"""

    def __init__(self, cfg: Optional[dict], online_env: Optional[str] = None):
        cfg = dict(cfg or {})
        self.raw = cfg
        self.method = str(cfg.get("quant_method", "") or "").lower()
        self.ignore: List[str] = []
        self.dynamic_skip: List[str] = []
        self._default: Optional[LayerScheme] = None
        self._groups: List[Tuple[List[str], LayerScheme]] = []
        self.act_override: Optional[ActDesc] = None
        m = self.method
        if not cfg or (m == "humming" and "weight" not in cfg and "layers" not in cfg):
            spec = cfg.get("weight") if cfg else None
            spec = spec or online_env
            if not spec:
                raise HummingConfigError(
                    "--quantization humming on a checkpoint without a quantization_config needs a target description "
                    f"for online quantization: set {ONLINE_ENV}='w:uint4b8,s:g128:bfloat16' or pass --hf-overrides "
                    "'{\"quantization_config\": {\"quant_method\": \"humming\", \"weight\": \"<description>\"}}'")
            cfg = {"quant_method": "humming", "weight": spec, **{k: v for k, v in cfg.items() if k != "weight"}}
            self.method = m = "humming"
        if m == "gptq":
            self._default = gptq_scheme(cfg)
            self.ignore = list(cfg.get("modules_to_not_convert") or [])
            self.dynamic_skip = [k[2:] for k in (cfg.get("dynamic") or {}) if k.startswith("-:")]
        elif m == "awq":
            self._default = awq_scheme(cfg)
            self.ignore = list(cfg.get("modules_to_not_convert") or [])
        elif m == "compressed-tensors":
            self.ignore = list(cfg.get("ignore") or [])
            for gname, group in (cfg.get("config_groups") or {}).items():
                if not group.get("weights"):
                    continue
                self._groups.append((list(group.get("targets") or ["Linear"]), ct_scheme(group, cfg.get("format"))))
            if not self._groups:
                raise HummingConfigError("compressed-tensors config has no config_groups with weights")
        elif m in ("modelopt", "modelopt_fp4"):
            q = cfg.get("quantization", cfg)
            self._default = modelopt_scheme(q)
            self.ignore = list(q.get("exclude_modules") or cfg.get("ignore") or [])
        elif m == "fp8":
            self._default = fp8_scheme(cfg)
            self.ignore = list(cfg.get("ignored_layers") or cfg.get("modules_to_not_convert") or [])
        elif m == "mxfp4":
            # gpt-oss style: only the MoE experts are MXFP4, linear layers are bf16
            self._default = None
            self.ignore = []
        elif m == "humming":
            self.ignore = list(cfg.get("ignore") or [])
            act = ActDesc.parse(cfg["act"]) if cfg.get("act") else None
            if "layers" in cfg:           # our native checkpoint: {"layers": {prefix: {"weight": desc, ...}}}
                self._native = {p: v for p, v in cfg["layers"].items()}
                self._default = None
            else:
                w, a = parse_weight_desc(cfg["weight"], "humming quantization_config 'weight'")
                self._default = online_scheme(w, act or a or ActDesc())
        else:
            raise HummingConfigError(
                f"quant_method {self.method!r} is not supported by --quantization humming; supported: gptq, awq, "
                f"compressed-tensors, modelopt (NVFP4), fp8 (block / per-tensor), mxfp4 (MoE), humming")

    # ----------------------------------------------------------------------------------------------- queries
    def is_skipped(self, names: Sequence[str]) -> bool:
        for name in names:
            if "lm_head" in name.split("."):
                return True
            if any(_matches(r, name) for r in self.ignore):
                return True
            if any(re.match(r, name) for r in self.dynamic_skip):
                return True
        return False

    def scheme_for(self, names: Sequence[str], kind: str = "Linear") -> Optional[LayerScheme]:
        """None: leave unquantized.  ``names``: the unfused module names of the layer (all must agree)."""
        if self.is_skipped(names):
            return None
        if self.method == "humming" and getattr(self, "_native", None) is not None:
            spec = None
            for n in names:
                s = self._native.get(n)
                if spec is not None and s != spec:
                    raise HummingConfigError(f"fused layer {list(names)}: shards have different descriptions")
                spec = s
            if spec is None:
                return None
            w, a = parse_weight_desc(spec["weight"] if isinstance(spec, dict) else spec, f"layer {names[0]!r}")
            act = ActDesc.parse(spec["act"]) if isinstance(spec, dict) and spec.get("act") else (a or ActDesc())
            return native_scheme(w, act, bool(isinstance(spec, dict) and spec.get("k_perm")))
        if self._groups:
            for targets, scheme in self._groups:
                if any(t == kind or t == "Linear" or any(_matches(t, n) for n in names) for t in targets):
                    return scheme
            return None
        return self._default


def parse_checkpoint_config(cfg: Optional[dict]) -> CheckpointConfig:
    return CheckpointConfig(cfg, os.environ.get(ONLINE_ENV))


# ------------------------------------------------------------------------------------------ vLLM config class
try:  # the class must live at module level so vLLM can pickle configs into its engine processes
    from vllm.model_executor.layers.quantization.base_config import QuantizationConfig as _QuantizationConfig
except ImportError:  # core use without vLLM
    _QuantizationConfig = None


if _QuantizationConfig is not None:
    class HummingVllmConfig(_QuantizationConfig):
        """vllm-humming: any supported checkpoint format served through our kernels (plain torch off CUDA)."""

        def __init__(self, full_config: Optional[dict] = None):
            super().__init__()
            self.full_config = dict(full_config or {})
            self.ckpt = parse_checkpoint_config(self.full_config)

        # schemes hold closures: pickle the checkpoint dict and rebuild them in the receiving process
        def __getstate__(self):
            d = self.__dict__.copy()
            d.pop("ckpt", None)
            return d

        def __setstate__(self, d):
            self.__dict__.update(d)
            self.ckpt = parse_checkpoint_config(self.full_config)

        def __repr__(self):
            return f"HummingVllmConfig(quant_method={self.ckpt.method!r})"

        @classmethod
        def get_name(cls):
            return "humming"

        @classmethod
        def get_supported_act_dtypes(cls):
            return [torch.bfloat16, torch.float16, torch.float32]

        @classmethod
        def get_min_capability(cls) -> int:
            return 70

        @staticmethod
        def get_config_filenames():
            return []

        @classmethod
        def from_config(cls, config):
            return cls(config)

        @classmethod
        def override_quantization_method(cls, hf_quant_cfg, user_quant, hf_config=None):
            if user_quant == "humming":
                return "humming"
            return None

        def apply_vllm_mapper(self, hf_to_vllm_mapper):
            if self.ckpt.ignore:
                self.ckpt.ignore = hf_to_vllm_mapper.apply_list(self.ckpt.ignore)

        def _unfused_names(self, prefix: str) -> List[str]:
            proj = prefix.rsplit(".", 1)[-1]
            mapping = getattr(self, "packed_modules_mapping", None) or {}
            if proj in mapping:
                base = prefix[: -len(proj)]
                return [base + p for p in mapping[proj]]
            return [prefix]

        def get_quant_method(self, layer, prefix: str):
            from vllm.model_executor.layers.linear import LinearBase, UnquantizedLinearMethod

            from ..linear.method import HummingLinearMethod
            from ..moe.method import is_moe_layer, make_moe_method

            if is_moe_layer(layer):
                return make_moe_method(self, layer, prefix)
            if isinstance(layer, LinearBase):
                scheme = self.ckpt.scheme_for(self._unfused_names(prefix))
                if scheme is None:
                    return UnquantizedLinearMethod()
                return HummingLinearMethod(scheme, prefix)
            return None
else:
    HummingVllmConfig = None


def make_vllm_config_class():
    if HummingVllmConfig is None:
        raise ImportError("vllm is not installed: the humming QuantizationConfig needs vLLM")
    return HummingVllmConfig
