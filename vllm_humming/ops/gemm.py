"""WnA16 GEMM on our JIT-compiled kernels: format mapping, load-time repack, kernel selection and the launch path.

    layer = GemmLayer(qw, act, out_dtype)      # repack on the weight's GPU; nothing compiled yet
    layer.warmup()                             # optional: compile every M bucket's kernel in parallel
    y = layer(x)                               # picks the M bucket's kernel (compiling it on first use) and launches

``FormatParams`` is everything the kernel template needs to know about the description (element family, code offset,
in-loop group scale size, zero-point mode, epilogue scales); ``KernelChoice`` (vllm_humming.tuning) is everything it
needs to know about execution.  One instantiation is generated per (FormatParams, KernelChoice, compute dtype, arch).
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

from ..desc import ActDesc, DescError, WeightDesc
from ..dtypes import FloatType, IntType
from ..packing import unpack_codes
from ..qweight import QuantizedWeight
from ..reference import decode_scale
from ..tuning.heuristics import (KernelChoice, arch_info, choose_kernel, default_prefill_m, groups_per_stage,
                                 m_bucket, M_BUCKETS, plan_alternatives)
# (pdl_early_release and splitk_reducers are part of this module's interface: the plan module computes them)
from .plan import (FLAG_SPLITK_POLL, PlanError, describe, kernel_fit, pdl_early_release, plan_launches,  # noqa: F401
                   splitk_reducers)
from .repack import kernel_int_codes, repack_codes

__all__ = ["FormatParams", "format_params", "unsupported_reason", "kernel_family", "kernel_source", "GemmLayer",
           "layer_kernel_specs", "OfflinePlanner"]

_CTYPE = {torch.bfloat16: "__nv_bfloat16", torch.float16: "__half"}
_MANT = {torch.bfloat16: 7, torch.float16: 10}
_EXPB = {torch.bfloat16: 8, torch.float16: 5}
_EBIAS = {torch.bfloat16: 127, torch.float16: 15}
_ZERO_MODE = {None: 0, "int": 1, "float": 2}


@dataclass(frozen=True)
class FormatParams:
    """What the kernel template needs from a weight description (never a tile size)."""

    family: str            # "int" | "float"
    bits: int
    exp: int               # float families
    man: int
    offset: int            # int families: value = code - offset
    group: int             # in-loop group scale size along K (0: none)
    zero_mode: int         # 0 none, 1 int, 2 float
    epilogue_channel: bool # per-output-channel fp32 scale in the epilogue
    epilogue_tensor: bool  # per-tensor fp32 scale in the epilogue

    def family_cpp(self, ctype: str) -> str:
        if self.family == "int":
            return f"humming::IntFamily<{ctype}, {self.bits}>"
        return f"humming::FloatFamily<{ctype}, {self.exp}, {self.man}>"


def _fold_exponent(scales: torch.Tensor, fp: FormatParams, dt: torch.dtype) -> Tuple[torch.Tensor, int]:
    """The exponent fold (dequant.cuh): float group scales [groups, N16] (fp32) -> (S * 2^(adj - k), k) with adj =
    FloatFamily::kExpAdjust for ``dt`` and k >= 0 the smallest that keeps every folded scale finite in ``dt`` (the
    kernels' operand is then R * S', one multiply per pair; the epilogue's tensor scale carries 2^k).  Powers of two:
    exact wherever the folded scale is a normal ``dt`` number."""
    adj = _EBIAS[dt] - ((1 << (fp.exp - 1)) - 1)
    top = scales.abs().max().item()
    k = 0
    if top > 0:
        # start from the exponent count that just fits, then step up while rounding to dt would still overflow
        k = max(0, adj + math.frexp(top)[1] - _EBIAS[dt] - 1)
        while not math.isfinite(torch.tensor(top * 2.0 ** (adj - k), dtype=torch.float32).to(dt).item()):
            k += 1
    return scales * 2.0 ** (adj - k), k


def format_params(desc: WeightDesc) -> FormatParams:
    d = desc.dtype
    s = desc.scale
    group, ch, tensor = 0, False, False
    if s is not None:
        if s.granularity == "group":
            group = s.group_size
        elif s.granularity == "block":
            group = s.block[1]          # expanded to per-row groups of block[1] columns at repack
        elif s.granularity == "channel":
            if desc.zero_point is not None:
                group = 256             # channel zero points ride on the group path (repeated per 256 columns)
            else:
                ch = True
        elif s.granularity == "tensor":
            tensor = True
    if desc.scale2 is not None:
        if desc.scale2.granularity == "channel":
            ch = True
        else:
            tensor = True
    if isinstance(d, IntType):
        offset = (1 << (d.bits - 1)) if d.signed else d.bias
        return FormatParams("int", d.bits, 0, 0, offset, group, _ZERO_MODE[desc.zero_point], ch, tensor)
    return FormatParams("float", d.bits, d.exp_bits, d.man_bits, 0, group, 0, ch, tensor)


# The device types the kernel path serves, and the two device queries it makes.  tests/host/emu_launch.py adds "cpu"
# with stand-in queries: the kernels then run on the CPU emulation of the CUDA thread model, through this same code.
KERNEL_DEVICE_TYPES = ("cuda",)


def _device_capability(dev) -> Tuple[int, int]:
    return torch.cuda.get_device_capability(dev)


def _device_sms(dev) -> int:
    """The SMs a layer plans its grids for: the device's, or ``HUMMING_DEBUG_SMS`` (experiments: with
    ``tuning.sm_reserve`` holding the rest, a kernel runs at another card's per-SM load; never above the device's)."""
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    forced = os.environ.get("HUMMING_DEBUG_SMS", "").strip()
    if forced:
        if not forced.isdigit() or not 0 < int(forced) <= sms:
            raise DescError(f"HUMMING_DEBUG_SMS={forced!r}: expected an SM count from 1 to this device's {sms}")
        return int(forced)
    return sms


def kernel_device(device, where: str) -> torch.device:
    """The device a kernel object (``where`` names it in errors) runs on: a KERNEL_DEVICE_TYPES device, a CUDA one
    with its index."""
    device = torch.device(device)
    if device.type not in KERNEL_DEVICE_TYPES:
        raise DescError(f"{where}: the kernels run on CUDA, not {device}")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def unsupported_reason(qw: QuantizedWeight, act: ActDesc, out_dtype: torch.dtype) -> str:
    """Why this layer cannot run on our GPU kernels ('' when it can)."""
    desc = qw.desc
    if act is not None and act.quantized:
        # quantized activations: the act-quant kernel, then this GEMM on its bf16 / fp16 values (act_quant.py)
        from .act_quant import act_quant_unsupported_reason

        why = act_quant_unsupported_reason(act, out_dtype, qw.k_perm is not None)
        if why:
            return f"activations {act}: {why}"
    if out_dtype not in _CTYPE:
        return f"GPU kernels compute and write bfloat16 or float16, not {out_dtype}"
    dev = qw.qweight.device
    if dev.type not in KERNEL_DEVICE_TYPES:
        return f"weights on {dev.type}"
    major, minor = _device_capability(dev)
    if major < 8 and out_dtype == torch.bfloat16:
        return f"sm_{major}{minor} has no bf16 tensor-core MMA; use float16 activations"
    if major < 7 or (major == 7 and minor < 5):
        return f"sm_{major}{minor} is older than the oldest supported arch (sm_75)"
    d = desc.dtype
    if isinstance(d, FloatType):
        if d.man_bits > _MANT[out_dtype] or d.exp_bits > _EXPB[out_dtype]:
            return f"{d} does not fit {out_dtype} (exponent/mantissa too wide)"
        adj = _EBIAS[out_dtype] - ((1 << (d.exp_bits - 1)) - 1)
        if not (0 < adj + _EBIAS[out_dtype] < (1 << _EXPB[out_dtype]) - 1):
            return f"{d} exponent range does not fit {out_dtype}"
    fp = format_params(desc)
    if fp.group and fp.group % 16:
        return f"scale group/block width {fp.group} is not a multiple of 16"
    return ""


def kernel_family(desc: WeightDesc, act: Optional[ActDesc] = None) -> str:
    """A short name of the kernel family a description runs on (for `inspect`), or the fallback reason."""
    pre = ""
    if act is not None and act.quantized:
        from .act_quant import act_quant_unsupported_reason

        why = act_quant_unsupported_reason(act, torch.bfloat16)
        if why:
            return f"torch fallback (activations {act}: {why})"
        pre = f"act quant ({act}) -> "
    fp = format_params(desc)
    what = f"int{fp.bits}" if fp.family == "int" else f"e{fp.exp}m{fp.man}"
    scale = (f"g{fp.group}" if fp.group else "") + ("+channel" if fp.epilogue_channel else "") + \
            ("+tensor" if fp.epilogue_tensor else "")
    zp = {0: "", 1: "+zp", 2: "+fzp"}[fp.zero_mode]
    return f"{pre}wna16 mma.sync ({what}{zp} {scale or 'noscale'})"


# ---------------------------------------------------------------------------------------------------- codegen
_ARGS = ("x", "w", "gscale", "gzero", "chscale", "tscale", "bias", "y", "ws", "tickets",
         "M", "N", "K", "N16", "K64", "atoms_per_split", "flags")
_ARG_TYPES = ("ptr",) * 10 + ("i32",) * 7


def _arg_types(choice: KernelChoice) -> tuple:
    """Launcher argument types of a choice's kernel: _ARG_TYPES, + the by-value tensor map of x for tma_x kernels."""
    if choice.tma_x:
        from ..jit.tma import map_arg_type

        return _ARG_TYPES + (map_arg_type(),)
    return _ARG_TYPES


