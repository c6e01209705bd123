"""The canonical quantized weight: what checkpoint readers produce, what repack and the reference consume.

All tensors are plain torch tensors on any device:

* ``qweight``  int32 [N, ceil(K*bits/32)] -- codes packed along K in the canonical format of :mod:`packing`.
* ``scale``    [*desc.num_scale_groups(N, K)]; bf16/fp16/fp32 scales as those torch dtypes, 8-bit scale types
                (e8m0, e4m3, ue4m3) as uint8 raw codes.
* ``zero``     int zero points: uint8 codes, same shape as ``scale``; float zero points: the scale's dtype.
* ``scale2``   float32 [1] (tensor) or [N] (channel).
* ``k_perm``   optional int64 [K]: storage column j holds original input channel ``k_perm[j]`` (GPTQ act-order after
                sorting by g_idx), i.e. ``y = x[:, k_perm] @ dequant(W)^T``.
* ``bias``     optional [N].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

import torch

from .desc import DescError, WeightDesc

__all__ = ["QuantizedWeight"]


@dataclass
class QuantizedWeight:
    desc: WeightDesc
    shape: Tuple[int, int]               # (N, K) logical, unpadded
    qweight: torch.Tensor
    scale: Optional[torch.Tensor] = None
    zero: Optional[torch.Tensor] = None
    scale2: Optional[torch.Tensor] = None
    k_perm: Optional[torch.Tensor] = None
    bias: Optional[torch.Tensor] = None
    name: str = ""                       # layer name for error messages

    def __post_init__(self):
        self.shape = (int(self.shape[0]), int(self.shape[1]))
        self.validate()

    def _err(self, msg: str) -> DescError:
        who = f"layer {self.name!r}" if self.name else "quantized weight"
        return DescError(f"{who} ({self.desc}, shape N={self.shape[0]} K={self.shape[1]}): {msg}")

    def validate(self):
        from .packing import packed_words

        n, k = self.shape
        d = self.desc
        want = (n, packed_words(k, d.bits))
        if self.qweight.dtype != torch.int32 or tuple(self.qweight.shape) != want:
            raise self._err(f"qweight must be int32 {list(want)}, got {self.qweight.dtype} {list(self.qweight.shape)}")
        if d.scale is None:
            if self.scale is not None:
                raise self._err("description has no scale but a scale tensor was given")
        else:
            if self.scale is None:
                raise self._err("scale tensor missing")
            sg = d.num_scale_groups(n, k)
            if tuple(self.scale.shape) != sg:
                raise self._err(f"scale must have shape {list(sg)}, got {list(self.scale.shape)}")
            sd = d.scale.dtype
            want_dt = sd.torch_dtype if sd.bits > 8 else torch.uint8
            if self.scale.dtype != want_dt:
                raise self._err(f"{sd} scales are stored as {want_dt}, got {self.scale.dtype}")
        if d.zero_point is None:
            if self.zero is not None:
                raise self._err("description has no zero point but a zero tensor was given")
        else:
            if self.zero is None or tuple(self.zero.shape) != tuple(self.scale.shape):
                raise self._err(f"zero points must match the scale shape {list(self.scale.shape)}")
            if d.zero_point == "int" and self.zero.dtype != torch.uint8:
                raise self._err(f"integer zero points are uint8 codes, got {self.zero.dtype}")
            if d.zero_point == "float" and self.zero.dtype != d.scale.dtype.torch_dtype:
                raise self._err(f"float zero points are stored in the scale dtype {d.scale.dtype}, got {self.zero.dtype}")
        if d.scale2 is None and self.scale2 is not None:
            raise self._err("description has no second-level scale but a scale2 tensor was given")
        if d.scale2 is not None:
            want2 = (1,) if d.scale2.granularity == "tensor" else (n,)
            if self.scale2 is None or tuple(self.scale2.shape) != want2 or self.scale2.dtype != torch.float32:
                raise self._err(f"second-level scale must be float32 {list(want2)}")
        if self.k_perm is not None:
            if tuple(self.k_perm.shape) != (k,):
                raise self._err(f"k_perm must have shape [{k}], got {list(self.k_perm.shape)}")
            if self.k_perm.dtype.is_floating_point or self.k_perm.dtype.is_complex or self.k_perm.dtype == torch.bool:
                raise self._err(f"k_perm holds integer column indices, got {self.k_perm.dtype}")
        if self.bias is not None and tuple(self.bias.shape) != (n,):
            raise self._err(f"bias must have shape [{n}], got {list(self.bias.shape)}")

    def to(self, device) -> "QuantizedWeight":
        mv = lambda t: None if t is None else t.to(device)
        return QuantizedWeight(self.desc, self.shape, mv(self.qweight), mv(self.scale), mv(self.zero), mv(self.scale2),
                               mv(self.k_perm), mv(self.bias), self.name)

    def dequantize(self, dtype=torch.float32) -> torch.Tensor:
        """[N, K] in storage column order (apply ``k_perm`` to x, not to this)."""
        from .reference import dequantize_weight

        return dequantize_weight(self).to(dtype)
