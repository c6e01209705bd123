"""Fused-MoE WnA16 on our GEMM kernels: the routed tokens sorted by expert, one expert-indexed GEMM per side.

    moe = FusedMoeGemm(w13_experts, w2_experts, torch.bfloat16)   # E QuantizedWeights per side, repacked on the GPU
    y = moe(x, topk_weights, topk_ids, activation="silu")

The routing becomes a token list sorted by expert, each expert's run padded to a whole token tile of the kernel
(:func:`moe_routing`, plain torch ops with shapes fixed by the token count, so CUDA graphs capture it):

    sorted_slots[p]  the routed slot t * topk + j at sorted position p (S = T * topk for padding)
    tile_expert[i]   the expert of token tile i = rows [i * bt, (i + 1) * bt) (-1 past the last routed tile)

The activations are gathered into that order once; the first GEMM (w13: [gate; up] stacked along N) writes its rows
in the same order, the activation function runs on them in place of order, the second GEMM (w2) reads them as they
are, and the end scatters each row, times its router weight, back to its token (fp32 sums).

Each GEMM is the dense kernel of :mod:`vllm_humming.ops.gemm` compiled with its expert-indexed entry
(``kernel_source(..., experts=True)``): a block reads its tile's expert and offsets the weight, scale, zero-point,
channel-scale and bias pointers by that expert's strides -- the mainloop, dequant and epilogue are the dense ones.  The
kernel choice is the dense heuristics' for the tokens an expert sees on average (:func:`moe_choice`, restricted to
grids whose blocks are token tiles), the launch plan the dense planner's for the sorted rows.

On a GPU the steps around the two GEMMs are the route kernels of :mod:`vllm_humming.ops.moe_route` (align, gather,
activation, combine: six launches per layer in all, up to ``ALIGN_MAX_SLOTS`` routed slots); the torch ops here
define them, and serve larger batches, CPU stand-ins and ``HUMMING_MOE_ROUTE_KERNELS=0``.

Experts with act-order (``k_perm``) are not served here (each expert would need its own column order of x).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ..desc import DescError
from ..qweight import QuantizedWeight
from ..tuning.heuristics import KernelChoice, choose_kernel, m_bucket
from .gemm import (_ARG_TYPES, FormatParams, GemmLayer, _spec, _workspace, format_params, stage_smem,
                   unsupported_reason)
from .plan import PlanError, describe, kernel_fit, plan_launches

__all__ = ["moe_max_tiles", "moe_routing", "moe_choice", "tokens_per_expert", "ExpertGemm", "FusedMoeGemm",
           "build_fused_moe", "moe_kernels_enabled", "moe_unsupported_reason"]

# launcher argument types of the expert-indexed entry: the dense kernel's, + tile_expert and the per-expert strides
_MOE_ARG_TYPES = _ARG_TYPES + ("ptr", "i64", "i64", "i32", "i32")
_X, _Y, _TILE_EXPERT = 0, 7, len(_ARG_TYPES)


def moe_kernels_enabled() -> bool:
    """HUMMING_MOE_KERNELS: ``1`` (default; verified on the H200 since session 34, see README) runs MoE layers on the
    expert-indexed GEMM kernels where the device and the experts allow it; ``0`` keeps the plain-torch fallback."""
    v = os.environ.get("HUMMING_MOE_KERNELS", "1").strip()
    if v not in ("0", "1"):
        raise DescError(f"HUMMING_MOE_KERNELS must be 0 or 1, got {v!r}")
    return v == "1"


# ---------------------------------------------------------------------------------------------------- routing
def moe_max_tiles(slots: int, experts: int, bt: int) -> int:
    """The most token tiles ``slots`` routed (token, expert) pairs can fill when each expert's run is padded to whole
    tiles of ``bt``: at most min(experts, slots) experts hold any, each wasting at most bt - 1 rows, so
    sum_e ceil(c_e / bt) <= (slots + min(experts, slots) * (bt - 1)) // bt."""
    if slots <= 0:
        return 0
    return (slots + min(experts, slots) * (bt - 1)) // bt