class _Launches:
    """The bound launches of one plan, called in order with the same (x, y) addresses: a split-K grid run as whole
    waves plus a split tail (heuristics.dp_tail_split) is two launches of one kernel."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = tuple(parts)

    def __call__(self, xp: int, yp: int) -> None:
        for part in self.parts:
            part(xp, yp)


class _MapSlots:
    """The TMA map slots of a plan's launches, updated together when x moves."""

    __slots__ = ("slots",)

    def __init__(self, slots):
        self.slots = tuple(slots)

    def update(self, ptr: int) -> None:
        for slot in self.slots:
            slot.update(ptr)
def x16_covers(fp: FormatParams, dtype: torch.dtype) -> bool:
    """Whether an x16 choice (KernelChoice.x16) means anything for this format and activation dtype: bf16 activations
    with 4-bit integer codes (the magic-number decode: IntFamily::kMagic) -- fp16 activations decode that way already,
    other codes have no one-shift decode."""
    return dtype == torch.bfloat16 and fp.family == "int" and fp.bits == 4


def x16_applies(arch: str, fp: FormatParams, dtype: torch.dtype) -> bool:
    """Whether a layer launches the x16 twin of its decode choice at M <= x16_max_m(K) (heuristics.x16_sibling): where
    x16_covers the layer, on sm_90a, the one arch it was measured on (H200, NOTES.md session 24)."""
    return arch == "sm_90a" and x16_covers(fp, dtype)


def stage_smem(choice: KernelChoice, fp: FormatParams) -> int:
    """Dynamic shared memory of a choice for this format (KernelChoice.smem_bytes)."""
    return choice.smem_bytes(fp.bits, groups_per_stage(fp.group, choice.block_k), fp.zero_mode != 0, fp.group)


def format_choice(arch: str, bucket: int, fp: FormatParams, n: int, k: int, sms: int = 0) -> KernelChoice:
    """The heuristics' kernel choice for one M bucket of an N x K layer of this format (what GemmLayer, the offline
    planner and layer_kernel_specs take where no choice is forced)."""
    return choose_kernel(arch, bucket, fp.bits, fp.group, fp.zero_mode, sms, k=k, n=n,
                         float_family=fp.family == "float")


