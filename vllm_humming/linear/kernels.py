"""``--linear-backend humming``: our kernel classes in place of vLLM's ``Humming*LinearKernel`` classes.

vLLM's quantization methods (GPTQ, AWQ, compressed-tensors, FP8, ModelOpt, MXFP4 ...) pick a linear kernel from
per-family tables (mixed-precision, fp8 / int8 scaled-mm, fp8 block, nvfp4, mxfp4, mxfp8) filtered by
``--linear-backend``.  :func:`install_linear_kernels` swaps each in-tree Humming class for ours in those tables (and in
the ``humming`` entry of the backend map), and also lists ours for the current platform when it is not CUDA, so the
route resolves on CPU too (where our kernels take the plain-torch fallback).

Each of our kernels reads the layer's parameters in the layout vLLM's method left them, builds the canonical
:class:`~vllm_humming.qweight.QuantizedWeight`, calls :func:`vllm_humming.ops.prepare_linear`, and applies
:func:`vllm_humming.ops.humming_linear`.
"""

from __future__ import annotations

import logging
from typing import Dict, Optional

import torch

from ..desc import ActDesc, DescError, ScaleSpec, WeightDesc
from ..dtypes import BF16, E2M1, E4M3, E8M0, FP16, FP32, INT8, IntType, parse_dtype
from ..ops import compile_in_background, humming_linear, prepare_linear
from ..packing import pack_codes, packed_words, unpack_codes
from ..qweight import QuantizedWeight

logger = logging.getLogger("vllm_humming")

__all__ = ["install_linear_kernels", "OUR_KERNELS"]

OUR_KERNELS: Dict[str, type] = {}        # in-tree class name -> our class


# ------------------------------------------------------------------------------------------------ helpers
def _weight_nk(layer, name: str) -> torch.Tensor:
    """The weight as [N, K-ish] (rows = output features), following the dims vLLM tagged it with."""
    t = getattr(layer, name)
    in_dim, out_dim = getattr(layer, "processed_weight_dims",
                              (getattr(t, "input_dim", 1), getattr(t, "output_dim", 0)))
    d = t.data
    if in_dim == 0 and out_dim == 1:
        d = d.t()
    return d.contiguous()


def _scale_rows(t: torch.Tensor, n: int) -> torch.Tensor:
    """A scale tensor whose rows run along N ([N, G] or [G, N] by its output_dim tag)."""
    d = t.data
    if getattr(t, "output_dim", 0) == 1 and d.dim() == 2:
        d = d.t()
    if d.dim() == 1:
        d = d.reshape(-1, 1)
    return d.contiguous()


