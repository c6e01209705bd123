"""Row-parallel (K) sharding of a canonical :class:`QuantizedWeight`.  Pure torch, no vLLM.

Under tensor parallelism a row-parallel layer on rank r sees only input channels ``[start, stop)``.  The plugin
loads the checkpoint tensors of such a layer unsharded, converts them to one canonical weight, and cuts that weight
here, so that group scales and act-order (``k_perm``) stay exact whatever the shard boundaries are:

* no ``k_perm`` and the shard starts and ends on scale-group boundaries: a plain slice of codes and scales;
* channel / tensor scales (no groups along K): keep the storage columns whose input channel is in the shard;
* otherwise (act-order, or a group cut by the boundary): the kept storage columns of each scale group that has any,
  padded to a whole group.  Padding columns read an extra all-zero input column, so they add exactly nothing.
  The result carries a ``gather`` index into ``x`` extended by one zero column: ``x_ext = pad(x, (0, 1))``,
  ``y = x_ext[:, gather] @ dequant(W')^T``.  ``W'`` has no ``k_perm`` then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from ..desc import DescError
from ..packing import pack_codes, unpack_codes
from ..qweight import QuantizedWeight

__all__ = ["ShardedWeight", "slice_k", "slice_n", "apply_gather", "dense_weight"]


@dataclass
class ShardedWeight:
    qw: QuantizedWeight
    gather: Optional[torch.Tensor] = None     # int64 [K'] into pad(x, (0, 1)); None: use qw (and its k_perm) as is


def _k_group(qw: QuantizedWeight) -> Optional[int]:
    s = qw.desc.scale
    if s is None or s.granularity in ("tensor", "channel"):
        return None
    return s.group_size if s.granularity == "group" else s.block[1]


def slice_k(qw: QuantizedWeight, start: int, stop: int) -> ShardedWeight:
    """The part of ``qw`` that multiplies input channels ``[start, stop)`` (original channel numbering)."""
    n, k = qw.shape
    if not (0 <= start < stop <= k):
        raise DescError(f"layer {qw.name!r} ({qw.desc}): K shard [{start}, {stop}) outside K={k}")
    if start == 0 and stop == k:
        return ShardedWeight(qw)
    bits = qw.desc.bits
    gs = _k_group(qw)
    codes = unpack_codes(qw.qweight, bits, k)                       # [N, K] storage order
    perm = qw.k_perm.to(torch.int64) if qw.k_perm is not None else None
    bias = qw.bias
    name = qw.name

    if perm is None and (gs is None or (start % gs == 0 and (stop % gs == 0 or stop == k))):
        scale, zero = qw.scale, qw.zero
        if gs is not None:
            g0, g1 = start // gs, -(-stop // gs)
            scale = scale[:, g0:g1].contiguous()
            zero = None if zero is None else zero[:, g0:g1].contiguous()
        return ShardedWeight(QuantizedWeight(qw.desc, (n, stop - start), pack_codes(codes[:, start:stop], bits),
                                             scale, zero, qw.scale2, None, bias, name))

    if perm is None:
        perm = torch.arange(k, device=codes.device)
    keep = ((perm >= start) & (perm < stop)).nonzero().flatten()        # storage columns of this shard, in order
    if gs is None:
        kp = perm[keep] - start
        return ShardedWeight(QuantizedWeight(qw.desc, (n, stop - start), pack_codes(codes[:, keep], bits),
                                             qw.scale, qw.zero, qw.scale2, kp, bias, name))

    groups = torch.unique(keep // gs)                                   # sorted storage groups present
    ng = groups.numel()
    kpad = ng * gs
    pad_col = stop - start                                              # index of the appended zero input column
    gather = torch.full((kpad,), pad_col, dtype=torch.int64, device=codes.device)
    new_codes = torch.zeros(n, kpad, dtype=codes.dtype, device=codes.device)
    slot = torch.searchsorted(groups, keep // gs) * gs + (keep % gs)   # keep the in-group position
    new_codes[:, slot] = codes[:, keep]
    gather[slot] = perm[keep] - start
    scale, zero = qw.scale, qw.zero
    if qw.desc.scale.granularity == "group":
        scale = scale[:, groups].contiguous()
        zero = None if zero is None else zero[:, groups].contiguous()
    else:                                                               # 2-D block scales: columns are K blocks
        scale = scale[:, groups].contiguous()
    out = QuantizedWeight(qw.desc, (n, kpad), pack_codes(new_codes, bits), scale, zero, qw.scale2, None, bias, name)
    return ShardedWeight(out, gather)


def apply_gather(x: torch.Tensor, gather: Optional[torch.Tensor]) -> torch.Tensor:
    if gather is None:
        return x
    x = torch.nn.functional.pad(x, (0, 1))
    return x.index_select(-1, gather.to(x.device))


def slice_n(qw: QuantizedWeight, start: int, stop: int) -> QuantizedWeight:
    """Output rows ``[start, stop)`` of ``qw`` (column-parallel sharding)."""
    n, k = qw.shape
    if not (0 <= start < stop <= n):
        raise DescError(f"layer {qw.name!r} ({qw.desc}): N shard [{start}, {stop}) outside N={n}")
    if start == 0 and stop == n:
        return qw
    d = qw.desc
    scale, zero, scale2 = qw.scale, qw.zero, qw.scale2
    if d.scale is not None and d.scale.granularity in ("channel", "group"):
        scale = scale[start:stop].contiguous()
        zero = None if zero is None else zero[start:stop].contiguous()
    elif d.scale is not None and d.scale.granularity == "block":
        bn = d.scale.block[0]
        if start % bn or (stop % bn and stop != n):
            raise DescError(f"layer {qw.name!r} ({d}): N shard [{start}, {stop}) is not aligned to {bn}-row blocks")
        scale = scale[start // bn: -(-stop // bn)].contiguous()
    if d.scale2 is not None and d.scale2.granularity == "channel":
        scale2 = scale2[start:stop].contiguous()
    bias = None if qw.bias is None else qw.bias[start:stop].contiguous()
    return QuantizedWeight(d, (stop - start, k), qw.qweight[start:stop].contiguous(), scale, zero, scale2, qw.k_perm,
                           bias, qw.name)


def dense_weight(sw: ShardedWeight, k_local: int) -> torch.Tensor:
    """float32 [N, k_local] in original input-channel order (what a plain matmul with the local x needs)."""
    w = sw.qw.dequantize(torch.float32)
    n = w.shape[0]
    if sw.gather is not None:
        out = torch.zeros(n, k_local + 1, dtype=torch.float32, device=w.device)
        out.index_add_(1, sw.gather.to(w.device), w)
        return out[:, :k_local]
    if sw.qw.k_perm is not None:
        out = torch.zeros(n, k_local, dtype=torch.float32, device=w.device)
        out[:, sw.qw.k_perm.to(w.device)] = w
        return out
    return w