def format_alternatives(choice: KernelChoice, arch: str, fp: FormatParams, dtype: torch.dtype, n: int = 0, k: int = 0,
                        sms: int = 0) -> List[Tuple[str, KernelChoice]]:
    """heuristics.plan_alternatives of a bucket's choice for an N x K layer (on ``sms`` SMs; 0 = the arch's) that can
    serve this format and dtype on this arch (the x16 twins only where x16_applies) and whose stages fit shared
    memory for it -- what layer_kernel_specs compiles and GemmLayer's plan may launch."""
    info = arch_info(arch, sms)
    alts = plan_alternatives(choice, fp.bits, n=n, k=k, group=fp.group, float_family=fp.family == "float",
                             sms=info.sms)
    return [(tag, alt) for tag, alt in alts
            if (not tag.endswith("x16") or x16_applies(arch, fp, dtype)) and stage_smem(alt, fp) <= info.smem_per_block]


def kernel_source(fp: FormatParams, choice: KernelChoice, dtype: torch.dtype,
                  experts: bool = False) -> Tuple[str, str]:
    """(kernel name, generated .cu source) for one instantiation.

    ``experts``: the expert-indexed (MoE) entry of the same kernel (ops/moe_gemm.py): x holds the routed tokens sorted
    by expert, each token tile belonging to one expert, and the entry offsets the weight tensors by that expert's
    strides before running the dense kernel on the tile -- the mainloop, dequant and epilogue are the dense ones.
    Only grids whose blockIdx.x is the token tile qualify (no stream-K or bulk schedule; moe_gemm.moe_choice)."""
    if experts and (choice.bulk or choice.stream_k or choice.tma_x):
        raise DescError(f"kernel choice {choice.short()} has no expert-indexed entry: its blocks are not one token "
                        "tile each (stream-K / bulk) or its activation tile comes through a TMA map of x")
    ctype = _CTYPE[dtype]
    # the direct kernels take their K range at launch (atoms_k is the host's cap on it): their config carries one
    # atom per K-warp, which keeps GemmConfig's invariants and lets choices that differ only in the cap share a kernel
    atoms_k = choice.warps_k if choice.direct else choice.atoms_k
    cfg = (f"humming::GemmConfig<{ctype}, {fp.family_cpp(ctype)}, {fp.group}, {fp.zero_mode}, {fp.offset}, "
           f"{choice.bt}, {choice.warps_n}, {choice.tiles_m}, {choice.warps_k}, {atoms_k}, {choice.stages}"
           f"{', humming::kMmaWgmma' if choice.wgmma else ''}>")
    targs = "<Cfg>"
    if choice.bulk:
        header, entry, extra, tag = "gemm_wna16_sm90.cuh", "gemm_wna16_sm90", "", "wna16sm90"
        if choice.tma_x:      # gemm_wna16_sm90<Cfg, kTmaX>: + the tensor map of x, by value
            targs, tag, extra = "<Cfg, true>", "wna16sm90tma", ", &x_map"
    elif choice.direct:
        header, entry, extra, tag = "gemm_wna16_direct.cuh", "gemm_wna16_direct", ", atoms_per_split, flags", "wna16direct"
        if choice.cluster:   # gemm_wna16_direct<Cfg, kCluster>, launched as (1, 1, S) clusters
            targs, tag = f"<Cfg, {choice.cluster}>", f"wna16directc{choice.cluster}"
        if choice.x16:       # bf16 activations staged as fp16 (KernelChoice.x16): a macro of this instantiation
            tag += "x16"
        if choice.pf:        # weights prefetched to shared memory (KernelChoice.pf): macros of this instantiation
            tag += f"pf{'r' if choice.pf_ring else ''}{choice.pf}"
    else:
        header, entry, extra, tag = "gemm_wna16.cuh", "gemm_wna16", ", atoms_per_split, flags", "wna16"
        if choice.tma_x:      # gemm_wna16<Cfg, kStreamK, 0, kTmaX>: + the tensor map of x, by value
            targs = f"<Cfg, {'true' if choice.stream_k else 'false'}, 0, true>"
            tag = "wna16sktma" if choice.stream_k else "wna16tma"
            extra += ", &x_map"
        elif choice.stream_k:   # gemm_wna16<Cfg, kStreamK>
            targs, tag = "<Cfg, true>", "wna16sk"
        elif choice.cluster:  # gemm_wna16<Cfg, false, kCluster>, launched as (1, 1, S) clusters
            targs, tag = f"<Cfg, false, {choice.cluster}>", f"wna16c{choice.cluster}"
    if experts:
        tag = "moe_" + tag
    name = f"humming_{tag}_" + hashlib.sha1(cfg.encode()).hexdigest()[:16]
    # HUMMING_DEBUG_DEFINES=A,B=8: extra macros for experiments (e.g. HUMMING_SKIP_MATH times the pipeline alone,
    # HUMMING_DIRECT_PREFETCH=8 a prefetch distance); a bare name is defined as 1.  They are part of the source, hence
    # of the cache key
    macros = debug_defines()
    if choice.x16 and all(name != "HUMMING_BF16_AS_FP16" for name, _ in macros):
        # DirectPlan::kX16 (gemm_wna16_direct.cuh) for this instantiation; formats it does not apply to (not 4-bit
        # integer codes, fp16 activations) compile the plain kernel, and the layer never launches those
        macros.append(("HUMMING_BF16_AS_FP16", "1"))
    if choice.pf:
        # DirectPrefetch (gemm_wna16_direct.cuh): the budget in bytes, and the ring mode
        if any(name.startswith("HUMMING_DIRECT_SMEM_") for name, _ in macros):
            raise DescError(f"kernel choice {choice.short()} sets its own shared-memory prefetch; drop "
                            "HUMMING_DIRECT_SMEM_PREFETCH / _RING from HUMMING_DEBUG_DEFINES (they are for choices "
                            "without _pf)")
        macros.append(("HUMMING_DIRECT_SMEM_PREFETCH", str(choice.pf * 1024)))
        if choice.pf_ring:
            macros.append(("HUMMING_DIRECT_SMEM_RING", "1"))
    defines = "".join(f"#define {name} {value}\n" for name, value in macros)
    # HUMMING_DEBUG_MIN_BLOCKS=N (experiments): __launch_bounds__ minimum resident blocks, i.e. a register budget
    min_blocks = os.environ.get("HUMMING_DEBUG_MIN_BLOCKS", "").strip()
    if min_blocks and not (min_blocks.isdigit() and 1 <= int(min_blocks) <= 32):
        raise DescError(f"HUMMING_DEBUG_MIN_BLOCKS must be an integer 1..32, got {min_blocks!r}")
    if not min_blocks and choice.min_blocks > 1:
        min_blocks = str(register_min_blocks(fp, choice))
    bounds = f"{choice.threads}, {int(min_blocks)}" if min_blocks else f"{choice.threads}"
    # the K splits of a tile as one cluster: the driver launches the grid (z = S) in (1, 1, S) clusters
    cluster = f" __cluster_dims__(1, 1, {choice.cluster})" if choice.cluster else ""
    map_param = ", const __grid_constant__ humming::TmaMap x_map" if choice.tma_x else ""
    params = """const Cfg::T* x, const uint32_t* w, const Cfg::T* gscale, const Cfg::T* gzero, const float* chscale,
    const float* tscale, const Cfg::T* bias, Cfg::T* y, float* ws, int* tickets, int M, int N, int K, int N16,
    int K64, int atoms_per_split, int flags"""
    if not experts:
        body = f"""extern "C" __global__ void __launch_bounds__({bounds}){cluster} {name}(
    {params}{map_param}) {{
  humming::{entry}{targs}(x, w, gscale, gzero, chscale, tscale, bias, y, ws, tickets, M, N, K, N16, K64{extra});
}}
"""
    else:
        # the expert-indexed entry: token tile blockIdx.x of the expert-sorted x is expert tile_expert[blockIdx.x]'s
        # (-1: a padding tile past the routed tokens -- every block of it leaves, its K splits and cluster ranks
        # too, so no split-K ticket or cluster barrier ever waits on it).  Per-expert strides in elements of each
        # tensor (0 where the layer has none).  Launched without programmatic dependent launch: tile_expert is
        # written by the kernel just before.
        body = f"""extern "C" __global__ void __launch_bounds__({bounds}){cluster} {name}(
    {params}, const int* tile_expert, long long w_estride, long long s_estride, int ch_estride, int bias_estride) {{
  const int e = tile_expert[blockIdx.x];
  if (e < 0) return;
  const size_t E = (size_t)e;
  humming::{entry}{targs}(x, w + E * (size_t)w_estride, gscale ? gscale + E * (size_t)s_estride : gscale,
      gzero ? gzero + E * (size_t)s_estride : gzero, chscale ? chscale + E * (size_t)ch_estride : chscale,
      tscale ? tscale + E : tscale, bias ? bias + E * (size_t)bias_estride : bias, y, ws, tickets, M, N, K, N16,
      K64{extra});
}}
"""
    src = f"""// generated by vllm_humming.ops.gemm -- one instantiation of kernels/include/humming/{header}
// format: {fp}
// choice: {choice.short()}{' (expert-indexed entry)' if experts else ''}
{defines}#include "humming/{header}"
using Cfg = {cfg};
{body}"""
    return name, src


