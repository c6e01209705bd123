"""The vLLM LinearMethod behind ``--quantization humming``.

``create_weights`` registers the checkpoint's own tensors (a :class:`~vllm_humming.quant_config.vllm_config.
LayerScheme`) as vLLM parameters, so vLLM's weight loaders (v2) shard and fuse them:

* column-parallel / merged (gate_up) / qkv / replicated layers: every tensor that runs along N is a column parameter
  (packed along N where the format packs N), per-shard scalars are ``PerTensorScaleParameter`` [num_shards];
* row-parallel layers (TP > 1): tensors are loaded **unsharded**, converted once, and cut to this rank's input
  channels by :func:`vllm_humming.linear.shard.slice_k` -- exact for group scales that straddle the shard boundary
  and for GPTQ act-order, whose groups are scattered over K.

``process_weights_after_loading`` converts each logical shard with the format converter, concatenates them along N,
and calls :func:`vllm_humming.ops.prepare_linear`; ``apply`` calls :func:`vllm_humming.ops.humming_linear` (our
kernel on CUDA, the plain-torch fallback elsewhere).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional

import torch

from vllm.model_executor.layers.linear import LinearMethodBase
from vllm.model_executor.parameter import (BasevLLMParameter, ChannelQuantScaleParameter, ModelWeightParameter,
                                           PerTensorScaleParameter)

from ..desc import DescError
from ..ops import compile_in_background, humming_linear, prepare_linear
from ..qweight import QuantizedWeight
from ..reference import quantize_weight
from .shard import ShardedWeight, apply_gather, slice_k

__all__ = ["HummingLinearMethod"]


class _NColumnParameter(ChannelQuantScaleParameter):
    """A tensor sharded / fused along its N dimension, where one entry covers ``n_per`` output rows (packed codes,
    block scales).  vLLM passes shard offsets in output rows; we convert them to entries."""

    def __init__(self, data, n_per: float = 1.0, **kw):
        self.n_per = n_per
        super().__init__(data=data, **kw)

    def _adj(self, kw):
        off, size = kw["shard_offset"], kw["shard_size"]
        per = Fraction(self.n_per)
        if per != 1:
            a, b = Fraction(off) / per, Fraction(off + size) / per
            if a.denominator != 1 or (b.denominator != 1 and off + size != getattr(self, "_n_total", None)):
                raise DescError(f"shard at rows [{off}, {off + size}) is not aligned to the {per} rows per entry "
                                f"of this packed / blocked tensor")
            kw = dict(kw, shard_offset=int(a), shard_size=int(-(-b // 1)) - int(a))
        return kw

    def load_merged_column_weight(self, loaded_weight, **kw):
        super().load_merged_column_weight(loaded_weight, **self._adj(kw))

    def load_qkv_weight(self, loaded_weight, **kw):
        super().load_qkv_weight(loaded_weight, **self._adj(kw))


class _IgnoredParameter(BasevLLMParameter):
    def _assert_and_load(self, loaded_weight):
        return None

    def load_column_parallel_weight(self, loaded_weight):
        return None

    def load_row_parallel_weight(self, loaded_weight):
        return None

    def load_merged_column_weight(self, loaded_weight, **kw):
        return None

    def load_qkv_weight(self, loaded_weight, **kw):
        return None


class _SameForAllShards(BasevLLMParameter):
    """A per-input-channel tensor (GPTQ / compressed-tensors act-order ``g_idx``) that every logical shard of a fused
    layer stores.  All shards see the same input, so their values must agree; a mismatch is an error, never a silent
    last-shard-wins."""

    def _assert_and_load(self, loaded_weight):
        if getattr(self, "hm_loaded", False) and not torch.equal(self.data, loaded_weight.to(self.data.dtype)):
            raise DescError(f"fused layer: the shards' {getattr(self, 'hm_spec').name!r} tensors differ (act-order "
                            f"permutations per shard); vllm-humming needs one input-channel order per fused layer")
        super()._assert_and_load(loaded_weight)
        self.hm_loaded = True


def _record_dtype(loader):
    """Wrap a weight loader so a float scale keeps the checkpoint's exact dtype (we load into float32)."""

    def load(param, loaded_weight, *args, **kwargs):
        param.hm_ckpt_dtype = loaded_weight.dtype
        return loader(param, loaded_weight, *args, **kwargs)

    return load


