"""``--moe-backend humming``: our classes in place of vLLM's ``Humming*Experts`` and its humming MoE helpers.

vLLM's MoE oracles (int_wna16, fp8, int8, nvfp4, mxfp4, mxfp8, w4a8) import ``HummingIndexedExperts``,
``HummingGroupedExperts`` and ``BatchedHummingGroupedExperts`` from
``vllm.model_executor.layers.fused_moe.experts.fused_humming_moe`` and convert weights with
``vllm.model_executor.layers.quantization.utils.humming.convert_to_humming_moe_kernel_format`` /
``get_humming_moe_quant_config`` -- in-tree, all of these drive the upstream ``humming-kernels`` package.
:func:`install_moe_experts` replaces those five names with ours, so this route never reaches the upstream package.

At load, :func:`convert_to_humming_moe_kernel_format` turns the oracle's (already TP-sharded) expert tensors into
canonical weights with our format converters.  On a GPU (unless ``HUMMING_MOE_KERNELS=0``) they stay quantized on our
expert-indexed kernels (:class:`vllm_humming.ops.moe_gemm.FusedMoeGemm`);
otherwise they are dequantized once into dense ``w13_weight`` [E, 2I, H] / ``w2_weight`` [E, H, I] and the experts
are the plain-torch FALLBACK (:func:`vllm_humming.moe.fallback.torch_moe_fallback`).  Either way vLLM's routing is
applied exactly as given.  Converted today: the WNA16 oracle's GPTQ, AWQ and compressed-tensors pack-quantized
checkpoints, the fp8 oracle's e4m3 experts (block, channel or tensor scales) and MXFP8 experts, the int8 oracle's
(channel or tensor scales), the mxfp4 oracle's gpt-oss MXFP4 experts and the nvfp4 oracle's compressed-tensors /
ModelOpt experts (one second-level scale per expert).  Expert biases (``w13_bias`` / ``w2_bias``) and the swigluoai
parameters vLLM passes (alpha, clamp limit) are applied on both paths.  The experts compute with bf16 / fp16
activations (a checkpoint's activation quantization is not applied to MoE experts, as under ``--quantization
humming``).  Other layouts (the W4A8 oracle's) raise :class:`HummingMoEBackendUnsupported` naming the working
alternative (``--quantization humming``, whose own MoE method covers every checkpoint format we read).
"""

from __future__ import annotations

import logging
from typing import Dict, List, Optional

import torch

from ..qweight import QuantizedWeight
from ..quant_config import formats as F
from .fallback import torch_moe_fallback

logger = logging.getLogger(__name__)

__all__ = ["install_moe_experts", "HummingMoEBackendUnsupported", "OUR_EXPERTS",
           "convert_to_humming_moe_kernel_format", "get_humming_moe_quant_config"]

OUR_EXPERTS: Dict[str, type] = {}
# data_ptr of a converted layer's w13_weight placeholder -> its FusedMoeGemm (the modular kernel hands `apply` the
# weights, not the layer)
_KERNEL_MOE: Dict[int, object] = {}
# data_ptr of a converted layer's w13_weight (either path) -> {"w13_bias", "w2_bias" ([E, N] or None), "activation_kw"
# (the swigluoai alpha / limit from get_humming_moe_quant_config)}: vLLM hands these to its experts through the quant
# config, ours find them by the weight's pointer as they find the kernels
_LAYER_EXTRAS: Dict[int, dict] = {}


class HummingMoEBackendUnsupported(NotImplementedError):
    pass


def _refuse(what: str):
    raise HummingMoEBackendUnsupported(
        f"vllm-humming: --moe-backend humming cannot serve {what} yet (no converter for this oracle's expert "
        f"layout; the upstream humming-kernels package is deliberately not used). Supported "
        f"here: GPTQ, AWQ and compressed-tensors pack-quantized int experts, fp8 (block / channel / tensor) and int8 "
        f"(channel / tensor) experts, gpt-oss MXFP4, compressed-tensors / ModelOpt NVFP4 and MXFP8 experts. Serve the "
        f"model "
        f"with --quantization "
        f"humming instead: its MoE method reads every checkpoint format vllm-humming supports.")


