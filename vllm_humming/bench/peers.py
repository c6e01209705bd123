"""The implementations we compare against.

* cuBLAS bf16 lives in :mod:`harness` (``torch.nn.functional.linear`` on bf16 weight copies).
* :class:`UpstreamHumming`: the upstream ``humming-kernels`` wheel (version 0.1.19 is the reference peer).  It is an
  OPTIONAL peer, never a dependency: when ``import humming`` fails the adapter is absent and every upstream cell
  reads "unavailable: <reason>".

The adapter only uses upstream's public layer API (as in its README)::

    layer = humming.layer.HummingLayer(shape_n=N, shape_k=K, weight_config={...}, input_config={...},
                                       torch_dtype=torch.bfloat16).cuda()
    layer.load_from_unquantized(w_bf16)   # upstream quantizes the same bf16 matrix with its own quantizer
    layer.transform()                     # repack into its kernel layout
    y = layer(x)                          # first call JIT-compiles one kernel per M bucket of its heuristics

``UPSTREAM_CONFIGS`` maps each bench format name to the equivalent upstream weight/input configuration (upstream's
field names: b_dtype, bs_dtype, weight_scale_group_size[_n], weight_scale_2_type, has_zero_point for weights;
``dtype`` (its alias of a_dtype) for inputs, whose default quantization mode for an 8-bit dtype with no group size
is dynamic per token).
Upstream stores symmetric integers as offset-binary codes, so its "int4" is our ``uint4b8`` grid (scale * (q - 8)).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

from .formats import BenchFormat
from .harness import Case, classify_exception, exc_text, replicate, tensor_bytes

__all__ = ["UPSTREAM_DIST", "UPSTREAM_VERSION", "UPSTREAM_CONFIGS", "UpstreamHumming", "load_upstream"]

UPSTREAM_DIST = "humming-kernels"
UPSTREAM_VERSION = "0.1.19"

# input configs use upstream's "dtype" key: its layer fills "dtype" with the bf16 param dtype when the key is absent
_FP8_TOKEN_IN = {"dtype": "float8e4m3"}          # dynamic per-token fp8 e4m3 (upstream's default with no group)
_INT8_TOKEN_IN = {"dtype": "int8"}

# format name -> (weight_config, input_config or None for bf16 activations)
UPSTREAM_CONFIGS: Dict[str, Tuple[Dict[str, Any], Optional[Dict[str, Any]]]] = {
    "w4a16-int4-g128": ({"b_dtype": "int4", "weight_scale_group_size": 128}, None),
    "w3a16-int3-g128": ({"b_dtype": "int3", "weight_scale_group_size": 128}, None),
    "w2a16-int2-g64": ({"b_dtype": "int2", "weight_scale_group_size": 64}, None),
    "w8a16-int8-channel": ({"b_dtype": "int8"}, None),
    "w4a16-mxfp4": ({"b_dtype": "float4e2m1", "weight_scale_group_size": 32, "bs_dtype": "float8e8m0"}, None),
    "w4a16-nvfp4": ({"b_dtype": "float4e2m1", "weight_scale_group_size": 16, "bs_dtype": "float8e4m3",
                     "weight_scale_2_type": "tensor"}, None),
    "w4a16-int4-g128-zp": ({"b_dtype": "uint4", "weight_scale_group_size": 128, "has_zero_point": True}, None),
    "w8a16-fp8-channel": ({"b_dtype": "float8e4m3"}, None),
    "w8a16-fp8-block": ({"b_dtype": "float8e4m3", "weight_scale_group_size": 128,
                         "weight_scale_group_size_n": 128}, None),
    "w4a8-int4-g128-fp8": ({"b_dtype": "int4", "weight_scale_group_size": 128}, _FP8_TOKEN_IN),
    "w4a8-mxfp4-fp8": ({"b_dtype": "float4e2m1", "weight_scale_group_size": 32, "bs_dtype": "float8e8m0"},
                       _FP8_TOKEN_IN),
    "w8a8-fp8": ({"b_dtype": "float8e4m3"}, _FP8_TOKEN_IN),
    "w8a8-int8": ({"b_dtype": "int8"}, _INT8_TOKEN_IN),
}


def _importer(name: str):
    import importlib

    return importlib.import_module(name)


class UpstreamHumming:
    """Adapter over an imported upstream ``humming`` package (see :func:`load_upstream`)."""

    impl = "upstream"

    def __init__(self, module: Any, layer_cls: Any, version: str, tune_module: Any = None):
        self.module = module
        self.layer_cls = layer_cls
        self.version = version
        self.tune_module = tune_module

    # -------------------------------------------------------------------- discovery
    @classmethod
    def load(cls, importer: Callable[[str], Any] = _importer) -> Tuple[Optional["UpstreamHumming"], str]:
        """(adapter, "") or (None, "unavailable: <reason>").  Any import-time failure means unavailable."""
        try:
            module = importer("humming")
            layer_mod = importer("humming.layer")
            layer_cls = getattr(layer_mod, "HummingLayer")
        except Exception as e:  # ImportError, but also a broken CUDA/toolchain environment at import time
            return None, f"unavailable: {exc_text(e)} (pip install {UPSTREAM_DIST}=={UPSTREAM_VERSION} to compare)"
        version = str(getattr(module, "__version__", "unknown"))
        try:
            tune = importer("humming.tune")
        except Exception:
            tune = None
        return cls(module, layer_cls, version, tune), ""

    def info(self) -> Dict[str, Any]:
        return {"available": True, "version": self.version, "expected_version": UPSTREAM_VERSION,
                "version_matches": self.version == UPSTREAM_VERSION,
                "path": getattr(self.module, "__file__", None)}

    # -------------------------------------------------------------------- building
    @staticmethod
    def configs_for(fmt: BenchFormat) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]]]:
        if fmt.name not in UPSTREAM_CONFIGS:
            raise NotImplementedError(f"no upstream humming configuration for bench format {fmt.name!r}")
        wcfg, icfg = UPSTREAM_CONFIGS[fmt.name]
        # fresh dicts: upstream's layer fills defaults into the dicts it is given
        return dict(wcfg), (dict(icfg) if icfg is not None else None)

    def make_layer(self, fmt: BenchFormat, w) -> Any:
        """One upstream layer holding ``w`` (bf16 [N, K] on CUDA) quantized to ``fmt``, transformed, on CUDA."""
        import torch

        n, k = w.shape
        wcfg, icfg = self.configs_for(fmt)
        kwargs = dict(shape_n=int(n), shape_k=int(k), weight_config=wcfg, torch_dtype=torch.bfloat16)
        if icfg is not None:
            kwargs["input_config"] = icfg
        layer = self.layer_cls(**kwargs).to(w.device)
        layer.load_from_unquantized(w)
        layer.transform()
        return layer

    @staticmethod
    def layer_bytes(layer) -> int:
        """Bytes of the layer's parameters after transform (packed weight, scales, zero points, global scales)."""
        return sum(tensor_bytes(p) for _, p in layer.named_parameters())

    def num_kernels(self, layer) -> Optional[int]:
        """How many GEMM kernels upstream's first call compiles: one per M interval of its heuristics table."""
        cfg = getattr(layer, "humming_config", None)
        fn = getattr(self.tune_module, "get_heuristics_config", None) if self.tune_module is not None else None
        if cfg is None or not callable(fn):
            return None
        try:
            configs = fn(cfg, device=next(iter(layer.parameters())).device)
        except Exception:
            return None
        return len(configs) if isinstance(configs, (list, tuple)) else 1

    def build_case(self, fmt: BenchFormat, w, min_bytes: int) -> Case:
        n, k = w.shape
        case = Case(self.impl, fmt.name, (int(n), int(k)))
        case.info["version"] = self.version
        try:
            wcfg, icfg = self.configs_for(fmt)
            case.info["weight_config"], case.info["input_config"] = wcfg, icfg
            first = self.make_layer(fmt, w)
            case.bytes_per_copy = self.layer_bytes(first)
            layers = replicate(lambda: self.make_layer(fmt, w), first, case.bytes_per_copy, min_bytes)
            case.info["kernels_per_layer"] = self.num_kernels(first)
            case.copies = [(lambda x, layer=layer: layer(x)) for layer in layers]
        except Exception as e:
            case.status, case.reason = classify_exception(e), exc_text(e)
            if case.status == "error" and isinstance(e, AssertionError):
                case.status = "unsupported"   # upstream signals unsupported combinations with asserts
            case.copies = []
        return case


def load_upstream(enabled: bool = True) -> Tuple[Optional[UpstreamHumming], Dict[str, Any]]:
    """(adapter or None, JSON-able info).  ``enabled=False`` (--no-upstream) skips the import entirely."""
    if not enabled:
        return None, {"available": False, "reason": "skipped (--no-upstream)"}
    adapter, reason = UpstreamHumming.load()
    if adapter is None:
        return None, {"available": False, "reason": reason}
    return adapter, adapter.info()