def _u8(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.uint8 else t.contiguous().view(torch.uint8)


def _bytes_words(b: torch.Tensor) -> torch.Tensor:
    from ..quant_config.formats import _bytes_to_words

    return _bytes_to_words(b)


def _per_shard_scale2(layer, s: torch.Tensor, n: int) -> tuple:
    """A global (second-level) scale: one value, or one per fused shard -> (ScaleSpec, float32 tensor)."""
    s = s.detach().reshape(-1).to(torch.float32)
    if s.numel() == 1 or bool((s == s[0]).all()):
        return ScaleSpec("tensor", FP32), s[:1].clone()
    sizes = list(getattr(layer, "output_partition_sizes", []) or [])
    if len(sizes) == s.numel() and sum(sizes) == n:
        return ScaleSpec("channel", FP32), torch.repeat_interleave(s, torch.tensor(sizes, device=s.device))
    raise DescError(f"global scale with {s.numel()} values does not match the layer's shards {sizes}")


class _Common:
    """Shared tail of every kernel: prepare once, apply per call."""

    def _finish(self, layer, qw: QuantizedWeight, act: Optional[ActDesc], consumed, static_scale=None):
        for nm in consumed:
            if nm and hasattr(layer, nm):
                delattr(layer, nm)
        out_dtype = getattr(layer, "params_dtype", None) or torch.bfloat16
        if out_dtype not in (torch.bfloat16, torch.float16, torch.float32):
            out_dtype = torch.bfloat16
        self.hm_prepared = prepare_linear(qw, act, out_dtype=out_dtype, static_act_scale=static_scale)
        layer.register_buffer("hm_qweight", self.hm_prepared.qw.qweight, persistent=False)
        compile_in_background(self.hm_prepared)   # (while vLLM loads the other layers: jit/background.py)
        logger.debug("humming linear kernel %s: %s via %s (%s)", type(self).__name__, qw.desc,
                     self.hm_prepared.backend, self.hm_prepared.fallback_reason)

    def apply_weights(self, layer, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        x2 = x
        y = humming_linear(x2, self.hm_prepared)
        if bias is not None:
            y = y + bias
        return y


class _AnyConfig:
    """Kernels that accept every config vLLM routes to them and decide (or refuse loudly) at weight conversion."""

    @classmethod
    def is_supported(cls, compute_capability=None):
        return True, None

    @classmethod
    def can_implement(cls, config):
        return True, None


def _scalar_type_desc(wt, group_size: int, scale_dtype, zero_points: bool, k: int) -> WeightDesc:
    """vLLM ScalarType (uint4b8, uint8b128, uint4, int8 ...) -> our WeightDesc."""
    bits = wt.size_bits
    bias = int(getattr(wt, "bias", 0) or 0)
    signed = bool(wt.is_signed()) if callable(getattr(wt, "is_signed", None)) else False
    if signed:
        dt = IntType(bits, True)
    else:
        dt = IntType(bits, False, bias)
    spec = ScaleSpec("channel", scale_dtype) if group_size in (-1, 0, None) or group_size >= k else \
        ScaleSpec("group", scale_dtype, group_size=group_size)
    return WeightDesc(dt, spec, zero_point="int" if zero_points else None)


def _act_from_key(key) -> Optional[ActDesc]:
    """vLLM activation QuantKey -> ActDesc (None: unquantized activations)."""
    if key is None:
        return None
    dtype = getattr(key, "dtype", None)
    scale = getattr(key, "scale", None)
    gshape = getattr(scale, "group_shape", None)
    static = bool(getattr(scale, "static", False))
    if dtype == torch.int8:
        adt = INT8
    elif dtype == torch.float8_e4m3fn:
        adt = E4M3
    else:
        return None      # fp4 activations: weight-only here (see the plugin report)
    if static:
        return ActDesc(adt, ScaleSpec("tensor", FP32), dynamic=False)
    if gshape is not None and getattr(gshape, "col", None) not in (None, -1) and gshape.row == 1 and gshape.col > 1:
        return ActDesc(adt, ScaleSpec("group", FP32, group_size=int(gshape.col)))
    return ActDesc(adt, ScaleSpec("token", FP32))


# ------------------------------------------------------------------------------------------------ classes
def _build_classes(kl) -> Dict[str, type]:
    from vllm.model_executor.kernels.linear.mixed_precision.MPLinearKernel import MPLinearKernel
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import (FP8ScaledMMLinearKernel,
                                                                                   Int8ScaledMMLinearKernel)
    from vllm.model_executor.parameter import permute_param_layout_

    NvBase = kl.HummingNvFp4LinearKernel.__mro__[1]
    MxBase = kl.HummingMxFp4LinearKernel.__mro__[1]
    Mx8Base = kl.HummingMxfp8LinearKernel.__mro__[1]
    Mx6Base = kl.HummingMxFp6LinearKernel.__mro__[1]

    class HummingMPLinearKernel(_Common, MPLinearKernel):
        """Weight-only int (GPTQ / AWQ / compressed-tensors wNa16, optional int8/fp8 per-token activations)."""

        @classmethod
        def get_min_capability(cls) -> int:
            return 0

        @classmethod
        def can_implement(cls, c):
            wt = c.weight_type
            if wt.size_bits not in (2, 3, 4, 8) or not wt.is_integer():
                return False, f"weight type {wt} is not an integer type of 2/3/4/8 bits"
            if c.act_type not in (torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.float8_e4m3fn):
                return False, f"activation type {c.act_type} is not supported"
            gs = c.group_size
            if gs not in (-1, 0) and gs not in (16, 32, 64, 128, 256) and gs < c.partition_weight_shape[0]:
                return False, f"group size {gs} is not supported (16, 32, 64, 128, 256 or channelwise)"
            return True, None

        def process_weights_after_loading(self, layer):
            c = self.config
            k, n = c.partition_weight_shape
            bits = c.weight_type.size_bits
            wq = getattr(layer, self.w_q_name)
            w = torch.Tensor._make_subclass(type(wq), wq.data, False)
            w.__dict__.update(wq.__dict__)
            permute_param_layout_(w, input_dim=1, output_dim=0, packed_dim=1)
            qweight = w.data.contiguous()                                   # [N, K*b/32] sequential along K
            if qweight.shape[1] != packed_words(k, bits):
                codes = unpack_codes(qweight, bits, qweight.shape[1] * 32 // bits)[:, :k]
                qweight = pack_codes(codes, bits)
            ws = getattr(layer, self.w_s_name)
            s = torch.Tensor._make_subclass(type(ws), ws.data, False)
            s.__dict__.update(ws.__dict__)
            if hasattr(s, "input_dim") and getattr(s, "input_dim", None) is not None:
                permute_param_layout_(s, input_dim=1, output_dim=0)
                scale = s.data.contiguous()
            else:
                scale = _scale_rows(ws, n)
            sdt = parse_dtype(scale.dtype)
            zero = None
            if c.zero_points:
                zp = getattr(layer, self.w_zp_name)
                zd = zp.data
                pdim = getattr(zp, "packed_dim", None)
                odim = getattr(zp, "output_dim", 1 if zd.shape[-1] != n else 0)
                if pdim is not None:
                    if odim == 0:                                           # [N*b/32, G]
                        zero = unpack_codes(zd.t().contiguous(), bits, n).t()
                    else:                                                   # [G, N*b/32]
                        zero = unpack_codes(zd.contiguous(), bits, n).t()
                else:
                    zero = (zd.t() if odim == 1 else zd).to(torch.uint8)
                zero = zero.contiguous().to(torch.uint8)
            desc = _scalar_type_desc(c.weight_type, c.group_size, sdt, c.zero_points, k)
            if desc.scale.granularity == "channel":
                scale = scale.reshape(n, 1)
                zero = None if zero is None else zero.reshape(n, 1)
            act = None
            if c.act_type == torch.int8:
                act = ActDesc(INT8, ScaleSpec("token", FP32))
            elif c.act_type == torch.float8_e4m3fn:
                act = ActDesc(E4M3, ScaleSpec("token", FP32))
            qw = QuantizedWeight(desc, (n, k), qweight, scale, zero, name=getattr(layer, "prefix", ""))
            self._finish(layer, qw, act, [self.w_q_name, self.w_s_name, self.w_zp_name])

    class HummingFP8ScaledMMLinearKernel(_Common, _AnyConfig, FP8ScaledMMLinearKernel):
        def process_weights_after_loading(self, layer):
            w = _weight_nk(layer, "weight")
            n, k = w.shape
            wkey = self.config.weight_quant_key
            sname = "weight_scale_inv" if hasattr(layer, "weight_scale_inv") else "weight_scale"
            s = getattr(layer, sname).data
            g = wkey.scale.group_shape
            if g.is_per_tensor():
                spec, scale = ScaleSpec("tensor", FP32), s.reshape(-1)[:1].reshape(1, 1).to(torch.float32)
                if s.numel() > 1 and not bool((s == s.reshape(-1)[0]).all()):
                    raise DescError(f"fp8 layer with {s.numel()} different per-tensor scales: vLLM should have "
                                    f"merged them before the kernel")
            elif g.is_per_channel():
                spec, scale = ScaleSpec("channel", FP32), s.reshape(n, 1).to(torch.float32)
            elif g.row == 1:
                spec, scale = ScaleSpec("group", FP32, group_size=int(g.col)), s.reshape(n, -1).to(torch.float32)
            else:
                spec = ScaleSpec("block", FP32, block=(int(g.row), int(g.col)))
                scale = s.reshape(-(-n // g.row), -(-k // g.col)).to(torch.float32)
            desc = WeightDesc(E4M3, spec)
            qw = QuantizedWeight(desc, (n, k), _bytes_words(_u8(w)), scale.contiguous())
            akey = getattr(self.config, "activation_quant_key", None)
            act = _act_from_key(akey)
            static = None
            if act is not None and not act.dynamic:
                static = layer.input_scale.data.reshape(-1).max().reshape(1).to(torch.float32)
            self._finish(layer, qw, act, ["weight", sname], static)

        def apply_scaled_mm(self, **kw):
            raise NotImplementedError("vllm-humming kernels run through apply_weights")

    class HummingInt8ScaledMMLinearKernel(_Common, _AnyConfig, Int8ScaledMMLinearKernel):
        @classmethod
        def can_implement(cls, config):
            if not getattr(config, "input_symmetric", True):
                return False, "asymmetric int8 activations (azp) are not supported by vllm-humming"
            return True, None

        def process_weights_after_loading(self, layer):
            wname, sname, iname = self.layer_param_names[:3]
            w = _weight_nk(layer, wname)
            n, k = w.shape
            s = getattr(layer, sname).data.to(torch.float32)
            if s.numel() == n:
                spec, scale = ScaleSpec("channel", FP32), s.reshape(n, 1)
            else:
                spec, scale = ScaleSpec("tensor", FP32), s.reshape(-1).max().reshape(1, 1)
            qw = QuantizedWeight(WeightDesc(INT8, spec), (n, k), _bytes_words(_u8(w)), scale.contiguous())
            static = None
            if getattr(self.config, "is_static_input_scheme", False):
                act = ActDesc(INT8, ScaleSpec("tensor", FP32), dynamic=False)
                static = getattr(layer, iname).data.reshape(-1).max().reshape(1).to(torch.float32)
            else:
                act = ActDesc(INT8, ScaleSpec("token", FP32))
            self._finish(layer, qw, act, [wname, sname], static)

        def apply_scaled_mm(self, **kw):
            raise NotImplementedError("vllm-humming kernels run through apply_weights")

    class HummingNvFp4LinearKernel(_Common, _AnyConfig, NvBase):
        def process_weights_after_loading(self, layer):
            wname = "weight_packed" if hasattr(layer, "weight_packed") else "weight"
            w = _u8(_weight_nk(layer, wname))
            n = w.shape[0]
            k = w.shape[1] * 2
            sc = _u8(getattr(layer, "weight_scale").data).reshape(n, -1)[:, : -(-k // 16)]
            if hasattr(layer, "weight_global_scale"):
                g2name, g2 = "weight_global_scale", layer.weight_global_scale.data
            else:
                g2name, g2 = "weight_scale_2", layer.weight_scale_2.data
            spec2, s2 = _per_shard_scale2(layer, g2, n)
            desc = WeightDesc(E2M1, ScaleSpec("group", E4M3, group_size=16), scale2=spec2)
            words = _bytes_words(w)[:, : packed_words(k, 4)]
            qw = QuantizedWeight(desc, (n, k), words, sc.contiguous(), None, s2)
            act, static = None, None
            if getattr(layer, "input_global_scale", None) is not None:
                # W4A4: vLLM's compressed-tensors / ModelOpt methods leave the activation global scale as the
                # multiplier s2 (x ~= q * s_group * s2)
                from ..desc import ACT_NVFP4

                act = ACT_NVFP4
                static = layer.input_global_scale.data.reshape(-1).max().reshape(1).to(torch.float32)
            self._finish(layer, qw, act, [wname, "weight_scale", g2name], static)

    class HummingMxFp4LinearKernel(_Common, _AnyConfig, MxBase):
        @classmethod
        def _supports_quant_scheme(cls, weight_key, activation_key):
            return True

        def process_weights_after_loading(self, layer):
            w = _u8(_weight_nk(layer, "weight"))
            n, k = w.shape[0], w.shape[1] * 2
            sc = _u8(layer.weight_scale.data).reshape(n, -1)[:, : -(-k // 32)]
            qw = QuantizedWeight(WeightDesc(E2M1, ScaleSpec("group", E8M0, group_size=32)), (n, k),
                                 _bytes_words(w)[:, : packed_words(k, 4)], sc.contiguous())
            self._finish(layer, qw, None, ["weight", "weight_scale"])

    class HummingMxfp8LinearKernel(_Common, _AnyConfig, Mx8Base):
        def process_weights_after_loading(self, layer):
            w = _u8(_weight_nk(layer, "weight"))
            n, k = w.shape
            sc = _u8(layer.weight_scale.data).reshape(n, -1)[:, : -(-k // 32)]
            qw = QuantizedWeight(WeightDesc(E4M3, ScaleSpec("group", E8M0, group_size=32)), (n, k), _bytes_words(w),
                                 sc.contiguous())
            self._finish(layer, qw, None, ["weight", "weight_scale"])

    class HummingMxFp6LinearKernel(_Common, _AnyConfig, Mx6Base):
        """MXFP6 (quark's 4-values-in-3-bytes packing): not converted yet -- refuses loudly instead of letting vLLM
        fall back to another backend behind the user's back."""

        def process_weights_after_loading(self, layer):
            raise DescError(f"layer {getattr(layer, 'prefix', '')!r}: --linear-backend humming does not support MXFP6 "
                            f"weights yet (supported: int 2/3/4/8-bit wNa16, fp8, int8, nvfp4, mxfp4, mxfp8); use "
                            f"--linear-backend auto for this model")

    return {
        "HummingMxFp6LinearKernel": HummingMxFp6LinearKernel,
        "HummingLinearKernel": HummingMPLinearKernel,
        "HummingFP8ScaledMMLinearKernel": HummingFP8ScaledMMLinearKernel,
        "HummingInt8ScaledMMLinearKernel": HummingInt8ScaledMMLinearKernel,
        "HummingNvFp4LinearKernel": HummingNvFp4LinearKernel,
        "HummingMxFp4LinearKernel": HummingMxFp4LinearKernel,
        "HummingMxfp8LinearKernel": HummingMxfp8LinearKernel,
    }


_TABLES = ("_POSSIBLE_KERNELS", "_POSSIBLE_FP8_KERNELS", "_POSSIBLE_INT8_KERNELS", "_POSSIBLE_FP8_BLOCK_KERNELS",
           "_POSSIBLE_WFP8A16_KERNELS", "_POSSIBLE_NVFP4_KERNELS", "_POSSIBLE_MXFP4_KERNELS",
           "_POSSIBLE_MXFP8_KERNELS", "_POSSIBLE_MXFP6_KERNELS")


def install_linear_kernels() -> Dict[str, type]:
    import vllm.model_executor.kernels.linear as kl
    from vllm.platforms import current_platform

    if OUR_KERNELS:
        return OUR_KERNELS
    theirs = {name: getattr(kl, name) for name in ("HummingLinearKernel", "HummingFP8ScaledMMLinearKernel",
                                                    "HummingInt8ScaledMMLinearKernel", "HummingNvFp4LinearKernel",
                                                    "HummingMxFp4LinearKernel", "HummingMxfp8LinearKernel",
                                                    "HummingMxFp6LinearKernel")}
    ours = _build_classes(kl)
    swap = {theirs[n]: ours[n] for n in ours}
    # name-based lookups (logging, VLLM_DISABLED_KERNELS) keep working under the in-tree names
    for n, c in ours.items():
        c.__qualname__ = c.__name__ = n
        c.__module__ = __name__
        globals()[n] = c
    own_platform = getattr(current_platform, "_enum", None)
    for tname in _TABLES:
        table = getattr(kl, tname)          # presence checked by vllm_humming.plugin.check_vllm
        family = [swap[c] for lst in table.values() for c in lst if c in swap]
        for plat, lst in table.items():
            table[plat] = [swap.get(c, c) for c in lst]
        # make the route resolve on platforms whose table has no Humming entry (CPU): ours go last
        if family and own_platform is not None:
            lst = table.setdefault(own_platform, [])
            for c in dict.fromkeys(family):
                if c not in lst:
                    lst.append(c)
    backend_map = kl._LINEAR_BACKEND_KERNEL_MAP
    backend_map["humming"] = {swap.get(c, c) for c in backend_map.get("humming", set())} | set(ours.values())
    for n, c in ours.items():
        setattr(kl, n, c)
    OUR_KERNELS.update(ours)
    return OUR_KERNELS