# ------------------------------------------------------------------------------------------- weight conversion
def _t(layer, name: str) -> Optional[torch.Tensor]:
    p = getattr(layer, name, None)
    return None if p is None else p.data


def _expert_qweights(layer, side: str, schema: dict) -> List[QuantizedWeight]:
    """The E canonical weights of one side ("w13" / "w2") of a WNA16 layer, from the oracle's tensors."""
    m = str(schema.get("quant_method", "")).lower()
    out = []
    if m == "compressed-tensors" and schema.get("format", "pack-quantized") == "pack-quantized":
        packed = _t(layer, f"{side}_weight_packed")
        scale = _t(layer, f"{side}_weight_scale")
        zp = _t(layer, f"{side}_weight_zero_point")
        bits = int(schema["num_bits"])
        e, n, _ = packed.shape
        k = scale.shape[2] * int(schema["group_size"]) if schema.get("group_size") else packed.shape[2] * 32 // bits
        k = min(k, packed.shape[2] * 32 // bits)
        for i in range(e):
            out.append(F.ct_pack_quantized_to_qweight(
                packed[i], scale[i], torch.tensor([n, k]), None if zp is None else zp[i], num_bits=bits,
                group_size=schema.get("group_size"), strategy=schema.get("strategy"),
                symmetric=bool(schema.get("symmetric", True)), name=f"{_layer_name(layer)}.{side}[{i}]"))
    elif m == "gptq":
        qweight, scales, qzeros = _t(layer, f"{side}_qweight"), _t(layer, f"{side}_scales"), _t(layer, f"{side}_qzeros")
        g_idx = _t(layer, f"{side}_g_idx")
        for i in range(qweight.shape[0]):
            out.append(F.gptq_to_qweight(qweight[i], qzeros[i], scales[i], None if g_idx is None else g_idx[i],
                                         bits=int(schema["bits"]), group_size=int(schema["group_size"]),
                                         sym=bool(schema.get("sym", True)), desc_act=bool(schema.get("desc_act", False)),
                                         name=f"{_layer_name(layer)}.{side}[{i}]"))
    elif m == "awq":
        qweight, scales, qzeros = _t(layer, f"{side}_qweight"), _t(layer, f"{side}_scales"), _t(layer, f"{side}_qzeros")
        for i in range(qweight.shape[0]):
            out.append(F.awq_to_qweight(qweight[i], qzeros[i], scales[i], bits=int(schema["bits"]),
                                        group_size=int(schema["group_size"]), name=f"{_layer_name(layer)}.{side}[{i}]"))
    elif m == "fp8" or (m == "compressed-tensors" and schema.get("format") in ("float-quantized", "int-quantized")):
        out = _eight_bit_experts(layer, side, schema)
    elif m == "gpt_oss_mxfp4":
        out = _mxfp4_experts(layer, side)
    elif m == "compressed-tensors" and schema.get("format") == "nvfp4-pack-quantized":
        out = _nvfp4_experts(layer, side, "compressed-tensors")
    elif m == "modelopt" and str(schema.get("quant_algo", "")).lower() == "nvfp4":
        out = _nvfp4_experts(layer, side, "modelopt")
    elif m == "modelopt" and str(schema.get("quant_algo", "")).lower() == "mxfp8":
        out = _mxfp8_experts(layer, side)
    else:
        _refuse(f"MoE expert weights described as {schema!r}")
    return out


def _mxfp4_experts(layer, side: str) -> List[QuantizedWeight]:
    """The mxfp4 oracle's gpt-oss experts: ``{side}_weight`` uint8 [E, N, K/2] (two e2m1 codes per byte, element 2j in
    the low nibble) and ``{side}_weight_scale`` uint8 [E, N, K/32] (e8m0 exponents) -- per expert exactly the
    checkpoint's blocks [N, K/32, 16] and scales, so :func:`formats.mxfp4_blocks_to_qweight` reads them.  The w13 rows
    stay as vLLM holds them (gpt-oss alternates gate / up rows; swigluoai takes them that way)."""
    w, sc = _t(layer, f"{side}_weight"), _t(layer, f"{side}_weight_scale")
    if w is None or sc is None or w.dim() != 3 or sc.dim() != 3 or w.dtype != torch.uint8:
        _refuse(f"MoE layer {_layer_name(layer)}: gpt-oss MXFP4 {side} weights / scales missing or not uint8 "
                f"[E, N, K/2] / [E, N, K/32]")
    e, n, half_k = w.shape
    if half_k % 16 or sc.shape != (e, n, half_k // 16):
        _refuse(f"MoE layer {_layer_name(layer)}: gpt-oss MXFP4 {side} weights {list(w.shape)} with scales "
                f"{list(sc.shape)} (K must be a multiple of 32: a tensor-parallel shard that cuts a 32-column scale "
                f"group is not supported)")
    return [F.mxfp4_blocks_to_qweight(w[i].reshape(n, half_k // 16, 16), sc[i],
                                      name=f"{_layer_name(layer)}.{side}[{i}]") for i in range(e)]


def _mxfp8_experts(layer, side: str) -> List[QuantizedWeight]:
    """The fp8 oracle's MXFP8 experts (its schema ``modelopt`` / ``mxfp8`` covers ModelOpt and compressed-tensors):
    e4m3 codes [E, N, K] (one byte each) and e8m0 group-32 scales [E, N, K/32] (uint8 exponents or float8_e8m0fnu)."""
    from ..desc import ScaleSpec, WeightDesc
    from ..dtypes import E4M3, E8M0
    from ..quant_config.formats import _bytes_to_words

    w, sc = _t(layer, f"{side}_weight"), _t(layer, f"{side}_weight_scale")
    what = f"MoE layer {_layer_name(layer)}: MXFP8 {side}"
    if w is None or sc is None or w.dim() != 3 or w.dtype not in (torch.float8_e4m3fn, torch.uint8):
        _refuse(f"{what} weights / scales missing or not float8_e4m3fn [E, N, K]")
    e, n, k = w.shape
    if k % 32 or tuple(sc.shape) != (e, n, k // 32) or sc.element_size() != 1:
        _refuse(f"{what}: weights {list(w.shape)} with scales {sc.dtype} {list(sc.shape)} (e8m0 group-32 scales; K "
                f"must be a multiple of 32)")
    desc = WeightDesc(E4M3, ScaleSpec("group", E8M0, group_size=32))
    codes, exps = w.contiguous().view(torch.uint8), sc.contiguous().view(torch.uint8)
    return [QuantizedWeight(desc, (n, k), _bytes_to_words(codes[i]), exps[i].contiguous(),
                            name=f"{_layer_name(layer)}.{side}[{i}]") for i in range(e)]


def _nvfp4_experts(layer, side: str, kind: str) -> List[QuantizedWeight]:
    """The nvfp4 oracle's experts: e2m1 codes uint8 [E, N, K/2] (``{side}_weight``; compressed-tensors also aliases it
    as ``{side}_weight_packed``), e4m3 group-16 scales [E, N, K/16] and the second-level scale -- compressed-tensors'
    ``{side}_weight_global_scale`` (a divisor) or ModelOpt's ``{side}_weight_scale_2`` (a multiplier), per expert and,
    for w13, per shard [E, 2].  Our weights carry one second-level scale per expert, so a w13 whose gate and up shards
    have different ones is refused (vLLM's other NVFP4 backends keep the gate's and warn)."""
    w = _t(layer, f"{side}_weight")
    sc = _t(layer, f"{side}_weight_scale")
    g = _t(layer, f"{side}_weight_global_scale" if kind == "compressed-tensors" else f"{side}_weight_scale_2")
    what = f"MoE layer {_layer_name(layer)}: {kind} NVFP4 {side}"
    if w is None or sc is None or g is None or w.dim() != 3 or w.dtype not in (torch.uint8, torch.int8):
        _refuse(f"{what} weights / scales / second-level scale missing or not uint8 [E, N, K/2]")
    e, n, half_k = w.shape
    k = 2 * half_k
    if k % 16 or tuple(sc.shape) != (e, n, k // 16) or g.numel() not in (e, 2 * e):
        _refuse(f"{what}: weights {list(w.shape)}, scales {list(sc.shape)}, second-level scale {list(g.shape)} "
                f"(K must be a multiple of 16; one second-level scale per expert, or per gate / up shard)")
    per = g.reshape(e, -1).to(torch.float32)
    if per.shape[1] == 2 and not torch.equal(per[:, 0], per[:, 1]):
        bad = (per[:, 0] != per[:, 1]).nonzero().flatten()[:4].tolist()
        _refuse(f"{what}: the gate and up shards have different second-level scales (experts {bad}...); these "
                f"experts take one per expert")
    name = _layer_name(layer)
    if kind == "compressed-tensors":
        return [F.ct_nvfp4_to_qweight(w[i], sc[i], per[i, :1], weight_shape=torch.tensor([n, k]),
                                      name=f"{name}.{side}[{i}]") for i in range(e)]
    return [F.modelopt_nvfp4_to_qweight(w[i], sc[i], per[i, :1], k=k, name=f"{name}.{side}[{i}]") for i in range(e)]


def _expert_biases(layer, q13: List[QuantizedWeight], q2: List[QuantizedWeight]):
    """The layer's ``w13_bias`` [E, N13] / ``w2_bias`` [E, H] (either may be absent), checked against the experts."""
    out = []
    for side, qws in (("w13", q13), ("w2", q2)):
        b = _t(layer, f"{side}_bias")
        if b is not None and (b.dim() != 2 or b.shape[0] != len(qws) or b.shape[1] != qws[0].shape[0]):
            _refuse(f"MoE layer {_layer_name(layer)}: {side}_bias of shape {list(b.shape)} for {len(qws)} experts of "
                    f"{qws[0].shape[0]} output rows")
        out.append(b)
    return out


def _eight_bit_experts(layer, side: str, schema: dict) -> List[QuantizedWeight]:
    """fp8 e4m3 (the fp8 oracle: 128x128-style blocks, or compressed-tensors channel / tensor / block) and int8 (the
    int8 oracle: compressed-tensors channel / tensor) experts: codes [E, N, K] one byte each, fp32 scales.  Per-tensor
    scales become channel scales -- a [E, 2] pair (gate, up) of a w13 side covers each half's rows exactly."""
    from ..desc import ScaleSpec, WeightDesc
    from ..dtypes import E4M3, FP32, INT8
    from ..quant_config.formats import _bytes_to_words

    m = str(schema.get("quant_method", "")).lower()
    is_int = schema.get("format") == "int-quantized"
    w = _t(layer, f"{side}_weight")
    if m == "fp8":
        scale = _t(layer, f"{side}_weight_scale_inv")
        strategy, block = "block", schema.get("weight_block_size")
    else:
        scale = _t(layer, f"{side}_weight_scale")
        strategy, block = str(schema.get("strategy", "channel")), schema.get("block_structure")
    if w is None or scale is None or w.dim() != 3:
        _refuse(f"MoE layer {_layer_name(layer)}: {side} weights / scales missing for {schema!r}")
    e, n, k = w.shape
    code_dtype = INT8 if is_int else E4M3
    want = torch.int8 if is_int else torch.float8_e4m3fn
    if w.dtype != want:
        _refuse(f"MoE layer {_layer_name(layer)}: {side} weights are {w.dtype}, the schema {schema!r} says {want}")
    scale = scale.to(torch.float32)
    if strategy == "block":
        if is_int or not block or len(block) != 2:
            _refuse(f"MoE layer {_layer_name(layer)}: block scales {schema!r}")
        bn, bk = int(block[0]), int(block[1])
        desc = WeightDesc(code_dtype, ScaleSpec("block", FP32, block=(bn, bk)))
        scales = scale.reshape(e, -(-n // bn), -(-k // bk))
    elif strategy == "channel":
        desc = WeightDesc(code_dtype, ScaleSpec("channel", FP32))
        scales = scale.reshape(e, n, 1)
    elif strategy == "tensor":
        desc = WeightDesc(code_dtype, ScaleSpec("channel", FP32))
        per = scale.reshape(e, -1)
        if per.shape[1] == 1:
            scales = per.reshape(e, 1, 1).expand(e, n, 1)
        elif side == "w13" and per.shape[1] == 2 and n % 2 == 0:
            scales = per.repeat_interleave(n // 2, dim=1).reshape(e, n, 1)
        else:
            _refuse(f"MoE layer {_layer_name(layer)}: {side} per-tensor scales of shape {list(scale.shape)}")
    else:
        _refuse(f"MoE layer {_layer_name(layer)}: scale strategy {strategy!r}")
    codes = w.contiguous().view(torch.uint8)
    return [QuantizedWeight(desc, (n, k), _bytes_to_words(codes[i]), scales[i].contiguous(),
                            name=f"{_layer_name(layer)}.{side}[{i}]") for i in range(e)]


def _layer_name(layer) -> str:
    return str(getattr(layer, "layer_name", "") or "moe")


def _dense(qws: List[QuantizedWeight]) -> torch.Tensor:
    """[E, N, K] float32 (act-order weights with their columns back in checkpoint order)."""
    out = []
    for qw in qws:
        w = qw.dequantize(torch.float32)
        if qw.k_perm is not None:
            full = torch.empty_like(w)
            full[:, qw.k_perm] = w
            w = full
        out.append(w)
    return torch.stack(out)


def _kernel_device(device: torch.device) -> bool:
    """Whether the expert-indexed kernels may serve a layer on this device (a GPU, HUMMING_MOE_KERNELS not 0)."""
    from ..ops.moe_gemm import moe_kernels_enabled

    return device.type == "cuda" and moe_kernels_enabled()


def convert_to_humming_moe_kernel_format(layer, quant_config: Optional[dict] = None, **kwargs):
    """Our replacement for vLLM's helper.  On a GPU (HUMMING_MOE_KERNELS not 0) the experts stay quantized on
    :class:`vllm_humming.ops.moe_gemm.FusedMoeGemm` (``w13_weight`` / ``w2_weight`` become zero-storage views of the
    right shapes, which our experts' ``apply`` recognizes); otherwise -- or where those kernels refuse the experts,
    with the reason logged -- dense dequantized experts (``w13_weight`` [E, 2I, H] / ``w2_weight`` [E, H, I])."""
    if quant_config is None:
        _refuse("this MoE layer (its oracle passes weight schemas vllm-humming does not read)")
    dt = getattr(getattr(layer, "moe_config", None), "in_dtype", None) or torch.bfloat16
    q13 = _expert_qweights(layer, "w13", quant_config)
    q2 = _expert_qweights(layer, "w2", quant_config)
    b13, b2 = _expert_biases(layer, q13, q2)
    dev = next((p.device for p in layer.parameters()), torch.device("cpu"))
    moe = None
    if _kernel_device(dev):
        from dataclasses import replace

        from ..ops.moe_gemm import build_fused_moe

        k13 = q13 if b13 is None else [replace(q, bias=b13[i].to(dt)) for i, q in enumerate(q13)]
        k2 = q2 if b2 is None else [replace(q, bias=b2[i].to(dt)) for i, q in enumerate(q2)]
        moe, why = build_fused_moe(k13, k2, dt, dev, _layer_name(layer))
        if moe is None:
            logger.warning("vllm-humming: --moe-backend humming layer %s runs the plain-torch fallback: %s",
                           _layer_name(layer), why)
    for name in list(dict(layer.named_parameters(recurse=False))):
        if name.startswith(("w13_", "w2_")) and not name.endswith("bias"):
            delattr(layer, name)
    if moe is not None:
        (n13, h), (_, i) = q13[0].shape, q2[0].shape
        e = len(q13)
        # one element of storage each, viewed at the shapes vLLM's modular kernel reads off the weights
        w13 = torch.zeros(1, dtype=dt, device=dev).expand(e, n13, h)
        w2 = torch.zeros(1, dtype=dt, device=dev).expand(e, h, i)
        _KERNEL_MOE[w13.data_ptr()] = moe
        layer.hm_fused_moe = moe
    else:
        w13 = _dense(q13).to(dt)
        w2 = _dense(q2).to(dt)
    layer.register_parameter("w13_weight", torch.nn.Parameter(w13, requires_grad=False))
    layer.register_parameter("w2_weight", torch.nn.Parameter(w2, requires_grad=False))
    # the kernels hold the biases themselves; the dense experts take them from here
    _LAYER_EXTRAS[w13.data_ptr()] = {"w13_bias": None if moe is not None else b13,
                                     "w2_bias": None if moe is not None else b2, "activation_kw": {}}
    # the oracles read their scale parameters back after the conversion (and the nvfp4 one the second-level scale);
    # the experts need no scales any more
    back = ("weight_scale",) + (("weight_scale_2",) if q13 and q13[0].desc.scale2 is not None else ())
    for side in ("w13", "w2"):
        for p in back:
            layer.register_parameter(f"{side}_{p}", torch.nn.Parameter(torch.ones(1, device=dev), requires_grad=False))
    layer.hm_moe_fallback = True
    return None


def get_humming_moe_quant_config(layer, *args, **kwargs):
    from vllm.model_executor.layers.fused_moe.config import FUSED_MOE_UNQUANTIZED_CONFIG

    if not getattr(layer, "hm_moe_fallback", False):
        _refuse("this MoE layer (its weights were not converted by vllm-humming)")
    # swigluoai's parameters (the mxfp4 oracle passes gpt-oss's): ours computes (up + 1) * gate * sigmoid(alpha *
    # gate) with gate <= limit and |up| <= limit, i.e. beta = 1
    alpha, beta, limit = kwargs.get("gemm1_alpha"), kwargs.get("gemm1_beta"), kwargs.get("gemm1_clamp_limit")
    if beta is not None and float(beta) != 1.0:
        _refuse(f"MoE layer {_layer_name(layer)}: swigluoai with beta={beta} (ours computes (up + 1), beta = 1)")
    kw = {k: float(v) for k, v in (("alpha", alpha), ("limit", limit)) if v is not None}
    extras = _LAYER_EXTRAS.get(layer.w13_weight.data_ptr())
    if extras is not None:
        extras["activation_kw"] = kw
    return FUSED_MOE_UNQUANTIZED_CONFIG


# ------------------------------------------------------------------------------------------------- experts
try:
    import vllm.model_executor.layers.fused_moe.modular_kernel as _mk
except ImportError:  # core use without vLLM
    _mk = None

if _mk is not None:
    from vllm.model_executor.layers.fused_moe.topk_weight_and_reduce import TopKWeightAndReduceNoOP

    class HummingTorchFallbackExperts(_mk.FusedMoEExpertsModular):
        """Plain-torch MoE FALLBACK behind --moe-backend humming (standard activation format)."""

        @staticmethod
        def activation_format():
            return _mk.FusedMoEActivationFormat.Standard

        @staticmethod
        def _supports_current_device() -> bool:
            return True

        @staticmethod
        def _supports_no_act_and_mul() -> bool:
            return True

        @staticmethod
        def _supports_quant_scheme(weight_key, activation_key) -> bool:
            return True        # the weights are converted (or refused loudly) by our converter

        @staticmethod
        def _supports_activation(activation) -> bool:
            return True

        @staticmethod
        def _supports_parallel_config(moe_parallel_config) -> bool:
            return True

        @staticmethod
        def _supports_batch_invariance() -> bool:
            return True

        @property
        def expects_unquantized_inputs(self) -> bool:
            return True

        def supports_expert_map(self) -> bool:
            return True

        def finalize_weight_and_reduce_impl(self):
            return TopKWeightAndReduceNoOP()

        def workspace_shapes(self, M, N, K, topk, global_num_experts, local_num_experts, expert_tokens_meta,
                             activation):
            return (1,), (1,), (M, K)

        def apply(self, output, hidden_states, w1, w2, topk_weights, topk_ids, activation, global_num_experts,
                  expert_map, a1q_scale, a2_scale, workspace13, workspace2, expert_tokens_meta,
                  apply_router_weight_on_input):
            if w1.element_size() < 2 or not w1.is_floating_point():
                _refuse("MoE weights that were not converted by vllm-humming")
            moe = _KERNEL_MOE.get(w1.data_ptr()) if w1.dim() == 3 and w1.stride(0) == 0 else None
            extras = _LAYER_EXTRAS.get(w1.data_ptr(), {})
            kw = extras.get("activation_kw") or {}
            if moe is not None:
                y = moe(hidden_states, topk_weights, topk_ids, activation=activation, expert_map=expert_map,
                        apply_router_weight_on_input=apply_router_weight_on_input, activation_kw=kw)
                output.copy_(y.to(output.dtype))
                return output
            if w1.dim() == 3 and w1.stride(0) == 0:
                _refuse("a MoE layer whose quantized experts were handed to kernels this process does not hold")
            y = torch_moe_fallback(hidden_states, w1, w2, topk_weights, topk_ids, activation=activation,
                                   expert_map=expert_map, apply_router_weight_on_input=apply_router_weight_on_input,
                                   w13_bias=extras.get("w13_bias"), w2_bias=extras.get("w2_bias"), activation_kw=kw)
            output.copy_(y.to(output.dtype))
            return output

    class HummingIndexedExperts(HummingTorchFallbackExperts):
        """vllm-humming replacement for vLLM's HummingIndexedExperts (plain-torch fallback)."""

    class HummingGroupedExperts(HummingTorchFallbackExperts):
        """vllm-humming replacement for vLLM's HummingGroupedExperts (plain-torch fallback)."""

    class BatchedHummingGroupedExperts(HummingTorchFallbackExperts):
        """vllm-humming replacement for vLLM's batched Humming experts: the batched (EP) activation format is not
        implemented by the fallback, so it declares itself unsupported and vLLM picks the standard-format class."""

        @staticmethod
        def activation_format():
            return _mk.FusedMoEActivationFormat.BatchedExperts

        @staticmethod
        def _supports_parallel_config(moe_parallel_config) -> bool:
            return False

    _CLASSES = {"HummingIndexedExperts": HummingIndexedExperts, "HummingGroupedExperts": HummingGroupedExperts,
                "BatchedHummingGroupedExperts": BatchedHummingGroupedExperts}
else:
    _CLASSES = {}


def _guard_upstream_facade() -> None:
    """vLLM reaches the upstream humming-kernels package through the lazy facade ``vllm.utils.humming``.  Our routes
    never do; a path we do not serve yet may (the W4A8 MoE oracle builds upstream schema objects before it calls the
    converter).  Without the upstream package that is an ImportError naming a module the user never asked for --
    this turns it into an error that names the path and the working alternative.  With the package installed the
    facade works as before (and the converter then refuses the upstream schema objects itself)."""
    try:
        import vllm.utils.humming as facade
    except ImportError:       # a vLLM without the facade has no such path
        return
    orig = facade.__dict__.get("__getattr__")
    if orig is None or getattr(orig, "_vllm_humming_guard", False):
        return

    def guarded(name):
        try:
            return orig(name)
        except ImportError as e:
            raise HummingMoEBackendUnsupported(
                f"vllm-humming: vLLM asked for {name!r} of the upstream humming-kernels package "
                f"(vllm.utils.humming), which is not installed and which vllm-humming does not use ({e}). This "
                f"happens on paths vllm-humming does not serve yet, e.g. W4A8 MoE experts under --moe-backend "
                f"humming. Serve the model with --quantization humming instead.") from e

    guarded._vllm_humming_guard = True
    facade.__getattr__ = guarded


def install_moe_experts() -> Dict[str, type]:
    if OUR_EXPERTS:
        return OUR_EXPERTS
    import vllm.model_executor.layers.fused_moe.experts.fused_humming_moe as fh
    import vllm.model_executor.layers.quantization.utils.humming as hu

    for n, c in _CLASSES.items():
        setattr(fh, n, c)
    hu.convert_to_humming_moe_kernel_format = convert_to_humming_moe_kernel_format
    hu.get_humming_moe_quant_config = get_humming_moe_quant_config
    _guard_upstream_facade()
    OUR_EXPERTS.update(_CLASSES)
    return OUR_EXPERTS
