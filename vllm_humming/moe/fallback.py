"""Plain-torch MoE FALLBACK (no fused MoE GPU kernel yet): correct, slow, clearly not the fast path.

    y[t] = sum_j  w[t, j] * W2_e ( act( W13_e x[t] ) ),   e = topk_ids[t, j]

with ``W13_e`` = [gate; up] stacked along N as vLLM stores ``w13`` (activation ``silu``: ``silu(gate) * up``;
``gelu``/``swigluoai`` likewise on the two halves; ``*_no_mul`` variants act on the whole output).  The routing
(``topk_ids``, ``topk_weights``) is applied exactly as vLLM passes it; ids are global expert ids, mapped through
``expert_map`` (global -> local, -1 = not on this rank) when expert parallelism is on.

Weights come in as dense per-expert matrices (dequantized once at load by the callers).
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F

__all__ = ["torch_moe_fallback", "activation_fn"]


def _name(activation) -> str:
    v = getattr(activation, "value", activation)
    return str(v).lower() if v is not None else "silu"


def activation_fn(activation, h: torch.Tensor, alpha: Optional[float] = None,
                  limit: Optional[float] = None) -> torch.Tensor:
    a = _name(activation)
    if a.endswith("_no_mul"):
        base = a[: -len("_no_mul")]
        return {"silu": F.silu, "gelu": F.gelu, "relu2": lambda t: F.relu(t) ** 2}[base](h)
    d = h.shape[-1] // 2
    g, u = h[..., :d], h[..., d:]
    if a == "silu":
        return F.silu(g) * u
    if a == "gelu":
        return F.gelu(g) * u
    if a == "gelu_tanh":
        return F.gelu(g, approximate="tanh") * u
    if a == "swigluoai":          # gpt-oss: interleaved gate/up, clamp, (up + 1) * gate * sigmoid(alpha * gate)
        g, u = h[..., ::2], h[..., 1::2]
        alpha = 1.702 if alpha is None else alpha
        limit = 7.0 if limit is None else limit
        g = g.clamp(max=limit)
        u = u.clamp(-limit, limit)
        return (u + 1) * g * torch.sigmoid(alpha * g)
    raise ValueError(f"humming MoE fallback: activation {a!r} is not supported; supported: silu, gelu, gelu_tanh, "
                     f"swigluoai and the *_no_mul variants")


def torch_moe_fallback(x: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor, topk_weights: torch.Tensor,
                       topk_ids: torch.Tensor, activation="silu", expert_map: Optional[torch.Tensor] = None,
                       apply_router_weight_on_input: bool = False, w13_bias: Optional[torch.Tensor] = None,
                       w2_bias: Optional[torch.Tensor] = None, activation_kw: Optional[dict] = None) -> torch.Tensor:
    """x [T, H]; w13 [E_local, N13, H]; w2 [E_local, H, I]; topk_* [T, k]; biases [E_local, N13] / [E_local, H];
    ``activation_kw``: swigluoai's alpha / limit.  Returns [T, H] in x's dtype (accumulated in float32)."""
    t, h = x.shape
    out = torch.zeros(t, w2.shape[1], dtype=torch.float32, device=x.device)
    ids = topk_ids.to(torch.int64)
    if expert_map is not None:
        ids = torch.where(ids >= 0, expert_map.to(ids.device)[ids.clamp(min=0)], ids)
    xf = x.to(torch.float32)
    wts = topk_weights.to(torch.float32)
    for e in torch.unique(ids).tolist():
        if e < 0:
            continue
        tok, slot = (ids == e).nonzero(as_tuple=True)
        xe = xf[tok]
        if apply_router_weight_on_input:
            xe = xe * wts[tok, slot].unsqueeze(1)
        g = xe @ w13[e].to(torch.float32).t()
        if w13_bias is not None:
            g = g + w13_bias[e].to(torch.float32)
        # vLLM runs the activation in the activation dtype; round like it does
        a = activation_fn(activation, g.to(x.dtype).to(torch.float32), **(activation_kw or {}))
        a = a.to(x.dtype).to(torch.float32)
        o = a @ w2[e].to(torch.float32).t()
        if w2_bias is not None:
            o = o + w2_bias[e].to(torch.float32)
        if not apply_router_weight_on_input:
            o = o * wts[tok, slot].unsqueeze(1)
        out.index_add_(0, tok, o)
    return out.to(x.dtype)