def register_min_blocks(fp: FormatParams, choice: KernelChoice) -> int:
    """The __launch_bounds__ minimum blocks per SM of a choice for this format: KernelChoice.min_blocks (the register
    budget that leaves room for that many blocks), but never more blocks than the choice's shared memory lets reside
    -- a register cap that buys no occupancy only makes ptxas spill.  H200, int4 / int3, the 128-row x 128-token
    two-atom tile (124-127 KB, one block per SM; capped at 128 registers it spilled 24-56 bytes): uncapped 21.8 / 30.9
    vs 22.8 / 33.4 us on 6144x4096 at M = 128 / 256 (results/h200-2026-12-02-s17/a_sweep_*cap_*.txt)."""
    mb = choice.min_blocks
    if mb <= 1 or choice.direct:   # (a direct kernel's shared memory is per launch: its plan checks residency)
        return mb
    smem = stage_smem(choice, fp)
    # (min_blocks > 0 only for wgmma choices, which run on sm_90a alone: its shared memory per SM)
    return max(1, min(mb, arch_info("sm_90a").smem_per_sm // (smem + 1024)))


def debug_defines() -> List[Tuple[str, str]]:
    """HUMMING_DEBUG_DEFINES (experiments only): comma-separated `NAME` (defined as 1) or `NAME=INTEGER` macros."""
    out = []
    for item in (d.strip() for d in os.environ.get("HUMMING_DEBUG_DEFINES", "").split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        value = value.strip() if _ else "1"
        if not name.strip().isidentifier() or not value.lstrip("-").isdigit():
            raise DescError(f"HUMMING_DEBUG_DEFINES takes comma-separated NAME or NAME=INTEGER macros, got {item!r}")
        out.append((name.strip(), value))
    return out


def pdl_enabled() -> bool:
    """HUMMING_PDL (default 1): launch the GEMM kernels with programmatic dependent launch on sm_90+, so a GEMM's
    weight prefetch overlaps the end of the kernel before it.  0 turns it off."""
    v = os.environ.get("HUMMING_PDL", "1").strip()
    if v not in ("0", "1"):
        raise DescError(f"HUMMING_PDL must be 0 or 1, got {v!r}")
    return v == "1"


def _spec(fp: FormatParams, choice: KernelChoice, dtype: torch.dtype, arch: str, desc: str = "",
          experts: bool = False):
    from ..jit import KernelSpec

    name, src = kernel_source(fp, choice, dtype, experts)
    return KernelSpec(name=name, source=src, arch=arch, config={"format": repr(fp), "choice": choice.short(),
                                                                 "dtype": str(dtype), "desc": desc,
                                                                 **({"experts": True} if experts else {})})


def layer_kernel_specs(desc_str: str, n: int, k: int, arch: str, dtype: torch.dtype = torch.bfloat16,
                       prefill_m: Optional[int] = None):
    """Every kernel one layer of this description may launch: one GEMM per distinct M-bucket choice below the
    prefill threshold, plus the weight-expansion kernel of the prefill path."""
    from .dequant_weight import dequant_spec

    desc = WeightDesc.parse(desc_str)
    fp = format_params(desc)
    prefill_m = prefill_m if prefill_m is not None else int(os.environ.get("HUMMING_PREFILL_M",
                                                                           default_prefill_m(arch, fp.bits)))
    specs, seen, lo = [], set(), 1
    for b in M_BUCKETS:
        if lo >= prefill_m:
            break
        lo = b + 1
        c = format_choice(arch, b, fp, n, k)
        # (+ what _plan may launch: the alternatives whose stages fit shared memory, as GemmLayer._alternatives)
        for c in [c] + [alt for _, alt in format_alternatives(c, arch, fp, dtype, n, k)]:
            if c in seen:
                continue
            seen.add(c)
            specs.append(_spec(fp, c, dtype, arch, desc_str))
    specs.append(dequant_spec(fp, dtype, arch, desc_str))
    return specs


class OfflinePlanner:
    """The launch plans a GemmLayer of this description and shape would make on a GPU of ``arch`` with ``sms`` SMs,
    computed without one: each kernel a plan asks for is compiled with NVRTC (through the JIT cache) and its
    registers and static shared memory read from the cubin (plan.cubin_resources) -- what the driver reports on the
    device, from the same NVRTC.  ``plan(m)`` is None where M takes the prefill path (expand + cuBLAS)."""

    def __init__(self, desc_str: str, n: int, k: int, arch: str, sms: int = 0,
                 dtype: torch.dtype = torch.bfloat16, cache_dir=None):
        from .plan import cubin_resources

        self._cubin_resources = cubin_resources
        self._cache_dir = cache_dir
        self.desc = WeightDesc.parse(desc_str)
        self.fp = format_params(self.desc)
        self.n, self.k, self.arch, self.dtype = n, k, arch, dtype
        self.n16, self.k64 = -(-n // 16) * 16, -(-k // 64) * 64
        self.info = arch_info(arch, sms)
        self.prefill_m = int(os.environ.get("HUMMING_PREFILL_M", default_prefill_m(arch, self.fp.bits)))
        self._fits: Dict[Tuple[int, str], object] = {}

    def choice(self, bucket: int) -> KernelChoice:
        return format_choice(self.arch, bucket, self.fp, self.n, self.k, self.info.sms)

    def fit(self, bucket: int, tag: str = ""):
        key = (bucket, tag)
        if key not in self._fits:
            from ..jit import compile_kernel

            base = self.choice(bucket)
            choice = dict(format_alternatives(base, self.arch, self.fp, self.dtype, self.n, self.k,
                                              self.info.sms))[tag] if tag else base
            art = compile_kernel(_spec(self.fp, choice, self.dtype, self.arch, str(self.desc)),
                                 cache_dir=self._cache_dir)
            regs, static_smem = self._cubin_resources(art.cubin, art.name)
            self._fits[key] = kernel_fit(choice, stage_smem(choice, self.fp), regs, static_smem, self.info)
        return self._fits[key]

    def plan(self, m: int):
        if m >= self.prefill_m:
            return None
        bucket = m_bucket(m)
        alts = tuple(tag for tag, _ in format_alternatives(self.choice(bucket), self.arch, self.fp, self.dtype, self.n,
                                                           self.k, self.info.sms))
        return plan_launches(m, self.n16, self.k64, self.fp.bits, self.fp.group, self.fp.zero_mode, self.info,
                             lambda tag: self.fit(bucket, tag), alts)


# ---------------------------------------------------------------------------------------------------- workspace
# Split-K partial sums: one fp32 buffer per device shared by every layer (calls on a stream run one after another).
# Grown geometrically on demand; superseded buffers stay referenced because captured CUDA graphs may still point at
# them.
# The polled split-K end (plan.FLAG_SPLITK_POLL, gemm_wna16.cuh splitk_poll_end) has its own buffer: every word holds
# POLL_EMPTY between calls (its reducers write it back after reading), so it is filled at allocation and never shared
# with the ticket path's partials, which leave their values behind.
_WORKSPACES: Dict[tuple, List[torch.Tensor]] = {}
POLL_EMPTY = -1   # kPollEmpty, 0xFFFFFFFF, as int32


def _workspace(device: torch.device, numel: int, poll: bool = False) -> torch.Tensor:
    idx = device.index if device.index is not None else (torch.cuda.current_device() if device.type == "cuda" else -1)
    bufs = _WORKSPACES.setdefault((device.type, idx, poll), [])
    if not bufs or bufs[-1].numel() < numel:
        size = max(numel, 2 * bufs[-1].numel() if bufs else 1 << 20)
        if poll:
            bufs.append(torch.full((size,), POLL_EMPTY, dtype=torch.int32, device=device).view(torch.float32))
        else:
            bufs.append(torch.empty(size, dtype=torch.float32, device=device))
    return bufs[-1]


# ---------------------------------------------------------------------------------------------------- the layer
class _Bucket:
    """One compiled kernel of the layer: its choice, the loaded function, its launcher and its plan.KernelFit
    (shared memory it is set up for, registers, resident blocks per SM)."""
    __slots__ = ("choice", "fn", "launcher", "fit")


class GemmLayer:
    """A linear layer's weights in kernel layout on one GPU, plus its compiled kernels per M bucket."""

    def __init__(self, qw: QuantizedWeight, act: ActDesc, out_dtype: torch.dtype,
                 choices: Optional[Dict[int, KernelChoice]] = None):
        self._forced = dict(choices or {})   # M bucket -> KernelChoice (tuning / tests); heuristics otherwise
        if act is not None and act.quantized:
            raise DescError(f"layer {qw.name!r} ({qw.desc}): GemmLayer computes with bf16 / fp16 activations; "
                            f"quantized activations ({act}) run through act_quant.QuantActGemm (prepare_linear)")
        reason = unsupported_reason(qw, act, out_dtype)
        if reason:
            raise DescError(f"layer {qw.name!r} ({qw.desc}): {reason}")
        self.name = qw.name
        self.desc = qw.desc
        self.dtype = out_dtype
        self.n, self.k = qw.shape
        self.device = qw.qweight.device
        self.fp = format_params(qw.desc)
        from ..jit import current_arch

        self.arch = current_arch(self.device)
        self.info = arch_info(self.arch, _device_sms(self.device))
        self._buckets: Dict[object, _Bucket] = {}   # M bucket (or (bucket, alternative tag)) -> kernel
        self._plans: Dict[int, tuple] = {}
        self.plan_info: Dict[int, dict] = {}    # M -> what _plan chose (grid, splits, shared memory, registers)
        self._expander = None
        # M at and above which the layer dequantizes to a scratch matrix and calls cuBLAS (prefill); env override
        self.prefill_m = int(os.environ.get("HUMMING_PREFILL_M", default_prefill_m(self.arch, self.fp.bits)))
        self._lock = threading.Lock()
        self._repack(qw)
        self._tickets = torch.zeros(4096, dtype=torch.int32, device=self.device)
        self._old_tickets: List[torch.Tensor] = []
        self.k_perm = qw.k_perm.to(self.device) if qw.k_perm is not None else None

    # -- load-time repack -----------------------------------------------------------------------------------
    def _repack(self, qw: QuantizedWeight):
        d, fp, dt = qw.desc, self.fp, self.dtype
        n, k = self.n, self.k
        self.n16 = -(-n // 16) * 16
        self.k64 = -(-k // 64) * 64
        self.k8 = -(-k // 8) * 8
        codes = unpack_codes(qw.qweight, d.bits, k)
        if fp.family == "int":
            codes, _ = kernel_int_codes(codes, d.dtype)
        self.w = repack_codes(codes, d.bits, float_codes=fp.family == "float")
        del codes
        dev = self.device
        self.gscale = self.gzero = self.chscale = self.tscale = self.bias = None
        self.exp_fold = 0     # k of the exponent fold (float families with group scales): tscale carries 2^k
        s = d.scale
        scale_f = None if s is None else decode_scale(qw.scale, s.dtype)
        if fp.group:
            # -> [num_groups(K64), N16] in the compute dtype, group index major
            if s.granularity == "block":
                bn, bk = s.block
                sg = scale_f.repeat_interleave(bn, dim=0)[:n]                  # [n, K/bk]
            elif s.granularity == "channel":
                sg = scale_f.reshape(n, 1).expand(n, -(-k // fp.group))
            else:
                sg = scale_f
            groups = -(-self.k64 // fp.group)
            full = torch.zeros(groups, self.n16, dtype=torch.float32, device=dev)
            full[: sg.shape[1], :n] = sg.t()
            if not torch.isfinite(full.to(dt).float()).all():
                raise DescError(f"layer {self.name!r} ({d}): scales overflow {dt}")
            if fp.family == "float":
                full, self.exp_fold = _fold_exponent(full, fp, dt)
            self.gscale = full.to(dt).contiguous()
            if fp.zero_mode:
                z = qw.zero.to(torch.float32)
                if s.granularity == "channel":
                    z = z.reshape(n, 1).expand(n, -(-k // fp.group))
                zf = torch.zeros(groups, self.n16, dtype=torch.float32, device=dev)
                if fp.zero_mode == 1:
                    # integer zero: kernel subtracts (raw bias + offset + zero) exactly
                    raw_bias = self._raw_bias()
                    zf[:, :] = raw_bias + fp.offset
                    zf[: z.shape[1], :n] = raw_bias + fp.offset + z.t()
                else:
                    zf[: z.shape[1], :n] = -(z * sg).t()
                self.gzero = zf.to(dt).contiguous()
        ch = None
        tens = None
        if s is not None and s.granularity == "channel" and not fp.group:
            ch = scale_f.reshape(n)
        if s is not None and s.granularity == "tensor":
            tens = scale_f.reshape(1)
        if d.scale2 is not None:
            s2 = qw.scale2.to(torch.float32)
            if d.scale2.granularity == "channel":
                ch = s2.reshape(n) if ch is None else ch * s2.reshape(n)
            else:
                tens = s2.reshape(1) if tens is None else tens * s2.reshape(1)
        if ch is not None:
            c = torch.zeros(self.n16, dtype=torch.float32, device=dev)
            c[:n] = ch
            self.chscale = c
        if self.exp_fold:
            # the 2^k the folded group scales left out (dequant.cuh: the exponent fold), exact in fp32
            tens = torch.full((1,), 2.0 ** self.exp_fold, device=dev) * (1 if tens is None else tens.to(dev))
        if tens is not None:
            self.tscale = tens.to(torch.float32).reshape(1).contiguous()
        if qw.bias is not None:
            self.bias = qw.bias.to(dev, dt).contiguous()

    def clone(self, choices: Optional[Dict[int, KernelChoice]] = None, share_kernels: bool = True) -> "GemmLayer":
        """A copy with its own weight memory (benchmarks stream distinct copies); kernels shared unless the choices
        differ."""
        import copy

        c = copy.copy(self)
        for attr in ("w", "gscale", "gzero", "chscale", "tscale", "bias"):
            t = getattr(self, attr)
            setattr(c, attr, None if t is None else t.clone())
        c._tickets = torch.zeros_like(self._tickets)
        c._old_tickets = []
        c._lock = threading.Lock()
        c._plans = {}
        c.plan_info = {}
        c._expander = None
        if choices is not None:
            c._forced = dict(choices)
            c._buckets = {}
            c._plans = {}
        elif not share_kernels:
            c._buckets = {}
        return c

    def _raw_bias(self) -> int:
        """IntFamily::kRawBias (dequant.cuh): the raw pair is kRawBias + code."""
        mant = _MANT[self.dtype]
        if self.fp.family != "int":
            return 0
        return (128 if self.dtype == torch.bfloat16 else 1024) if self.fp.bits <= mant else -128

    # -- kernels ----------------------------------------------------------------------------------------------
    def _choice(self, bucket: int) -> KernelChoice:
        if bucket in self._forced:
            c = self._forced[bucket]
            why = c.unsupported_reason(self.arch, self.k, self.fp.group)
            if not why and c.x16 and not x16_covers(self.fp, self.dtype):
                why = (f"x16 choices stage bf16 activations as fp16 for 4-bit integer codes; this layer has "
                       f"{str(self.dtype).replace('torch.', '')} activations and {self.fp.family}{self.fp.bits} codes "
                       "(use the choice without _x16)")
            smem = self._stage_smem(c)
            if not why and not c.direct and smem > self.info.smem_per_block:
                why = (f"its stages take {smem} bytes of shared memory for this format, the device allows "
                       f"{self.info.smem_per_block} per block (fewer stages, or a smaller tile)")
            if why:
                raise DescError(f"layer {self.name!r} ({self.desc}): forced kernel choice {c.short()} for M bucket "
                                f"{bucket}: {why}")
            return c
        return format_choice(self.arch, bucket, self.fp, self.n, self.k, self.info.sms)

    def _kernel_buckets(self):
        """M buckets served by the GEMM kernel (the rest take the prefill path; forced buckets always take the kernel)."""
        lo = 1
        out = []
        for b in M_BUCKETS:
            if lo < self.prefill_m or b in self._forced:
                out.append(b)
            lo = b + 1
        return out

    def specs(self) -> List:
        out, seen = [], set()
        for b in self._kernel_buckets():
            base = self._choice(b)
            for c in [base] + [alt for _, alt in self._alternatives(base)]:   # (+ what a plan may launch instead)
                if c not in seen:
                    seen.add(c)
                    out.append(_spec(self.fp, c, self.dtype, self.arch, str(self.desc)))
        return out

    def all_specs(self) -> List:
        """Every kernel this layer may launch: each M bucket's choice, the alternatives its plans may launch instead,
        and the prefill path's expansion kernel -- what warmup() and compile_in_background() compile."""
        from .dequant_weight import dequant_spec

        return self.specs() + [dequant_spec(self.fp, self.dtype, self.arch, str(self.desc))]

    def compile_in_background(self):
        """Start compiling all_specs() on the background compile thread (jit.background), without loading them: the
        calls that need them later find them cached.  Returns the Future, or None (off, strict mode, or nothing new to
        compile)."""
        from ..jit.background import compile_in_background

        return compile_in_background(self.all_specs())

    def warmup(self):
        """Compile (in parallel) and load the kernels of every M bucket."""
        from ..jit import compile_many

        compile_many(self.all_specs())
        for b in self._kernel_buckets():
            self._bucket(b)
            for tag, _ in self._alternatives(self._choice(b)):
                self._bucket(b, alt=tag)
        self._expander_fn()

    def _alternatives(self, choice: KernelChoice) -> List[Tuple[str, KernelChoice]]:
        """What the plan may launch instead of a bucket's choice (heuristics.plan_alternatives: the wide-rows sibling,
        the stream-K twin) -- none where the bucket's choice was forced (tests, tuning: they time exactly what they
        name), and only those that fit shared memory for this layer's format."""
        if choice in self._forced.values():
            return []
        return format_alternatives(choice, self.arch, self.fp, self.dtype, self.n, self.k, self.info.sms)

    def _stage_smem(self, choice: KernelChoice) -> int:
        """Dynamic shared memory of a choice for this layer's format (KernelChoice.smem_bytes)."""
        return stage_smem(choice, self.fp)

    def _bucket(self, bucket: int, alt: str = "") -> _Bucket:
        key = (bucket, alt) if alt else bucket
        bk = self._buckets.get(key)
        if bk is not None:
            return bk
        with self._lock:
            bk = self._buckets.get(key)
            if bk is not None:
                return bk
            from ..jit import Launcher, compile_kernel, load_kernel

            choice = dict(self._alternatives(self._choice(bucket)))[alt] if alt else self._choice(bucket)
            art = compile_kernel(_spec(self.fp, choice, self.dtype, self.arch, str(self.desc)))
            fn = load_kernel(art, self.device)
            fit = kernel_fit(choice, self._stage_smem(choice), fn.num_regs, fn.static_smem, self.info)
            fn.set_max_smem(fit.smem)   # opt in beyond 48 KB (static smem and the 1 KB reserve count too)
            bk = _Bucket()
            bk.choice = choice
            bk.fn = fn
            bk.fit = fit
            # programmatic dependent launch: the cp.async and direct kernels prefetch their weights before
            # griddepcontrol.wait (sm_90+; the bulk kernel does not wait, so it never gets the attribute)
            bk.launcher = Launcher(fn, _arg_types(choice), pdl=pdl_enabled() and not choice.bulk)
            self._buckets[key] = bk
            return bk

    # -- prefill: dequantize to a scratch bf16/fp16 matrix, then cuBLAS ---------------------------------------
    def _expander_fn(self):
        if self._expander is None:
            from .dequant_weight import WeightExpander

            self._expander = WeightExpander(self)
        return self._expander

    def uses_prefill_path(self, m: int) -> bool:
        """Whether M tokens run expand + cuBLAS: from ``prefill_m`` tokens on, unless the caller forced a kernel choice
        for M's bucket (tuning, tests) -- a forced choice always runs, at any M."""
        return m >= self.prefill_m and m_bucket(m) not in self._forced

    def _plan(self, m: int):
        """Per-M launch plan, cached: what plan.plan_launches decides (kernel, grid, split-K, split plans), bound
        once to this layer's tensors -- the eager path does no heuristics per call."""
        plan = self._plans.get(m)
        if plan is None:
            bucket = m_bucket(m)
            # (the bucket's own kernel is compiled only if the plan asks for its fit: at 1-2 tokens a plan may launch
            # only an alternative)
            alts = tuple(tag for tag, _ in self._alternatives(self._choice(bucket)))
            try:
                lp = plan_launches(m, self.n16, self.k64, self.fp.bits, self.fp.group, self.fp.zero_mode, self.info,
                                   lambda tag: self._bucket(bucket, alt=tag).fit, alts)
            except PlanError as e:
                raise DescError(f"layer {self.name!r} ({self.desc}), M={m}: {e}") from None
            if lp.ticket_tiles > self._tickets.numel():
                # grown counters: earlier plans (and captured graphs) keep pointing at the old ones, which stay alive
                self._old_tickets.append(self._tickets)
                self._tickets = torch.zeros(lp.ticket_tiles, dtype=torch.int32, device=self.device)
            # the layer's own tensors never move: their addresses are resolved once here, not per call
            ptr = lambda t: 0 if t is None else t.data_ptr()          # noqa: E731
            consts = (ptr(self.w), ptr(self.gscale), ptr(self.gzero), ptr(self.chscale), ptr(self.tscale),
                      ptr(self.bias))
            bounds, maps = [], []
            for pl in lp.launches:
                bk = self._bucket(bucket, alt=pl.tag)
                ws = _workspace(self.device, pl.ws_numel, poll=bool(pl.flags & FLAG_SPLITK_POLL)) \
                    if pl.ws_numel else None
                tail_args = (ptr(ws), ptr(self._tickets) if ws is not None else 0)
                # everything but x and y is fixed for this M: bind it once, a call then writes two addresses + the
                # stream
                values = (0,) + consts + (0,) + tail_args + (m, self.n, self.k8, self.n16, self.k64,
                                                             pl.atoms_per_split, pl.flags)
                if pl.choice.tma_x:
                    # the tensor map of x (by value after `flags`), rewritten in the bound launch's cell when x moves
                    from ..jit.tma import MAP_BYTES

                    values += (bytes(MAP_BYTES),)
                bound = bk.launcher.bind(pl.grid, pl.choice.threads, pl.smem, values, varying=(0, 7))
                bounds.append(bound)
                if pl.choice.tma_x:
                    from ..jit.tma import TileMapEncoder, XMapSlot

                    maps.append(XMapSlot(bound.arg_cells[len(_ARG_TYPES)], TileMapEncoder(self.dtype, pl.choice.bt),
                                         m, self.k8))
            if len(bounds) == 1:
                launch, x_map = bounds[0], (maps[0] if maps else None)
            else:
                launch, x_map = _Launches(bounds), (_MapSlots(maps) if maps else None)
            # (launch, workspace of the last launch and tickets -- held with the plan --, TMA map slot or None)
            plan = (launch, ws, self._tickets, x_map)
            self.plan_info[m] = dict(lp.info)
            if os.environ.get("HUMMING_PRINT_CHOICE") == "1":
                print(f"[humming] layer {self.name!r} M={m}: {describe(lp)}")
            self._plans[m] = plan
        return plan

    def __call__(self, x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
        k = self.k
        if x.shape[-1] != k:
            raise DescError(f"layer {self.name!r} ({self.desc}): input has K={x.shape[-1]}, weight expects K={k}")
        if x.device != self.device:
            raise DescError(f"layer {self.name!r}: input on {x.device}, weights on {self.device}")
        flat = x.dim() == 2                      # the common case: no reshapes on the hot path
        lead = None if flat else x.shape[:-1]
        x2 = x if flat else x.reshape(-1, k)
        if x2.dtype != self.dtype:
            if not x2.is_floating_point():
                raise DescError(f"layer {self.name!r} ({self.desc}): activations must be a floating dtype "
                                f"(bfloat16/float16/float32), got {x2.dtype}")
            x2 = x2.to(self.dtype)
        if self.k_perm is not None:
            x2 = x2.index_select(1, self.k_perm)
        m = x2.shape[0]
        if out is None:
            y = x2.new_empty((m, self.n))          # x2 is in the layer's dtype and on its device here
        else:
            if out.shape != (m, self.n) or out.dtype != self.dtype or not out.is_contiguous():
                raise DescError(f"layer {self.name!r}: out must be a contiguous {self.dtype} [{m}, {self.n}] tensor")
            y = out
        if m == 0:
            return y if flat else y.reshape(*lead, self.n)
        if m >= self.prefill_m and self.uses_prefill_path(m):    # (the method call only from the threshold on)
            # expand the weight band by band into an L2-resident scratch and run cuBLAS on each band
            from .dequant_weight import prefill_matmul      # lazy: dequant_weight imports this module

            prefill_matmul(self._expander_fn(), x2, self.bias, y)
            return y if flat else y.reshape(*lead, self.n)
        if self.k8 != k:
            x2 = torch.nn.functional.pad(x2, (0, self.k8 - k))
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        plan = self._plans.get(m) or self._plan(m)
        xp = x2.data_ptr()
        if xp % 16:
            # every kernel reads x in 16-byte pieces (cp.async, bulk / TMA copies, the decode's vector loads), and a
            # misaligned address is a fatal CUDA error: a view at an odd storage offset (rare) is copied first
            x2 = x2.clone()
            xp = x2.data_ptr()
        if plan[3] is not None:
            plan[3].update(xp)       # the kernel's tensor map of x
        plan[0](xp, y.data_ptr())
        return y if flat else y.reshape(*lead, self.n)
