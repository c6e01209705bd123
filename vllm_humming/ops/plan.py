"""The per-M launch plan of a GEMM layer, as a pure function: which compiled kernel(s) run for M tokens, on what grid,
with how many K splits, how much shared memory and workspace, and which ``flags`` bits.

``GemmLayer._plan`` binds what :func:`plan_launches` decides to device pointers; ``vllm-humming plan`` prints the same
decisions on a machine without a GPU, from NVRTC-compiled kernels (:func:`cubin_fit` reads the registers and static
shared memory ptxas gave them).  Nothing here touches CUDA.

A plan reads three things of each kernel it may launch -- its dynamic shared memory and the blocks that fit an SM by
registers and by shared memory -- gathered in a :class:`KernelFit`.  The fits are asked for lazily through a
callable (tag ``""`` = the M bucket's own choice, else a ``heuristics.plan_alternatives`` tag), because a layer
compiles an alternative's kernel only when a plan takes it.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

from ..desc import DescError
from ..tuning.heuristics import (NARROW16_POLLED_CHOICE, ArchInfo, KernelChoice, bulk_whole_tiles,
                                choose_direct_splits, choose_splits, dp_tail_applies, dp_tail_split, env_int,
                                plan_row_waves, plan_swap_tags, narrow16_polled, sibling_head_split,
                                split_grid_on_wave_cliff, splits_of)

# kernel `flags` bits (gemm_wna16.cuh)
FLAG_PDL_EARLY_RELEASE = 1
FLAG_SPLITK_POLL = 2           # the polled split-K end (kFlagSplitkPoll, splitk_poll_end)
POLL_MAX_BT = 128              # kPollMaxBT: its largest token tile
FLAG_REDUCERS_SHIFT = 4        # bits 4..7: blocks sharing a split-K tile's final sum
FLAG_ROW_TILE_SHIFT = 8        # bits 8..: the launch's first weight-row tile (kFlagRowTileShift)
MAX_REDUCERS = 4               # kMaxReducers


class PlanError(ValueError):
    """No launch plan exists for this (layer, M) -- e.g. a forced direct choice whose shared memory cannot hold even its
    smallest K range.  The layer re-raises it naming itself and its description."""


@dataclass(frozen=True)
class KernelFit:
    """What a plan needs of one compiled kernel: its choice, the dynamic shared memory it is set up to take (the
    stages' bytes; for the direct kernel, whose shared memory is sized per launch, all a block may take beside its
    static shared memory), its registers, and the resident blocks per SM by registers alone and by both."""
    choice: KernelChoice
    smem: int
    regs: int
    blocks_by_regs: int
    blocks_per_sm: int


def kernel_fit(choice: KernelChoice, stage_smem: int, regs: int, static_smem: int, info: ArchInfo) -> KernelFit:
    """The KernelFit of a compiled kernel from ptxas's registers and static shared memory (the driver's
    cuFuncGetAttribute values on a GPU, :func:`cubin_fit` without one).  ``stage_smem``: its stages' dynamic shared
    memory for the layer's format (gemm.stage_smem)."""
    smem = info.smem_per_block - static_smem if choice.direct else stage_smem
    r = max(32, regs)
    by_regs = max(1, min(65536 // (r * choice.threads), 2048 // choice.threads, 32))
    by_smem = info.smem_per_sm // max(1, smem + 1024)
    return KernelFit(choice, smem, regs, by_regs, max(1, min(by_regs, by_smem)))


# ------------------------------------------------------------------------------------------ cubin resources (CPU)
_EIATTR_REGCOUNT = 0x2F     # .nv.info attribute: (symbol index, registers) of a kernel
_EIF_SVAL = 4               # attribute format: 16-bit size + payload
SYSTEM_SMEM_RESERVE = 1024  # per block, sm_80+ (cudaDevAttrReservedSharedMemoryPerBlock)


def cubin_resources(cubin: bytes, kernel: str) -> Tuple[int, int]:
    """(registers, static shared memory bytes) of ``kernel`` in an sm_XX cubin (ELF64): the register count is the
    EIATTR_REGCOUNT entry of ``.nv.info`` for the kernel's symbol, the static shared memory the size of its
    ``.nv.shared.<kernel>`` section (0 without one) -- what cuFuncGetAttribute reports on a GPU, read without one.
    From sm_90 on (cubins with a ``.nv.shared.reserved.0`` section) that section also holds the block's 1 KB system
    reserve, which the driver does not count: a 1200-byte ``__shared__`` array makes a 2224-byte section there (and
    ptxas -v says 1200), a GEMM kernel's 1040-byte section is the 16 bytes the driver reported on the H200
    (results/h200-2026-12-02-s18/c_gpu_bt256.log)."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not an ELF64 cubin")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]

    def cstr(table_off: int, off: int) -> str:
        end = cubin.index(b"\0", table_off + off)
        return cubin[table_off + off:end].decode()

    names = [cstr(secs[shstrndx][4], s[0]) for s in secs]
    reserve = SYSTEM_SMEM_RESERVE if ".nv.shared.reserved.0" in names else 0
    static_smem = 0
    sym_index = None
    info_sec = None
    for name, s in zip(names, secs):
        if name == f".nv.shared.{kernel}":
            static_smem = max(0, s[5] - reserve)
        elif name == ".nv.info":
            info_sec = s
        elif s[1] == 2:   # SHT_SYMTAB: find the kernel's symbol index
            strtab = secs[s[6]][4]
            for i in range(s[5] // 24):
                if cstr(strtab, struct.unpack_from("<I", cubin, s[4] + 24 * i)[0]) == kernel:
                    sym_index = i
    if sym_index is None or info_sec is None:
        raise ValueError(f"kernel {kernel!r} not found in the cubin")
    p, end = info_sec[4], info_sec[4] + info_sec[5]
    while p < end:
        fmt, attr = cubin[p], cubin[p + 1]
        if fmt == _EIF_SVAL:
            size = struct.unpack_from("<H", cubin, p + 2)[0]
            if attr == _EIATTR_REGCOUNT:
                sym, regs = struct.unpack_from("<II", cubin, p + 4)
                if sym == sym_index:
                    return regs, static_smem
            p += 4 + size
        else:
            p += 4 if fmt in (1, 2, 3) else 4
    raise ValueError(f"no register count for kernel {kernel!r} in the cubin")


# ------------------------------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class PlannedLaunch:
    """One kernel launch of a plan.  ``tag``: the kernel (``""`` = the bucket's choice, else its alternative's tag);
    ``atoms_per_split``: the kernel's K range argument; ``ws_numel``: fp32 split-K workspace elements (0 = none, and
    then no ticket counters either)."""
    tag: str
    choice: KernelChoice
    grid: Tuple[int, int, int]
    atoms_per_split: int
    smem: int
    ws_numel: int
    row_tile0: int
    flags: int
    reducers: int


@dataclass(frozen=True)
class LaunchPlan:
    """The launches of one M, in order (two for a split plan: whole waves, then a K-split tail), the ticket counters
    they need (one per tile of the bucket's grid; 0 = none), and what ``GemmLayer.plan_info`` reports."""
    launches: Tuple[PlannedLaunch, ...]
    ticket_tiles: int
    info: Dict[str, object] = field(default_factory=dict)


def mps_slots(slots: int) -> int:
    """The resident block slots this process may count on: under MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE below
    100 it may hold only that share of the SMs (an unreadable value: none -- the split-K ends that wait for other
    blocks then stay off)."""
    mps = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "").strip()
    try:
        share = min(100.0, max(0.0, float(mps))) if mps else 100.0
    except ValueError:
        share = 0.0
    return int(slots * share / 100.0)


def splitk_reducers(choice: KernelChoice, tiles: int, splits: int, slots: int) -> int:
    """How many blocks of a split-K tile share its final sum (splitk_epilogue): the last block to arrive alone reads
    every split's partial, and at M = 16 / 64 that read was most of the split-K end (NOTES.md, session 13).  With
    R > 1, R - 1 blocks per tile wait for the tile's last arrival, so R > 1 only where the grid is one wave and the
    waiting blocks take at most half the resident slots (every block of the tile is then resident, whatever else
    holds a slot).  8-token tiles keep one (their partials are a few hundred bytes).  HUMMING_SPLITK_REDUCERS caps
    it (1 = the last block alone).  Under MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE below 100 the process may hold
    only that share of the SMs, so the slots are scaled by it."""
    cap = env_int("HUMMING_SPLITK_REDUCERS", MAX_REDUCERS, 1, MAX_REDUCERS)
    if splits < 2 or choice.cluster or choice.bulk or choice.stream_k or choice.bt <= 8:
        return 1
    slots = mps_slots(slots)
    r = min(cap, splits)
    if tiles * splits > slots:
        return 1
    while r > 1 and (r - 1) * tiles > slots // 2:
        r -= 1
    return r


def splitk_poll_applies(choice: KernelChoice, tiles: int, splits: int, slots: int, bits: int = 0,
                        k: int = 0) -> bool:
    """Whether a split-K launch ends with the polled sum (gemm_wna16.cuh, splitk_poll_end: the partials are their own
    ready flags -- no fence, no ticket; the static reducers poll them) instead of the ticket path.  Its reducers wait
    for splits that may not have started, so the whole grid must be resident at once: tiles x splits within the
    resident slots (mps_slots, as splitk_reducers counts them).  The wgmma kernels only (the end reads their staged
    fp32 tile), not the bulk / stream-K / cluster kernels, token tiles of 16-128 (POLL_MAX_BT).  Off by default
    elsewhere: on an H100 (results/2026-12-07-s54/b) the bench's plans ran 6144x4096 M=16 10.58 vs 9.80 us with it,
    M=64 14.57 vs 14.86, 4096x14336 M=64 22.40 vs 21.91 -- the fence and ticket it removes are not what the split-K
    end costs.  $HUMMING_SPLITK_POLL = 1 turns it on where it applies (experiments).  By default it is on
    for the 16-token 128-row direct wgmma tile on the layers heuristics.narrow16_polled(bits, k) gives that tile
    (heuristics.NARROW16_POLLED_CHOICE: int4, K <= 4096 -- the same tile serves int8 narrow layers on the ticket
    path), off otherwise."""
    default = int(choice == NARROW16_POLLED_CHOICE and narrow16_polled(bits, k))
    if not env_int("HUMMING_SPLITK_POLL", default, 0, 1):
        return False
    if splits < 2 or not choice.wgmma or choice.cluster or choice.bulk or choice.stream_k or \
            not 8 < choice.bt <= POLL_MAX_BT:
        return False
    return tiles * splits <= mps_slots(slots)


def pdl_early_release(blocks: int, slots: int, prefetch: bool = False) -> bool:
    """Whether a cp.async GEMM grid releases the next PDL launch right after its own griddepcontrol.wait instead of
    after its main loop (gemm_wna16.cuh, kFlagPdlEarlyRelease): when the grid fills at least 80 % of the resident
    block slots.  H200, int4 M=1 (results/h200-2026-11-30-s7/): 28672x4096 (896 blocks / 924 slots) 25.4 -> 22.9 us,
    6144x4096 (768 / 924) 9.6 -> 8.8 us, but 4096x14336 (512 / 924) 14.2 -> 16.8 us -- the early blocks of the next
    grid wait on the free slots beside this grid's warps.  ``prefetch``: a grid of KernelChoice.pf blocks always
    releases early -- the next launch's blocks prefetch their weights beside it, the point of that choice.
    $HUMMING_PDL_EARLY_RELEASE = 0 / 1 overrides (experiments)."""
    v = os.environ.get("HUMMING_PDL_EARLY_RELEASE", "auto").strip()
    if v not in ("auto", "0", "1"):
        raise DescError(f"HUMMING_PDL_EARLY_RELEASE must be auto, 0 or 1, got {v!r}")
    if v != "auto":
        return v == "1"
    return prefetch or 5 * blocks >= 4 * slots


def plan_launches(m: int, n16: int, k64: int, bits: int, group: int, zero_mode: int, info: ArchInfo,
                  fit: Callable[[str], KernelFit], alternatives: Tuple[str, ...] = (),
                  polled_ok: bool = True) -> LaunchPlan:
    """The launch plan for M tokens of an N16 x K64 (padded) layer: its M bucket's own kernel through ``fit("")``, the
    alternative kernels named in ``alternatives`` (heuristics.plan_alternatives tags that fit the format) through
    ``fit(tag)``.  ``fit`` is called only for kernels the plan may launch or must compare (a layer compiles what it
    asks for).  ``polled_ok``: the caller gives FLAG_SPLITK_POLL launches their own kept-empty workspace (the dense
    layer does; the MoE layer keeps the ticket path).  Deterministic: the same inputs (and HUMMING_* experiment
    variables) give the same plan."""
    k_atoms = k64 // 64
    alts = set(alternatives)
    # the 1-2-token kernels that replace the bucket's own whatever its grid would be: the shared-memory prefetch grid
    # (heuristics.smem_prefetch_decode_choice, with this token count's budget; its x16 twin where the layer allows
    # it), else bf16 activations staged as fp16 for the one-shift int4 decode at 1-2 tokens (1-8 on layers deeper
    # than 4096: heuristics.x16_sibling)
    # (and at one token the 224-row tile's ring twin on wide layers, the 224-row tile with K splits on mid-size ones:
    # heuristics.one_token_tiles; the order: heuristics.plan_swap_tags)
    swap = next((t for t in plan_swap_tags(m, k64) if t in alts), "")
    bk, tag = None, swap
    if not swap or "wide_rows" in alts:
        # the bucket's own kernel: launched, or compared with its 192-row sibling.  Where a swap replaces it and no
        # sibling is in play it is never asked for, so never compiled (a cold layer's first one-token call compiles
        # one kernel, not two)
        bk = fit("")
        if "wide_rows" in alts:
            # the 192-row sibling of a 128-row split-K tile where its waves cost less (heuristics.wide_rows_sibling)
            # and it needs no more K splits than the base tile: a split's partials cost more than the model counts
            # (6144x4096 M=512, int4: the base's one split 47.3 us vs the sibling's two 49.9,
            # results/h200-2026-12-04-s30/a/sweep_m512_narrow.txt)
            def row_waves(f: KernelFit):
                sp, per_ = choose_splits(f.choice, n16, k64, m, info, f.blocks_per_sm, bits)
                blocks = -(-m // f.choice.bt) * -(-n16 // f.choice.block_n) * sp
                return plan_row_waves(blocks, info.sms * f.blocks_per_sm, f.choice.block_n, per_), sp
            wide = fit("wide_rows")
            (cost_w, splits_w), (cost_b, splits_b) = row_waves(wide), row_waves(bk)
            if cost_w < cost_b and splits_w <= splits_b:
                bk, tag, alts, swap = wide, "wide_rows", set(), ""
        if "stream_k_twin" in alts and not swap:
            # a 256-token split-K grid whose last wave would leave over a fifth of the slots idle runs as its
            # stream-K twin (heuristics.wave_cliff_twin)
            c = bk.choice
            splits, _ = choose_splits(c, n16, k64, m, info, bk.blocks_per_sm, bits)
            if split_grid_on_wave_cliff(-(-m // c.bt) * -(-n16 // c.block_n) * splits, info.sms * bk.blocks_per_sm):
                bk, tag = fit("stream_k_twin"), "stream_k_twin"
    if swap:
        bk = fit(swap)
    c = bk.choice
    m_tiles = -(-m // c.bt)
    n_tiles = -(-n16 // c.block_n)
    smem = bk.smem
    slots = info.sms * bk.blocks_per_sm
    dp_tail = None
    whole_tiles = False
    head, head_tag = bk, tag     # the kernel of a split plan's head launch (the sibling's, or the bucket's own)
    if c.bulk or c.stream_k:
        # persistent stream-K: one block per resident slot (at most one per stage of work); every split tile's
        # contributors park fp32 partials in two workspace slots per block
        units = m_tiles * n_tiles * -(-k64 // c.block_k)
        grid = min(units, info.sms * bk.blocks_per_sm)
        whole_tiles = bulk_whole_tiles(c, m_tiles * n_tiles, info.sms)
        if whole_tiles:
            grid = m_tiles * n_tiles   # one block per tile: each owns one whole tile (heuristics.WIDE_BULK_64)
        ws_numel = grid * 2 * c.bt * c.block_n
        splits, per = grid, 0
        launch_grid = (grid, 1, 1)
        ws_tickets = True
    else:
        if c.direct:
            # the direct kernel's shared memory depends on the launch (range, stored rows): plan with the
            # register-limited residency, then with what the launch's shared memory allows
            bps = bk.blocks_by_regs
            zero = zero_mode != 0
            for _ in range(2):
                try:
                    splits, per = choose_direct_splits(c, n16, k64, m, info, bps, group, zero, smem_limit=bk.smem,
                                                       bits=bits)
                except ValueError as e:
                    raise PlanError(str(e)) from None
                smem = c.direct_smem_bytes(per, min(m, c.bt), group, zero, bits)
                by_smem = max(1, info.smem_per_sm // (smem + 1024))
                if by_smem >= bps:
                    break
                bps = by_smem
            # HUMMING_DEBUG_MIN_SMEM=B (experiments): launch with at least B bytes of dynamic shared memory, i.e.
            # cap the blocks per SM (e.g. one block per SM for a cluster launch)
            pad = env_int("HUMMING_DEBUG_MIN_SMEM", 0, 0, bk.smem)
            if pad > smem:
                smem = pad
                bps = max(1, min(bps, info.smem_per_sm // (smem + 1024)))
            slots = info.sms * bps
        else:
            splits, per = choose_splits(c, n16, k64, m, info, bk.blocks_per_sm, bits)
            if splits == 1 and dp_tail_applies(c):
                # whole waves of tiles, then the last row tiles split along K (heuristics.dp_tail_split)
                dp_tail = dp_tail_split(m_tiles, n_tiles, slots, k_atoms, c.atoms_k)
                if dp_tail is None and "wide_rows" in alts:
                    # or whole waves of the 192-row sibling's tiles before the split tail
                    # (heuristics.sibling_head_split)
                    wide = fit("wide_rows")
                    if dp_tail_applies(wide.choice):
                        sh = sibling_head_split(m_tiles, n16, c.block_n, wide.choice.block_n, slots,
                                                info.sms * wide.blocks_per_sm, k_atoms, c.atoms_k)
                        if sh is not None:
                            head, head_tag, dp_tail = wide, "wide_rows", sh
        launch_grid = (m_tiles, n_tiles, splits)
        # (a cluster launch sums its splits in distributed shared memory: no workspace, no tickets)
        need_tickets = splits > 1 and not c.cluster
        ws_tickets = need_tickets or dp_tail is not None
        # the split-K workspace holds the launch's own columns (splitk_epilogue): row tiles x block_n
        ws_numel = splits * m_tiles * c.bt * n_tiles * c.block_n if need_tickets else 0

    def launch(tag_: str, f: KernelFit, grid_, per_: int, ws_numel_: int, row_tile0: int = 0) -> PlannedLaunch:
        c_ = f.choice
        flags = 0
        if not c_.bulk and (c_.direct or not c_.wgmma) and not c_.stream_k and \
                pdl_early_release(grid_[0] * grid_[1] * grid_[2], slots, prefetch=c_.pf > 0):
            flags |= FLAG_PDL_EARLY_RELEASE
        reducers = splitk_reducers(c_, grid_[0] * grid_[1], grid_[2], slots)   # 1 unless split-K
        flags |= reducers << FLAG_REDUCERS_SHIFT
        if polled_ok and splitk_poll_applies(c_, grid_[0] * grid_[1], grid_[2], slots, bits, k64):
            flags |= FLAG_SPLITK_POLL
        flags |= row_tile0 << FLAG_ROW_TILE_SHIFT
        return PlannedLaunch(tag_, c_, tuple(grid_), per_, smem if f is bk else f.smem, ws_numel_, row_tile0, flags,
                             reducers)

    ticket_tiles = m_tiles * n_tiles if ws_tickets else 0
    if dp_tail is None:
        first = launch(tag, bk, launch_grid, per, ws_numel)
        launches = (first,)
        extra = {}
        shown, shown_fit = first, bk
    else:
        # head: `head_rows` row tiles of the head's kernel (the bucket's own, or its 192-row sibling), one split;
        # tail: the bucket's kernel over the rest, from row tile `first_row` (in its own tiles), split along K
        head_rows, tail_splits = dp_tail
        first_row = head_rows * head.choice.block_n // c.block_n
        tail_splits, tail_per = splits_of(k_atoms, c.atoms_k, tail_splits)
        tail_rows = n_tiles - first_row
        h = launch(head_tag, head, (m_tiles, head_rows, 1), k_atoms, 0)
        t = launch(tag, bk, (m_tiles, tail_rows, tail_splits), tail_per,
                   tail_splits * m_tiles * c.bt * tail_rows * c.block_n, first_row)
        launches = (h, t)
        extra = {"tail": {"choice": c.short(), "grid": t.grid, "splits": tail_splits, "atoms_per_split": tail_per,
                          "flags": t.flags, "reducers": t.reducers}}
        shown, shown_fit = h, head
    info_ = {"choice": shown.choice.short(), "grid": shown.grid, "splits": splits, "atoms_per_split": per,
             "smem": shown.smem, "regs": shown_fit.regs, "flags": shown.flags, "reducers": shown.reducers, **extra}
    if whole_tiles:
        info_["whole_tiles"] = True
    return LaunchPlan(launches, ticket_tiles, info_)


def describe(plan: LaunchPlan) -> str:
    """One line per plan, as HUMMING_PRINT_CHOICE prints it."""
    first = plan.launches[0]
    c = first.choice
    sched = ("one tile per block" if plan.info.get("whole_tiles") else "stream-K" if c.bulk or c.stream_k
             else f"splits={plan.info['splits']}")
    txt = (f"{c.short()} grid={first.grid} {sched}"
           f"{' pdl-early-release' if first.flags & FLAG_PDL_EARLY_RELEASE else ''}"
           f"{f' reducers={first.reducers}' if first.reducers > 1 else ''}"
           f"{' polled' if first.flags & FLAG_SPLITK_POLL else ''}")
    if len(plan.launches) > 1:
        t = plan.info["tail"]
        txt += f" + tail {t['choice']} grid={t['grid']} splits={t['splits']}"
    return txt

