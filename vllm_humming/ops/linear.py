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

__all__ = ["PreparedLinear", "prepare_linear", "humming_linear"]


@dataclass
class PreparedLinear:
    qw: QuantizedWeight                   # canonical tensors (kept on the weight's device)
    act: ActDesc
    out_dtype: torch.dtype
    backend: str = "torch"                # "kernel" | "torch"
    fallback_reason: str = ""
    kernel: Optional[object] = None       # vllm_humming.ops.gemm.GemmLayer when backend == "kernel"
    _dense: Optional[torch.Tensor] = field(default=None, repr=False)   # fallback: dequantized weight, out_dtype

    @property
    def shape(self):
        return self.qw.shape

    def dense_weight(self) -> torch.Tensor:
        if self._dense is None:
            self._dense = reference.dequantize_weight(self.qw).to(self.out_dtype)
        return self._dense


def prepare_linear(qw: QuantizedWeight, act: Optional[ActDesc] = None, out_dtype: torch.dtype = torch.bfloat16,
                   device=None, force_fallback: bool = False) -> PreparedLinear:
    if out_dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise DescError(f"layer {qw.name!r}: out_dtype {out_dtype} not supported (bfloat16, float16, float32)")
    if device is not None:
        qw = qw.to(device)
    act = act or ActDesc("bfloat16" if out_dtype != torch.float16 else "float16")
    pl = PreparedLinear(qw, act, out_dtype)
    if force_fallback or os.environ.get("HUMMING_FORCE_FALLBACK") == "1":
        pl.fallback_reason = "fallback forced"
        return pl
    if qw.qweight.device.type != "cuda":
        pl.fallback_reason = f"weights on {qw.qweight.device.type}, kernels need CUDA"
        return pl
    try:
        from . import gemm
    except ImportError as e:  # pragma: no cover - the CUDA toolchain is an optional extra
        pl.fallback_reason = f"kernel path unavailable: {e}"
        return pl
    reason = gemm.unsupported_reason(qw, act, out_dtype)
    if reason:
        pl.fallback_reason = reason
        return pl
    pl.kernel = gemm.GemmLayer(qw, act, out_dtype)
    pl.backend = "kernel"
    return pl


def humming_linear(x: torch.Tensor, pl: PreparedLinear) -> torch.Tensor:
    n, k = pl.qw.shape
    if x.shape[-1] != k:
        raise DescError(f"layer {pl.qw.name!r} ({pl.qw.desc}): input has K={x.shape[-1]}, weight expects K={k}")
    if pl.backend == "kernel":
        return pl.kernel(x)
    x2 = x.reshape(-1, k)
    if pl.qw.k_perm is not None:
        x2 = x2[:, pl.qw.k_perm]
    if pl.act.quantized:
        codes, s = reference.quantize_activations(x2, pl.act)
        x2 = reference.dequantize_activations(codes, s, pl.act)
    w = pl.dense_weight()
    y = torch.nn.functional.linear(x2.to(w.dtype), w, None if pl.qw.bias is None else pl.qw.bias.to(w.dtype))
    return y.to(pl.out_dtype).reshape(*x.shape[:-1], n)