class HummingLinearMethod(LinearMethodBase):
    def __init__(self, scheme, prefix: str = ""):
        self.scheme = scheme
        self.prefix = prefix

    # ------------------------------------------------------------------------------------------ create
    def create_weights(self, layer, input_size_per_partition: int, output_partition_sizes: List[int],
                       input_size: int, output_size: int, params_dtype: torch.dtype, **extra_weight_attrs):
        weight_loader = extra_weight_attrs.get("weight_loader")
        row_parallel = input_size_per_partition != input_size
        tp_rank = int(getattr(layer, "tp_rank", 0) or 0)
        k = input_size if row_parallel else input_size_per_partition
        n = sum(output_partition_sizes)
        layer.hm_row_parallel = row_parallel
        layer.hm_k_range = (tp_rank * input_size_per_partition, (tp_rank + 1) * input_size_per_partition) \
            if row_parallel else (0, k)
        layer.hm_shards = list(output_partition_sizes)
        layer.hm_params_dtype = params_dtype
        layer.hm_k = k
        scheme = self.scheme
        if scheme.online is not None:
            w = ModelWeightParameter(data=torch.empty(n, input_size_per_partition, dtype=params_dtype),
                                     input_dim=1, output_dim=0, weight_loader=weight_loader)
            layer.register_parameter("weight", w)
            layer.hm_k_range = (0, input_size_per_partition)
            layer.hm_row_parallel = False
            return
        nsh = len(output_partition_sizes)
        for spec in scheme.tensors:
            shape = spec.shape(n, k)
            dtype = spec.dtype
            loader = _record_dtype(weight_loader) if spec.float_scale else weight_loader
            data = torch.empty(shape, dtype=dtype) if not spec.optional else torch.full(shape, -1, dtype=dtype) \
                if dtype in (torch.int32, torch.int64) else torch.empty(shape, dtype=dtype)
            if spec.ignore_load:
                p = _IgnoredParameter(data=data, weight_loader=weight_loader)
            elif spec.per_shard:
                p = PerTensorScaleParameter(data=torch.zeros(nsh, dtype=dtype), weight_loader=loader)
            elif spec.n_dim is None and spec.k_dim is not None and nsh > 1:
                p = _SameForAllShards(data=data, weight_loader=loader)
            elif spec.n_dim is None or row_parallel:
                p = BasevLLMParameter(data=data, weight_loader=loader)
            else:
                p = _NColumnParameter(data, n_per=spec.n_per, output_dim=spec.n_dim, weight_loader=loader)
                p._n_total = n
            p.hm_spec = spec
            layer.register_parameter(spec.name, p)

    # ------------------------------------------------------------------------------------------ convert
    def _local_tensors(self, layer) -> Dict[str, torch.Tensor]:
        out = {}
        for spec in self.scheme.tensors:
            p = getattr(layer, spec.name)
            t = p.data
            if spec.float_scale and getattr(p, "hm_ckpt_dtype", None) is not None:
                t = t.to(p.hm_ckpt_dtype)
            if spec.optional and t.dtype in (torch.int32, torch.int64) and t.numel() and bool((t == -1).all()):
                continue           # never loaded (e.g. a GPTQ checkpoint without g_idx)
            out[spec.name] = t
        return out

    def _shard_tensors(self, tensors: Dict[str, torch.Tensor], i: int, offsets: List[int], sizes: List[int]):
        out = {}
        for spec in self.scheme.tensors:
            if spec.name not in tensors:
                continue
            t = tensors[spec.name]
            if spec.per_shard:
                out[spec.name] = t.reshape(-1)[i:i + 1] if t.numel() > 1 else t.reshape(1)
            elif spec.n_dim is None or len(sizes) == 1:
                out[spec.name] = t
            else:
                per = Fraction(spec.n_per)
                a, b = offsets[i], offsets[i] + sizes[i]
                ea, eb = Fraction(a) / per, Fraction(b) / per
                if ea.denominator != 1:
                    raise DescError(f"layer {self.prefix!r} ({self.scheme.fmt}): fused shard at rows [{a}, {b}) is not "
                                    f"aligned to the {per}-row packing/blocks of tensor {spec.name!r}")
                end = int(-(-eb // 1))
                out[spec.name] = t.narrow(spec.n_dim, int(ea), end - int(ea))
        return out

    def build_qweight(self, layer) -> QuantizedWeight:
        """The canonical weight of this layer's local N and its (full or local) K."""
        scheme = self.scheme
        sizes = layer.hm_shards
        k = layer.hm_k
        if scheme.online is not None:
            w = layer.weight.data
            return quantize_weight(w.to(torch.float32), scheme.online, name=self.prefix)
        tensors = self._local_tensors(layer)
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
        parts = []
        for i, ni in enumerate(sizes):
            t = self._shard_tensors(tensors, i, offsets, sizes)
            parts.append(scheme.convert(t, ni, k, f"{self.prefix}[{i}]" if len(sizes) > 1 else self.prefix))
        if len(parts) == 1:
            qw = parts[0]
        else:
            from ..quant_config.formats import concat_shards

            qw = concat_shards(parts, name=self.prefix)
        return qw

    def process_weights_after_loading(self, layer) -> None:
        if getattr(layer, "hm_prepared", None) is not None:
            return
        device = next((p.device for p in layer.parameters()), torch.device("cpu"))
        qw = self.build_qweight(layer)
        a, b = layer.hm_k_range
        if layer.hm_row_parallel:
            sw = slice_k(qw, a, b)
        else:
            sw = ShardedWeight(qw)
        static = None if self.scheme.online is not None else self.scheme.static_value(self._local_tensors(layer))
        for name in [s.name for s in self.scheme.tensors] + (["weight"] if self.scheme.online is not None else []):
            if hasattr(layer, name):
                delattr(layer, name)
        act = self.scheme.act
        prepared = prepare_linear(sw.qw.to(device), act, out_dtype=layer.hm_params_dtype,
                                  static_act_scale=None if static is None else static.to(device))
        layer.hm_prepared = prepared
        layer.hm_gather = sw.gather
        compile_in_background(prepared)   # (while vLLM loads the other layers: jit/background.py)
        # keep the canonical tensors visible to vLLM (device moves, memory accounting)
        layer.register_buffer("hm_qweight", prepared.qw.qweight, persistent=False)

    # ------------------------------------------------------------------------------------------ forward
    def apply(self, layer, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        pl = layer.hm_prepared
        x2 = apply_gather(x, layer.hm_gather)
        y = humming_linear(x2, pl)
        if bias is not None:
            y = y + bias
        return y