def moe_routing(topk_ids: torch.Tensor, experts: int, bt: int,
                expert_map: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """(sorted_slots int64 [tiles * bt], tile_expert int32 [tiles]) for ``topk_ids`` [T, topk] (local expert ids;
    with ``expert_map``, global ids mapped through it, -1 = not on this rank: dropped).  Tiles = moe_max_tiles.
    Within an expert, slots keep their order (a stable sort).  Plain torch ops whose shapes depend on T only."""
    t, topk = topk_ids.shape
    s = t * topk
    dev = topk_ids.device
    tiles = moe_max_tiles(s, experts, bt)
    ids = topk_ids.reshape(-1).to(torch.int64)
    if expert_map is not None:
        emap = expert_map.to(device=dev, dtype=torch.int64)
        ids = torch.where(ids >= 0, emap[ids.clamp(min=0)], ids)
    # dropped slots (not on this rank, or out of range) go to a bucket past the last expert
    key = torch.where((ids >= 0) & (ids < experts), ids, torch.full_like(ids, experts))
    counts = torch.zeros(experts + 1, dtype=torch.int64, device=dev)
    counts.scatter_add_(0, key, torch.ones_like(key))
    padded = (counts[:experts] + bt - 1) // bt * bt
    ends = torch.cumsum(padded, 0)                              # [E] end row of each expert's run
    starts = torch.cat([torch.zeros(1, dtype=torch.int64, device=dev), ends])   # [E + 1]; E: the drop bucket
    first = torch.cumsum(counts, 0) - counts                    # [E + 1] first sorted index of each key
    order = torch.sort(key, stable=True).indices                # slots by expert
    k_sorted = key[order]
    rank = torch.arange(s, device=dev) - first[k_sorted]        # position within its expert
    dest = starts[k_sorted] + rank
    rows = tiles * bt
    dest = torch.where(k_sorted < experts, dest, torch.full_like(dest, rows))   # dropped: a dummy row past the end
    sorted_slots = torch.full((rows + 1,), s, dtype=torch.int64, device=dev)
    sorted_slots.scatter_(0, dest, order)
    tile_start = torch.arange(tiles, device=dev, dtype=torch.int64) * bt
    tile_expert = torch.searchsorted(ends, tile_start, right=True)
    tile_expert = torch.where(tile_start < ends[-1:], tile_expert, torch.full_like(tile_expert, -1))
    return sorted_slots[:rows], tile_expert.to(torch.int32)


# ---------------------------------------------------------------------------------------------------- choice
def moe_choice(arch: str, tokens_per_expert: int, fp: FormatParams, n: int, k: int, sms: int = 0) -> KernelChoice:
    """The kernel of an expert-indexed GEMM: the dense heuristics' choice for the tokens one expert sees (the M
    bucket of ``tokens_per_expert``), kept to grids whose blocks are one token tile each -- a stream-K or bulk choice
    becomes the cp.async kernel's, and the activation tile comes by cp.async rather than a TMA map of x (the
    heuristics list each TMA tile's cp.async twin next to it)."""
    bucket = m_bucket(max(1, tokens_per_expert))
    # (no prefetching wgmma decode: its one-block-per-SM grid rule is a dense layer's, not an expert grid's; no bulk
    # decode on big layers either -- a persistent grid -- so that they keep the direct decode, not the cp.async kernel)
    kw = dict(k=k, n=n, float_family=fp.family == "float", prefetch=False, bulk_decode=False)
    c = choose_kernel(arch, bucket, fp.bits, fp.group, fp.zero_mode, sms, **kw)
    if c.bulk:
        c = choose_kernel(arch, bucket, fp.bits, fp.group, fp.zero_mode, sms, pipeline="cp_async", **kw)
    if c.stream_k or c.tma_x:
        c = dataclasses.replace(c, stream_k=False, tma_x=False)
    return c


def tokens_per_expert(tokens: int, topk: int, experts: int) -> int:
    """The tokens an expert holding any sees on average: ceil(T * topk / min(E, T * topk))."""
    s = tokens * topk
    return -(-s // max(1, min(experts, s))) if s else 0


def moe_unsupported_reason(qws: Sequence[QuantizedWeight], out_dtype: torch.dtype) -> str:
    """Why these experts cannot run on the expert-indexed kernels ('' when they can)."""
    if not qws:
        return "no experts"
    first = qws[0]
    for q in qws:
        if q.desc != first.desc or q.shape != first.shape:
            return (f"experts differ in description or shape ({first.desc} {first.shape} vs {q.desc} {q.shape}); "
                    "one expert-indexed kernel serves experts of one format and shape")
        if q.k_perm is not None:
            return "act-order experts (k_perm): each expert would need its own column order of x"
        if (q.bias is None) != (first.bias is None):
            return "some experts have a bias and some do not"
    return unsupported_reason(first, None, out_dtype)


# ---------------------------------------------------------------------------------------------------- one side
class ExpertGemm:
    """One side of a MoE layer (w13 or w2): E experts of one description and shape, each repacked as a GemmLayer
    does, stacked expert-major, and run by the expert-indexed entry of the dense kernel.

    ``y = side(x_sorted, tile_expert, tokens, topk)``: x_sorted [tiles * bt, K8] holds the routed rows sorted by
    expert (moe_routing with ``side.bt(tokens, topk)``), y the same rows' outputs [tiles * bt, N]."""

    def __init__(self, qws: Sequence[QuantizedWeight], out_dtype: torch.dtype, name: str = ""):
        why = moe_unsupported_reason(qws, out_dtype)
        if why:
            raise DescError(f"MoE layer {name!r} ({qws[0].desc if qws else '?'}): {why}")
        self.name = name
        self.experts = len(qws)
        self.dtype = out_dtype
        self.desc = qws[0].desc
        self.n, self.k = qws[0].shape
        self.fp = format_params(self.desc)
        self.device = qws[0].qweight.device
        stacked: Dict[str, torch.Tensor] = {}
        tscales: List[Optional[torch.Tensor]] = []
        for e, q in enumerate(qws):
            layer = GemmLayer(q, None, out_dtype)        # the dense repack (codes, scales, zero points, folds)
            if e == 0:
                self.arch, self.info = layer.arch, layer.info
                self.n16, self.k64, self.k8 = layer.n16, layer.k64, layer.k8
            for attr in ("w", "gscale", "gzero", "chscale", "bias"):
                # (present for every expert or for none: the description decides, and moe_unsupported_reason
                # checked the bias)
                t = getattr(layer, attr)
                if t is None:
                    continue
                if e == 0:
                    stacked[attr] = torch.empty((self.experts,) + tuple(t.shape), dtype=t.dtype, device=t.device)
                stacked[attr][e].copy_(t)
            # the per-tensor fp32 scale may exist for some experts only: a float format's exponent fold (gemm.py
            # _fold_exponent) is per expert, 2^k with k = 0 for most -- the others then get 1.0
            tscales.append(layer.tscale)
            del layer
        for attr in ("w", "gscale", "gzero", "chscale", "bias"):
            setattr(self, attr, stacked.get(attr))
        self.tscale = None
        if any(t is not None for t in tscales):
            self.tscale = torch.ones(self.experts, dtype=torch.float32, device=self.device)
            for e, t in enumerate(tscales):
                if t is not None:
                    self.tscale[e:e + 1].copy_(t.reshape(1))
        per = lambda t: 0 if t is None else t[0].numel()       # noqa: E731  elements per expert
        self.strides = (per(self.w), per(self.gscale), per(self.chscale), per(self.bias))
        if self.gzero is not None and per(self.gzero) != self.strides[1]:
            raise DescError(f"MoE layer {name!r}: zero points and group scales differ in shape per expert")
        self._lock = threading.Lock()
        self._kernels: Dict[KernelChoice, tuple] = {}
        self._plans: Dict[Tuple[int, int], tuple] = {}
        self.plan_info: Dict[Tuple[int, int], dict] = {}     # (tokens, topk) -> what the plan chose
        self._tickets = torch.zeros(4096, dtype=torch.int32, device=self.device)
        self._old_tickets = []

    def choice(self, tokens: int, topk: int) -> KernelChoice:
        return moe_choice(self.arch, tokens_per_expert(tokens, topk, self.experts), self.fp, self.n, self.k,
                          self.info.sms)

    def bt(self, tokens: int, topk: int) -> int:
        """The token tile (moe_routing's padding) of this side's kernel for ``tokens`` tokens routed top-``topk``
        (from the cached plan: no heuristics per call)."""
        return (self._plans.get((tokens, topk)) or self._plan(tokens, topk))[2]

    def _kernel(self, choice: KernelChoice):
        kn = self._kernels.get(choice)
        if kn is None:
            with self._lock:
                kn = self._kernels.get(choice)
                if kn is None:
                    from ..jit import Launcher, compile_kernel, load_kernel

                    art = compile_kernel(_spec(self.fp, choice, self.dtype, self.arch, str(self.desc), experts=True))
                    fn = load_kernel(art, self.device)
                    fit = kernel_fit(choice, stage_smem(choice, self.fp), fn.num_regs, fn.static_smem, self.info)
                    fn.set_max_smem(fit.smem)
                    # no programmatic dependent launch: tile_expert comes from the kernel just before
                    kn = (fn, fit, Launcher(fn, _MOE_ARG_TYPES, pdl=False))
                    self._kernels[choice] = kn
        return kn

    def _plan(self, tokens: int, topk: int):
        plan = self._plans.get((tokens, topk))
        if plan is not None:
            return plan
        choice = self.choice(tokens, topk)
        rows = moe_max_tiles(tokens * topk, self.experts, choice.bt) * choice.bt
        _, fit, launcher = self._kernel(choice)
        try:
            lp = plan_launches(rows, self.n16, self.k64, self.fp.bits, self.fp.group, self.fp.zero_mode, self.info,
                               lambda tag: fit, polled_ok=False)   # (the polled split-K end: dense layers only)
        except PlanError as e:
            raise DescError(f"MoE layer {self.name!r} ({self.desc}), {tokens} tokens: {e}") from None
        if lp.ticket_tiles > self._tickets.numel():
            self._old_tickets.append(self._tickets)     # captured graphs may still point at the old counters
            self._tickets = torch.zeros(lp.ticket_tiles, dtype=torch.int32, device=self.device)
        ptr = lambda t: 0 if t is None else t.data_ptr()          # noqa: E731
        consts = (ptr(self.w), ptr(self.gscale), ptr(self.gzero), ptr(self.chscale), ptr(self.tscale), ptr(self.bias))
        bounds = []
        for pl in lp.launches:
            ws = _workspace(self.device, pl.ws_numel) if pl.ws_numel else None
            values = ((0,) + consts + (0, ptr(ws), ptr(self._tickets) if ws is not None else 0) +
                      (rows, self.n, self.k8, self.n16, self.k64, pl.atoms_per_split, pl.flags) +
                      (0,) + self.strides)
            bounds.append(launcher.bind(pl.grid, pl.choice.threads, pl.smem, values, varying=(_X, _Y, _TILE_EXPERT)))
        plan = (tuple(bounds), rows, choice.bt)
        self.plan_info[(tokens, topk)] = dict(lp.info, rows=rows)
        if os.environ.get("HUMMING_PRINT_CHOICE") == "1":
            print(f"[humming] MoE layer {self.name!r} {tokens} tokens x top-{topk} of {self.experts} experts, "
                  f"{rows} sorted rows: {describe(lp)}")
        self._plans[(tokens, topk)] = plan
        return plan

    def __call__(self, x_sorted: torch.Tensor, tile_expert: torch.Tensor, tokens: int, topk: int,
                 out: Optional[torch.Tensor] = None) -> torch.Tensor:
        bounds, rows, bt = self._plans.get((tokens, topk)) or self._plan(tokens, topk)
        if x_sorted.shape != (rows, self.k8) or x_sorted.dtype != self.dtype or not x_sorted.is_contiguous():
            raise DescError(f"MoE layer {self.name!r}: sorted activations must be a contiguous {self.dtype} "
                            f"[{rows}, {self.k8}] tensor for {tokens} tokens, got {x_sorted.dtype} "
                            f"{list(x_sorted.shape)}")
        if tile_expert.numel() * bt != rows or tile_expert.dtype != torch.int32:
            raise DescError(f"MoE layer {self.name!r}: tile_expert must be int32 [{rows // bt}]")
        if out is None:
            y = x_sorted.new_empty((rows, self.n))
        else:
            if out.shape != (rows, self.n) or out.dtype != self.dtype or not out.is_contiguous():
                raise DescError(f"MoE layer {self.name!r}: out must be a contiguous {self.dtype} [{rows}, {self.n}]")
            y = out
        xp, yp, tp = x_sorted.data_ptr(), y.data_ptr(), tile_expert.data_ptr()
        for b in bounds:
            b(xp, yp, tp)
        return y


# ---------------------------------------------------------------------------------------------------- the layer


class FusedMoeGemm:
    """A whole MoE layer on the expert-indexed kernels: y[t] = sum_j w[t, j] * W2_e(act(W13_e x[t])), e = ids[t, j].

    ``w13``: per expert the [gate; up] weight stacked along N (vLLM's w13 order; the ``*_no_mul`` activations take the
    whole output), ``w2`` the down weight.  ``sides``: (w13, w2) objects with ExpertGemm's interface -- tests pass
    torch references to run the routing without a GPU."""

    def __init__(self, w13: Optional[Sequence[QuantizedWeight]], w2: Optional[Sequence[QuantizedWeight]],
                 out_dtype: torch.dtype, name: str = "", sides=None):
        if sides is None:
            sides = (ExpertGemm(w13, out_dtype, f"{name}.w13"), ExpertGemm(w2, out_dtype, f"{name}.w2"))
        self.w13, self.w2 = sides
        self.dtype = out_dtype
        self.name = name
        self.experts = self.w13.experts
        if self.w2.experts != self.experts:
            raise DescError(f"MoE layer {name!r}: {self.w13.experts} w13 experts but {self.w2.experts} w2 experts")
        self.hidden = self.w13.k
        if self.w2.n != self.hidden or self.w13.n not in (self.w2.k, 2 * self.w2.k):
            raise DescError(f"MoE layer {name!r}: w13 experts are [{self.w13.n}, {self.w13.k}] and w2 experts "
                            f"[{self.w2.n}, {self.w2.k}]; expected w13 [2 * I (or I for *_no_mul), H] and w2 [H, I]")
        self.device = getattr(self.w13, "device", None)
        self._route = None        # MoeRouteKernels, made on the first CUDA call (ops/moe_route.py)

    def __call__(self, x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor, activation="silu",
                 expert_map: Optional[torch.Tensor] = None, apply_router_weight_on_input: bool = False,
                 activation_kw: Optional[dict] = None) -> torch.Tensor:
        from ..moe.fallback import activation_fn

        if x.dim() != 2 or not x.is_floating_point():
            raise DescError(f"MoE layer {self.name!r}: x must be a 2-D [tokens, hidden] floating tensor (bfloat16, "
                            f"float16 or float32), got {x.dtype} {list(x.shape)}")
        t, h = x.shape
        if h != self.hidden:
            raise DescError(f"MoE layer {self.name!r}: input has hidden size {h}, experts expect {self.hidden}")
        if topk_ids.dim() != 2 or topk_ids.shape[0] != t or topk_weights.shape != topk_ids.shape:
            raise DescError(f"MoE layer {self.name!r}: topk_ids and topk_weights must both be [{t}, topk], got "
                            f"{list(topk_ids.shape)} and {list(topk_weights.shape)}")
        if topk_ids.is_floating_point() or topk_ids.dtype == torch.bool or not topk_weights.is_floating_point():
            raise DescError(f"MoE layer {self.name!r}: topk_ids must be integer expert ids and topk_weights floating "
                            f"router weights, got {topk_ids.dtype} and {topk_weights.dtype}")
        if self.device is not None:
            for what, tt in (("x", x), ("topk_ids", topk_ids), ("topk_weights", topk_weights)):
                if tt.device != self.device:
                    raise DescError(f"MoE layer {self.name!r}: {what} is on {tt.device}, the experts on "
                                    f"{self.device}")
        topk = topk_ids.shape[1]
        if t == 0:
            return x.new_zeros((0, self.w2.n), dtype=self.dtype)
        s = t * topk
        route = self._route_kernels(s)
        if route is not None:
            return self._call_route_kernels(route, x, topk_weights, topk_ids, activation, expert_map,
                                            apply_router_weight_on_input, activation_kw or {})
        x = x.to(self.dtype)
        bt1 = self.w13.bt(t, topk)
        slots1, tiles1 = moe_routing(topk_ids, self.experts, bt1, expert_map)
        w_ext = torch.cat([topk_weights.reshape(-1).to(torch.float32),
                           torch.zeros(1, dtype=torch.float32, device=x.device)])
        # x of each sorted row: slot // topk is its token; padding rows (slot s) read an appended zero row
        x_ext = torch.cat([x, x.new_zeros((1, h))])
        xs = x_ext.index_select(0, slots1 // topk)
        if apply_router_weight_on_input:
            xs = (xs.to(torch.float32) * w_ext.index_select(0, slots1).unsqueeze(1)).to(self.dtype)
        if self.w13.k8 != h:
            xs = torch.nn.functional.pad(xs, (0, self.w13.k8 - h))
        h1 = self.w13(xs.contiguous(), tiles1, t, topk)
        # (in fp32 from the rounded GEMM output, rounded once: as the plain-torch fallback does)
        a = activation_fn(activation, h1.to(torch.float32), **(activation_kw or {})).to(self.dtype)
        if a.shape[1] != self.w2.k:
            raise DescError(f"MoE layer {self.name!r}: activation {activation!r} turns w13's {h1.shape[1]} outputs "
                            f"into {a.shape[1]}, but the w2 experts take {self.w2.k} inputs")
        bt2 = self.w2.bt(t, topk)
        if bt2 == bt1:
            slots2, tiles2 = slots1, tiles1
        else:
            # the second kernel pads each expert's run to its own tile: re-sort the rows through their slots
            slots2, tiles2 = moe_routing(topk_ids, self.experts, bt2, expert_map)
            by_slot = a.new_zeros((s + 1, a.shape[1]))
            by_slot.index_copy_(0, slots1, a)              # (every padding row lands on the dummy slot s)
            a = by_slot.index_select(0, slots2)
        if self.w2.k8 != a.shape[1]:
            a = torch.nn.functional.pad(a, (0, self.w2.k8 - a.shape[1]))
        o = self.w2(a.contiguous(), tiles2, t, topk)
        o = o.to(torch.float32)
        if not apply_router_weight_on_input:
            o = o * w_ext.index_select(0, slots2).unsqueeze(1)
        out = torch.zeros((t + 1, o.shape[1]), dtype=torch.float32, device=x.device)
        out.index_add_(0, slots2 // topk, o)        # padding / dropped rows sum into the dummy row t
        return out[:t].to(self.dtype)


    def _route_kernels(self, slots: int):
        """The route kernels (ops/moe_route.py) where they apply -- a CUDA layer, at most ALIGN_MAX_SLOTS routed
        slots whose keys and expert runs fit the align block's 48 KB of shared memory, HUMMING_MOE_ROUTE_KERNELS not
        0 -- else None (the torch ops below)."""
        from .gemm import KERNEL_DEVICE_TYPES
        from .moe_route import ALIGN_MAX_SLOTS, MoeRouteKernels, align_smem_bytes

        if self.device is None or torch.device(self.device).type not in KERNEL_DEVICE_TYPES or slots > ALIGN_MAX_SLOTS:
            return None
        if align_smem_bytes(slots, self.experts) > 48 * 1024:     # (the align block's default shared memory)
            return None
        if os.environ.get("HUMMING_MOE_ROUTE_KERNELS", "1").strip() == "0":
            return None
        if self._route is None:
            self._route = MoeRouteKernels(self.dtype, self.device, self.name)
        return self._route

    def _call_route_kernels(self, route, x, topk_weights, topk_ids, activation, expert_map, on_input, act_kw):
        """The layer in six launches: align, gather, w13 GEMM, activation, w2 GEMM, combine (the torch path's math,
        the combine's fp32 sum in a fixed order)."""
        from .moe_route import activation_code

        t, h = x.shape
        topk = topk_ids.shape[1]
        s = t * topk
        w = topk_weights
        if w.dtype != torch.float32 or not w.is_contiguous():
            w = w.to(torch.float32).contiguous()
        bt1 = self.w13.bt(t, topk)
        slots1, tiles1, srow1 = route.align(topk_ids, self.experts, bt1, moe_max_tiles(s, self.experts, bt1),
                                            expert_map)
        xs = route.gather(x, slots1, w, topk, self.w13.k8, on_input)
        h1 = self.w13(xs, tiles1, t, topk)
        code = activation_code(activation)
        gated = code[1] if code is not None else None
        if code is None:   # an activation the kernel lacks: activation_fn raises for unknown ones
            from ..moe.fallback import activation_fn

            a = activation_fn(activation, h1.to(torch.float32), **act_kw).to(self.dtype)
            n_out = a.shape[1]
        else:
            n_out = h1.shape[1] // 2 if gated else h1.shape[1]
        if n_out != self.w2.k:
            raise DescError(f"MoE layer {self.name!r}: activation {activation!r} turns w13's {h1.shape[1]} outputs "
                            f"into {n_out}, but the w2 experts take {self.w2.k} inputs")
        if code is None:
            a = torch.nn.functional.pad(a, (0, self.w2.k8 - n_out)) if self.w2.k8 != n_out else a
        else:
            a = route.activation(h1, code[0], n_out, self.w2.k8, act_kw.get("alpha") or 1.702,
                                 act_kw.get("limit") or 7.0)
        bt2 = self.w2.bt(t, topk)
        if bt2 == bt1:
            tiles2, srow2 = tiles1, srow1
        else:
            # the second kernel pads each expert's run to its own tile: row r2 takes the row its slot had (a zero
            # row for padding) -- static shapes, so graphs capture it
            slots2, tiles2, srow2 = route.align(topk_ids, self.experts, bt2, moe_max_tiles(s, self.experts, bt2),
                                                expert_map)
            src = torch.cat([srow1, srow1.new_full((1,), a.shape[0])]).index_select(0, slots2.to(torch.int64))
            a = torch.cat([a, a.new_zeros((1, a.shape[1]))]).index_select(0, src.to(torch.int64))
        o = self.w2(a, tiles2, t, topk)
        return route.combine(o, srow2, w, t, topk, weighted=not on_input)


def build_fused_moe(w13: Sequence[QuantizedWeight], w2: Sequence, out_dtype: torch.dtype, device, name: str = ""
                    ) -> Tuple[Optional[FusedMoeGemm], str]:
    """The expert-indexed kernel path of one MoE layer, or (None, why not) -- the caller then keeps its plain-torch
    fallback.  ``w13``: per expert the [gate; up] weight (QuantizedWeight); ``w2``: per expert the down weight, a
    QuantizedWeight or a tensor-parallel ``linear.shard.ShardedWeight`` (a shard that cuts scale groups carries a
    column gather of x, which these kernels do not apply: refused).  Off with HUMMING_MOE_KERNELS=0."""
    if os.environ.get("HUMMING_FORCE_FALLBACK") == "1":
        return None, "fallback forced (HUMMING_FORCE_FALLBACK=1)"
    if not moe_kernels_enabled():
        return None, "HUMMING_MOE_KERNELS=0 (the expert-indexed kernels are turned off)"
    device = torch.device(device)
    if device.type != "cuda":
        return None, f"weights on {device.type}, kernels need CUDA"
    down: List[QuantizedWeight] = []
    for e, sw in enumerate(w2):
        if getattr(sw, "gather", None) is not None:
            return None, (f"expert {e}'s down projection is a tensor-parallel shard that cuts its scale groups or "
                          "act-order (a column gather of x per expert)")
        down.append(getattr(sw, "qw", sw))
    qws13 = [q.to(device) for q in w13]
    qws2 = [q.to(device) for q in down]
    for side, qws in (("w13", qws13), ("w2", qws2)):
        why = moe_unsupported_reason(qws, out_dtype)
        if why:
            return None, f"{side}: {why}"
    return FusedMoeGemm(qws13, qws2, out_dtype, name=name), ""
