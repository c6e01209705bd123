"""The torch-facing linear op: ``y = x @ dequant(W)^T (+ bias)`` for any supported weight/activation description.

    pl = prepare_linear(qw, act=None, out_dtype=torch.bfloat16)   # once, at load: repack for the kernel (GPU)
    y  = humming_linear(x, pl)                                     # every call

On a CUDA device with a supported (description, arch) the call runs our JIT-compiled GEMM; otherwise it takes the
plain-torch fallback (dequantize once, cache, matmul), which is what CPU engines use.  ``PreparedLinear.backend``
says which path a layer took and ``PreparedLinear.fallback_reason`` why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

import torch

from ..desc import ActDesc, DescError
from ..qweight import QuantizedWeight
from .. import reference

__all__ = ["PreparedLinear", "prepare_linear", "humming_linear", "compile_in_background"]


# Prepared layers are registered under an integer handle so that a torch custom op -- which cannot take Python
# objects -- can name them: ``torch.ops.humming.linear(x, handle)``.  Eager calls skip the op layer (it costs tens of
# microseconds per call); under torch.compile the op is what gets traced.
_REGISTRY: list = []
_OP = None


def _linear_impl(x, handle: int):
    return _run(x, _REGISTRY[int(handle)])


def _linear_fake(x, handle: int):
    pl = _REGISTRY[int(handle)]
    return x.new_empty(*x.shape[:-1], pl.qw.shape[0], dtype=pl.out_dtype)


def _op():
    global _OP
    if _OP is None:
        from ..jit.torch_op import define_op

        _OP = define_op("linear", "(Tensor x, int handle) -> Tensor", impl=_linear_impl, fake=_linear_fake,
                        cpu_impl=_linear_impl)
    return _OP


@dataclass
class PreparedLinear:
    qw: QuantizedWeight                   # canonical tensors (kept on the weight's device)
    act: ActDesc
    out_dtype: torch.dtype
    backend: str = "torch"                # "kernel" | "torch"
    fallback_reason: str = ""
    kernel: Optional[object] = None       # vllm_humming.ops.gemm.GemmLayer when backend == "kernel"
    _dense: Optional[torch.Tensor] = field(default=None, repr=False)   # fallback: dequantized weight, out_dtype
    handle: int = -1                      # index in the custom-op registry
    static_act_scale: Optional[torch.Tensor] = None   # float32 [1]: static activation scale / NVFP4 global (s2)

    def __post_init__(self):
        self.handle = len(_REGISTRY)
        _REGISTRY.append(self)

    @property
    def shape(self):
        return self.qw.shape

    def dense_weight(self) -> torch.Tensor:
        if self._dense is None:
            self._dense = reference.dequantize_weight(self.qw).to(self.out_dtype)
        return self._dense


def _plain_act(out_dtype: torch.dtype) -> str:
    return "float16" if out_dtype == torch.float16 else "bfloat16"


def prepare_linear(qw: QuantizedWeight, act: Optional[ActDesc] = None, out_dtype: torch.dtype = torch.bfloat16,
                   device=None, force_fallback: bool = False,
                   static_act_scale: Optional[torch.Tensor] = None) -> PreparedLinear:
    """Prepare one linear layer.  ``static_act_scale`` (float32, one element, a multiplier) is the static activation
    scale of a static description, or the second-level global scale of NVFP4 activations."""
    if out_dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise DescError(f"layer {qw.name!r}: out_dtype {out_dtype} not supported (bfloat16, float16, float32)")
    if device is not None:
        qw = qw.to(device)
    act = act or ActDesc("bfloat16" if out_dtype != torch.float16 else "float16")
    _op()   # register torch.ops.humming.linear now, outside any torch.compile trace
    pl = PreparedLinear(qw, act, out_dtype)
    if static_act_scale is not None:
        pl.static_act_scale = static_act_scale.to(device=qw.qweight.device, dtype=torch.float32).reshape(1)
    if force_fallback or os.environ.get("HUMMING_FORCE_FALLBACK") == "1":
        pl.fallback_reason = "fallback forced"
        return pl
    try:
        from . import gemm
    except ImportError as e:  # pragma: no cover - the CUDA toolchain is an optional extra
        pl.fallback_reason = f"kernel path unavailable: {e}"
        return pl
    if qw.qweight.device.type not in gemm.KERNEL_DEVICE_TYPES:
        pl.fallback_reason = f"weights on {qw.qweight.device.type}, kernels need CUDA"
        return pl
    reason = gemm.unsupported_reason(qw, act, out_dtype)
    if reason:
        pl.fallback_reason = reason
        return pl
    if act.quantized:
        from .act_quant import ActQuantizer, QuantActGemm

        quantizer = ActQuantizer(act, out_dtype, qw.qweight.device, pl.static_act_scale, qw.name,
                                 k_perm=qw.k_perm is not None)
        pl.kernel = QuantActGemm(quantizer, gemm.GemmLayer(qw, ActDesc(_plain_act(out_dtype)), out_dtype))
    else:
        pl.kernel = gemm.GemmLayer(qw, act, out_dtype)
    pl.backend = "kernel"
    return pl


def compile_in_background(pl: PreparedLinear):
    """Start compiling a prepared layer's kernels on the background compile thread (vllm_humming.jit.background:
    opt-in, ``HUMMING_JIT_BACKGROUND=1``; never in strict mode); the vLLM integration calls it for every layer once
    its weights are prepared.  None when it is off, and for layers on the plain-torch path."""
    if not isinstance(pl, PreparedLinear):
        raise TypeError(f"compile_in_background takes the PreparedLinear that prepare_linear returned, got "
                        f"{type(pl).__name__}")
    if pl.backend != "kernel" or pl.kernel is None:
        return None
    return pl.kernel.compile_in_background()


def humming_linear(x: torch.Tensor, pl: PreparedLinear) -> torch.Tensor:
    """y = x @ dequant(W)^T (+ bias).  Traced as ``torch.ops.humming.linear`` under torch.compile."""
    if torch.compiler.is_compiling():
        return torch.ops.humming.linear(x, pl.handle)
    return _run(x, pl)


def _run(x: torch.Tensor, pl: PreparedLinear) -> torch.Tensor:
    n, k = pl.qw.shape
    if x.shape[-1] != k:
        raise DescError(f"layer {pl.qw.name!r} ({pl.qw.desc}): input has K={x.shape[-1]}, weight expects K={k}")
    if pl.backend == "kernel":
        return pl.kernel(x)
    if not x.is_floating_point():
        raise DescError(f"layer {pl.qw.name!r} ({pl.qw.desc}): activations must be a floating dtype "
                        f"(bfloat16/float16/float32), got {x.dtype}")
    x2 = x.reshape(-1, k)
    if pl.qw.k_perm is not None:
        x2 = x2[:, pl.qw.k_perm]
    if pl.act.quantized:
        codes, s = reference.quantize_activations(x2, pl.act, pl.static_act_scale)
        x2 = reference.dequantize_activations(codes, s, pl.act, pl.static_act_scale)
    w = pl.dense_weight()
    y = torch.nn.functional.linear(x2.to(w.dtype), w, None if pl.qw.bias is None else pl.qw.bias.to(w.dtype))
    return y.to(pl.out_dtype).reshape(*x.shape[:-1], n)
