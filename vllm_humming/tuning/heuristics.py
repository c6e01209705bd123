"""Execution choices for the GEMM kernels: tile shapes, warps, pipeline depth, split-K.  They never mention formats.

``KernelChoice`` is what gets compiled (one instantiation per (format, choice)); the split count is a launch-time
parameter computed per call shape by :func:`choose_splits`.  Choices are deterministic functions of (arch, M bucket,
N, K, bits); set ``HUMMING_PRINT_CHOICE=1`` to print every choice as it is made.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

__all__ = ["KernelChoice", "ArchInfo", "arch_info", "m_bucket", "M_BUCKETS", "choose_kernel", "choose_splits",
           "choose_direct_splits", "direct_unit_atoms", "has_bulk", "PIPELINES", "default_prefill_m", "wave_cliff_twin",
           "wide_rows_sibling", "x16_sibling", "X16_MAX_M", "x16_max_m", "SMEM_PF_MAX_M", "SMEM_PREFETCH_KB_BY_M",
           "smem_pf_tag", "plan_alternatives", "ONE_TOKEN_TILES_MAX_M", "one_token_tiles", "plan_swap_tags",
           "plan_row_waves",
           "split_grid_on_wave_cliff", "WIDE_BULK_64", "wide_bulk_64_enabled", "bulk_whole_tiles",
           "all_choices"]


PIPELINES = ("cp_async", "bulk", "direct")
# The tensor-core instruction: "sync" = mma.sync m16n8k16 (sm_75+), "wgmma" = wgmma.mma_async m64nNk16 with the
# weights from registers and the activations from shared memory (sm_90a only; cp_async pipeline, one atom per stage).
MMAS = ("sync", "wgmma")


def _debug_define(name: str) -> Optional[str]:
    """The value of macro ``name`` in HUMMING_DEBUG_DEFINES ("1" for a bare name; ops/gemm.py debug_defines checks
    the syntax when a kernel is generated), or None when it is not named."""
    for d in os.environ.get("HUMMING_DEBUG_DEFINES", "").split(","):
        key, eq, value = d.partition("=")
        if key.strip() == name:
            return value.strip() if eq else "1"
    return None


def direct_smem_prefetch_bytes() -> int:
    """HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_SMEM_PREFETCH=B (experiment): the direct mma.sync kernel copies up to B
    bytes per block of its warps' first weight atoms to shared memory before griddepcontrol.wait
    (gemm_wna16_direct.cuh, DirectPrefetch); 0 when unset."""
    v = _debug_define("HUMMING_DIRECT_SMEM_PREFETCH")
    return int(v) if v and v.lstrip("-").isdigit() else 0


def direct_smem_ring() -> bool:
    """HUMMING_DEBUG_DEFINES names HUMMING_DIRECT_SMEM_RING (experiment, with HUMMING_DIRECT_SMEM_PREFETCH): the whole
    weight stream of the direct mma.sync kernel goes through a warp-private shared-memory ring of the budget's depth."""
    return _debug_define("HUMMING_DIRECT_SMEM_RING") is not None


def direct_unit_atoms(group: int) -> int:
    """Atom columns per scale window of the direct kernel (DirectPlan::kUnitAtoms in gemm_wna16_direct.cuh): a group
    of 128 / 256 columns spans 2 / 4 atoms; a K split holds whole units."""
    return group // 64 if group > 64 else 1


@dataclass(frozen=True)
class KernelChoice:
    bt: int          # tokens per block (8, 16, 32, 64, 128)
    warps_n: int     # warps along the weight rows
    tiles_m: int     # m16 tiles per warp
    warps_k: int     # warps splitting each stage's K columns (reduced in shared memory)
    atoms_k: int     # 64-column atoms per pipeline stage
    stages: int      # pipeline depth
    # "cp_async": every thread copies (gemm_wna16.cuh, sm_75+), split-K grid.  "bulk": one producer warp issues bulk
    # copies tracked by mbarriers, persistent stream-K grid (gemm_wna16_sm90.cuh, sm_90+; needs K % block_k == 0).
    # "direct": weights global -> registers with a `stages`-deep register ring per warp (atoms in flight), x, scales
    # and the per-window sums of x staged once per block, no barrier in the main loop; a block covers at most atoms_k
    # atom columns, shared by its warps_k K-warps (gemm_wna16_direct.cuh, decode: bt 8 or 16, mma.sync).
    # (Two more mainloops were measured on the H200 and removed as slower: a warp-level stream-K kernel without shared
    # memory and a cp.async kernel with warp-private rings -- commits 731b21d / 8be6b74, NOTES.md.)
    pipeline: str = "cp_async"
    mma: str = "sync"
    # cp_async only: a persistent grid (one block per resident slot) where block b owns a contiguous range of (tile,
    # stage) units -- stream-K -- instead of a (token tiles, row tiles, K splits) grid (gemm_wna16.cuh,
    # StreamKSchedule).  Short name: "_sk" after the stages.
    stream_k: bool = False
    # direct and cp.async wgmma split-K grids: 0 = the K splits of a tile are summed through a global fp32 workspace
    # and a ticket (the last block to arrive sums them); 2..8 = the grid runs exactly this many splits, launched as
    # thread block clusters of that many blocks along K (sm_90+), summed through distributed shared memory
    # (gemm_wna16.cuh, cluster_splitk_epilogue): no workspace traffic, no global round trips at the end of the GEMM.
    # Short name: "_c<S>" after the stages.
    cluster: int = 0
    # wgmma only: the activation tile of each stage arrives through the TMA unit (a tensor map of x, one box copy
    # per atom issued by one thread, tracked by a per-slot mbarrier: kernels/include/humming/tma.cuh) instead of
    # 16-byte cp.async pieces issued by every math thread (cp_async) or by the producer warpgroup (bulk, which then
    # also takes two atoms per stage).  Short name: "_tma" before the pipeline.
    tma_x: bool = False
    # direct mma.sync only: 4-bit integer codes with bf16 activations run on fp16 MMAs -- each 64..128-column window of
    # each token staged as fp16 with its own power-of-two scale (exact: bf16's 8 significant bits fit fp16's 11), so
    # the decode is the one-shift raw_row16 (dequant.cuh) instead of three shifts per word (gemm_wna16_direct.cuh,
    # DirectPlan::kX16).  The staging costs per token row, the decode saving per weight: it pays at 1-2 tokens, and
    # at 1-8 on layers deeper than 4096 (session 37)
    # (plan_alternatives: the layer's plan launches it from x16_max_m(K) tokens down).  Any other format, or fp16
    # activations (which decode that way anyway), compile the plain kernel.  Short name: "_x16" before the pipeline.
    x16: bool = False
    # direct mma.sync only: KB of each block's shared memory that receive its warps' first weight atoms (whole scale
    # units), copied with cp.async BEFORE griddepcontrol.wait; the main loop reads them from there, then the register
    # ring takes over (gemm_wna16_direct.cuh, DirectPrefetch).  A grid that leaves half of every SM free lets the next
    # PDL launch's blocks sit beside it and stream their weights while it computes.  pf_ring: the whole stream goes
    # through a warp-private shared-memory ring of that size instead (every consumed slot refilled with the atom one
    # ring ahead; no register ring).  Short names "_pf<KB>" / "_pfr<KB>" after the stages.  The direct wgmma kernel
    # takes "_pf<KB>" too (session 42: an even number of positions per warp, DirectWgmmaSmem; planned as one block per
    # SM, choose_direct_splits); its shared-memory ring (session 39) was slower than its register ring and was
    # removed in session 41, so "_pfr" stays mma.sync-only.
    pf: int = 0
    pf_ring: bool = False

    def __post_init__(self):
        if self.mma not in MMAS:
            raise ValueError(f"KernelChoice.mma must be one of {MMAS}, got {self.mma!r}")
        if self.bt not in ((8, 16, 32, 64, 128, 256) if self.wgmma else (8, 16, 32, 64, 128)):
            raise ValueError(f"KernelChoice.bt must be 8, 16, 32, 64 or 128 (256 too with wgmma), got {self.bt}")
        # (staged K-warpgroups, session 56: the cp.async wgmma kernel with (warps_k, atoms_k) (2, 2), (2, 4) or (4, 4),
        # split-K grids with the workspace end -- warpgroup row wk takes atoms wk, wk + warps_k, ... of every stage,
        # Wna16Math::stage)
        kwg_staged = (self.pipeline == "cp_async" and (self.warps_k, self.atoms_k) in ((2, 2), (2, 4), (4, 4))
                      and not self.stream_k and not self.cluster)
        if self.wgmma and ((self.warps_k != 1 and not self.direct and not kwg_staged) or self.warps_n % 4
                           or (self.pipeline == "bulk" and self.atoms_k != 1
                               and not (self.tma_x and self.atoms_k in (2, 4)))
                           or (self.pipeline == "cp_async" and self.atoms_k not in (1, 2) and not kwg_staged)):
            raise ValueError("KernelChoice: wgmma runs with whole warpgroups (warps_n a multiple of 4), warps_k == 1 "
                             "(K-warpgroups: the direct pipeline, or cp_async split-K grids with (warps_k, atoms_k) "
                             "(2, 2), (2, 4) or (4, 4)) and atoms_k == 1 (bulk; 1, 2 or 4 with tma_x) "
                             f"or 1..2 (cp_async); got {self.short()}")
        if self.wgmma and self.direct and self.warps_k > 1 and (self.pf or self.cluster or self.warps_k not in (2, 4)):
            # (the kernel's config carries warps_k as its atoms per stage, which wgmma holds to 1, 2 or 4)
            raise ValueError("KernelChoice: the direct wgmma kernel's K-warpgroups (warps_k 2 or 4) run without the "
                             f"weight prefetch (_pf) and without clusters (_c), got {self.short()}")
        if self.atoms_k % self.warps_k:
            raise ValueError(f"KernelChoice: atoms_k ({self.atoms_k}) must be a multiple of warps_k ({self.warps_k})")
        if self.stages < 2:
            raise ValueError("KernelChoice.stages must be >= 2")
        if self.pipeline not in PIPELINES:
            raise ValueError(f"KernelChoice.pipeline must be one of {PIPELINES}, got {self.pipeline!r}")
        if self.pipeline == "direct" and (self.stream_k or (not self.wgmma and self.bt not in (8, 16))):
            raise ValueError("KernelChoice: the direct pipeline is a split-K decode kernel: bt 8 or 16 under "
                             f"mma.sync (wgmma: any wgmma token tile), got {self.short()}")
        if self.cluster and (self.cluster not in (2, 4, 8) or self.stream_k or
                             not (self.direct or (self.pipeline == "cp_async" and self.wgmma))):
            raise ValueError("KernelChoice.cluster (the K splits of a tile as one thread block cluster) is 2, 4 or 8 "
                             "and applies to split-K grids of the direct pipeline and of the cp.async wgmma kernel, "
                             f"got {self.short()}")
        if self.tma_x and (self.pipeline not in ("cp_async", "bulk") or not self.wgmma or self.cluster):
            raise ValueError("KernelChoice.tma_x (the activation tile through a TMA tensor map) applies to the cp.async "
                             f"and bulk wgmma kernels without clusters, got {self.short()}")
        if self.x16 and not (self.direct and not self.wgmma):
            raise ValueError("KernelChoice.x16 (bf16 activations staged as fp16 for the one-shift int4 decode) applies "
                             f"to the direct mma.sync kernel, got {self.short()}")
        if (self.pf or self.pf_ring) and not (self.direct and 0 < self.pf <= 200 and not (self.wgmma and self.pf_ring)):
            raise ValueError("KernelChoice.pf (weights prefetched to shared memory before the grid wait, _pf<KB>, or "
                             "streamed through a shared-memory ring, _pfr<KB>) applies to the direct kernels, 1..200 KB "
                             "per block; _pfr to the mma.sync one only (the wgmma kernel's ring was removed in session "
                             f"41), got {self.short()}")
        if self.stream_k and self.pipeline != "cp_async":
            raise ValueError("KernelChoice: stream_k is a schedule of the cp_async pipeline (bulk is always stream-K), "
                             f"got pipeline {self.pipeline!r}")

    @property
    def wgmma_step_groups(self) -> bool:
        """wgmma with 128+ accumulators per thread: one MMA group per k16 step over two single-step fragment buffers
        (the kernel's rule: wna16_math.cuh, GemmConfig::kWgStepGroups)."""
        return self.wgmma and self.tiles_m * self.bt >= 256

    @property
    def wgmma(self) -> bool:
        return self.mma == "wgmma"

    @property
    def min_blocks(self) -> int:
        """__launch_bounds__ minimum resident blocks per SM (0: none).  wgmma kernels are latency-bound per stage,
        so they get a register budget that leaves room for two or more blocks: accumulators (tiles_m * bt / 2),
        the double-buffered A fragments (32 * tiles_m; 8 * tiles_m with one MMA group per k16 step, which the
        kernel uses from 128 accumulators up: wna16_math.cuh kWgStepGroups) and ~24 registers of addressing must
        fit.  The generated kernel takes at most the blocks its shared memory lets reside (ops/gemm.py
        register_min_blocks, since session 17)."""
        if self.direct and self.wgmma and self.pf:
            # a prefetching wgmma decode block shares its SM with the next launch's: half the register file (its
            # prefetch loop took 175 registers uncapped, int4 g128 16 tokens; capped at 128 its loops stay free of
            # local memory, a few spills outside them -- session 42, scripts/sass_loop_counts.py)
            return 2
        if not self.wgmma or self.bulk or self.direct:
            # (bulk wgmma: a cap below what ptxas wants makes it serialize the asynchronous MMAs, so none; direct:
            # its register ring is on top of the fragments -- no cap either)
            return 0
        frags = (8 if self.wgmma_step_groups else 32) * self.tiles_m
        need = self.tiles_m * self.bt // 2 + frags + 24
        return max(1, min(4, 65536 // (self.threads * need)))

    @property
    def bulk(self) -> bool:
        return self.pipeline == "bulk"

    @property
    def direct(self) -> bool:
        return self.pipeline == "direct"

    @property
    def threads(self) -> int:
        """Threads per block: the math warps, plus the producer warp of the bulk pipeline (a producer warpgroup
        under wgmma)."""
        return 32 * (self.warps_n * self.warps_k + ((4 if self.wgmma else 1) if self.bulk else 0))

    def runs_shape(self, k: int, group: int = 0) -> bool:
        """Whether this choice can run a layer with K columns and in-loop group size ``group`` (the bulk pipeline
        copies whole stages only; the direct one cuts K into ranges of power-of-two atom counts that must hold whole
        groups or lie inside one)."""
        if self.bulk:
            return k % 64 == 0 and (k // 64) % self.atoms_k == 0
        if self.direct:
            # windows of 16..256 columns, a power of two (gemm_wna16_direct.cuh, DirectPlan)
            if not (group == 0 or (16 <= group <= 256 and (group & (group - 1)) == 0)):
                return False
            # a cluster launch runs exactly `cluster` splits, each a whole number of units per K-warp, within atoms_k
            return not self.cluster or self.cluster_range(k, group) is not None
        return True

    def cluster_range(self, k: int, group: int = 0):
        """Atoms per split of a cluster launch over K columns: the grid always runs ``cluster`` splits (the cluster
        dims are compiled in), each the smallest whole number of units per K-warp that covers K in that many; the
        last splits may come out short or empty (their loads are predicated off and they add zeros).  None where one
        split would exceed atoms_k."""
        k_atoms = -(-k // 64)
        quantum = direct_unit_atoms(group) * self.warps_k
        per = -(-(-(-k_atoms // self.cluster)) // quantum) * quantum
        if per > max(quantum, self.atoms_k // quantum * quantum):
            return None
        return per

    def unsupported_reason(self, arch: str, k: int, group: int = 0) -> str:
        """Why this choice cannot run a layer with K columns and group size ``group`` on ``arch`` ("" if it can):
        what a forced choice (tests, tuning) is checked against before anything is compiled."""
        if self.wgmma and arch != "sm_90a":
            return f"wgmma kernels run on sm_90a (H100/H200) only, the device is {arch}"
        if self.bulk and not _has_bulk(arch):
            return f"the bulk pipeline needs sm_90+, the device is {arch}"
        if self.cluster and not _has_bulk(arch):
            return f"thread block clusters (the _c{self.cluster} choices) need sm_90+, the device is {arch}"
        if not self.runs_shape(k, group):
            return (f"the {self.pipeline} pipeline cannot run K={k} with group size {group} "
                    "(bulk: K a multiple of 64 * atoms_k; direct: groups of 16..256 columns, a power of two)")
        return ""

    @property
    def block_n(self) -> int:
        return 16 * self.tiles_m * self.warps_n

    @property
    def block_k(self) -> int:
        return 64 * self.atoms_k

    def smem_bytes(self, bits: int, groups_per_stage: int, zero: bool, group: int = 0) -> int:
        """Must equal CpAsyncSmem<Cfg>::kBytes (gemm_wna16.cuh) / BulkSmem<Cfg>::kBytes (gemm_wna16_sm90.cuh).  The
        direct pipeline sizes its shared memory per launch (direct_smem_bytes); here: its smallest launch with bt
        rows (one unit per K-warp; ``group``: the in-loop group size), what must fit for the choice to be usable."""
        if self.direct:   # W never touches shared memory
            return self.direct_smem_bytes(direct_unit_atoms(group) * self.warps_k, self.bt, group, zero, bits)
        if self.wgmma:
            # stages on 1 KB boundaries (x tile first: one bt x 64 sub-tile per atom), plus 1 KB to align the dynamic
            # shared-memory base
            w = self.atoms_k * (self.block_n // 16) * 32 * bits * 4
            s = groups_per_stage * self.block_n * 2
            stage = -(-(self.bt * self.block_k * 2 + w + s + (s if zero else 0)) // 1024) * 1024
            if self.bulk:   # + the full / empty mbarriers and the last-arrival flag (BulkSmem)
                return stage * self.stages + 2 * self.stages * 8 + 16 + 1024
            epilogue_tile = self.bt * (self.block_n + 4) * 4     # fp32 output tile staged for the epilogue
            # (tma_x: one mbarrier and one 32-bit release counter per ring slot after the ring)
            # (K-warpgroups: their K sum's scratch overlays the ring too, CpAsyncSmem::kRingOnly)
            ring = max(stage * self.stages, self.reduce_scratch_bytes, epilogue_tile)
            return ring + (12 * self.stages if self.tma_x else 0) + 1024
        w = self.atoms_k * (self.block_n // 16) * 32 * bits * 4
        x = self.bt * (self.block_k + (8 if self.bulk else 0)) * 2   # padded rows, not a swizzle
        s = groups_per_stage * self.block_n * 2
        stage = w + x + s + (s if zero else 0)
        red = self.reduce_scratch_bytes
        if self.bulk:
            return stage * self.stages + red + 2 * self.stages * 8 + 16
        return max(stage * self.stages, red)

    @property
    def reduce_scratch_bytes(self) -> int:
        """Shared memory the K-warps park their fp32 accumulators in for the intra-block K sum: warps_k - 1 copies of
        every math warp's tiles_m x bt / 8 x 4 floats (GemmConfig::kSmemReduce, DirectSmem's off_red region,
        DirectWgmmaSmem::kRedBytes)."""
        return (self.warps_k - 1) * self.warps_n * 32 * self.tiles_m * (self.bt // 8) * 4 * 4

    def prefetch_position_bytes(self, bits: int) -> int:
        """Bytes of one position of the shared-memory weight prefetch: one atom of every tile of every warp of the
        block (DirectPrefetch::kPerPos; the wgmma kernel has warps_k = 1)."""
        return self.warps_n * self.warps_k * self.tiles_m * 32 * bits * 4

    def direct_prefetch_atoms(self, atoms_per_split: int, bits: int, group: int) -> int:
        """Positions of each warp's atom sequence staged in shared memory before the grid wait (KernelChoice.pf, or
        the HUMMING_DIRECT_SMEM_PREFETCH experiment for every direct kernel; gemm_wna16_direct.cuh,
        DirectPrefetch::positions): 0 by default.  The wgmma kernel reserves this many and uses an even number of them
        (DirectWgmmaSmem)."""
        budget = self.pf * 1024 if self.pf else direct_smem_prefetch_bytes()
        ring = self.pf_ring if self.pf else direct_smem_ring()   # DirectPrefetch::kRing
        if not budget:
            return 0
        if self.wgmma:
            if ring:   # (DirectWgmmaSmem's static_assert, said here)
                raise ValueError(f"kernel choice {self.short()}: the direct wgmma kernel has no shared-memory weight ring "
                                 "(removed in session 41); drop HUMMING_DIRECT_SMEM_RING")
            # one-atom positions, no K-warps (DirectPlan::kUnitAtoms = 1 for wgmma)
            return min(atoms_per_split, budget // self.prefetch_position_bytes(bits))
        unit = direct_unit_atoms(group)
        per_pos = self.prefetch_position_bytes(bits)
        depth = budget // per_pos // unit * unit
        if ring:   # the ring's depth
            if depth < unit:   # (the kernel's static_assert, said here with the numbers)
                raise ValueError(f"kernel choice {self.short()}: a shared-memory weight ring of {budget // 1024} KB "
                                 f"holds no {unit}-atom unit per warp ({per_pos * unit} bytes for {bits}-bit codes); "
                                 f"use _pfr{-(-per_pos * unit // 1024)} or more")
            return depth
        seq_max = -(-(-(-atoms_per_split // unit)) // self.warps_k) * unit
        return min(seq_max, depth)

    def direct_smem_bytes(self, atoms_per_split: int, rows: int, group: int, zero: bool, bits: int = 4) -> int:
        """Shared memory of one direct-pipeline launch: ``rows`` stored token rows of an ``atoms_per_split``-atom
        range (must equal DirectSmem<Cfg> in gemm_wna16_direct.cuh): padded x rows, group scales (+ zero terms),
        fp32 window sums and x scales [windows][bt], the K-warps' reduction scratch."""
        cols = 64 * atoms_per_split
        groups = cols // group if group else 0
        windows = -(-cols // (group or 64))
        if self.wgmma:
            # DirectWgmmaSmem: swizzled x tiles of all bt rows, scales, zero terms; the fp32 epilogue tile reuses
            # the region; then (a prefetch budget) the weight prefetch region, 16-byte aligned; + 1 KB to align the base
            tile = self.bt * (self.block_n + 4) * 4
            if self.warps_k > 1:   # K-warpgroups: their reduction scratch after the tile (DirectWgmmaSmem::kOffRed)
                tile = -(-tile // 16) * 16 + self.reduce_scratch_bytes
            used = max(cols * self.bt * 2 + groups * self.block_n * 2 * (2 if zero else 1), tile)
            pf = self.direct_prefetch_atoms(atoms_per_split, bits, group)
            if pf:
                used = -(-used // 16) * 16 + pf * self.prefetch_position_bytes(bits)
            return used + 1024
        red = self.reduce_scratch_bytes
        # window sums and the windows' x scales (fp16 staging of bf16 x), both fp32 [windows][bt]
        used = rows * (cols + 8) * 2 + groups * self.block_n * 2 * (2 if zero else 1) + 2 * windows * self.bt * 4 + red
        pf = self.direct_prefetch_atoms(atoms_per_split, bits, group)
        if pf:   # DirectSmem: the prefetch region after the reduction scratch, 16-byte aligned
            used = -(-used // 16) * 16 + pf * self.prefetch_position_bytes(bits)
        # a cluster launch stages its fp32 partial tile (bt rows of block_n + 4 floats) over the region at the end
        return max(used, self.bt * (self.block_n + 4) * 4) if self.cluster else used

    @classmethod
    def parse(cls, short: str) -> "KernelChoice":
        """Inverse of :meth:`short`: ``bt8_wn4_tm2_wk1_ak2_s8_bulk`` -> KernelChoice(8, 4, 2, 1, 2, 8, "bulk");
        a trailing ``_wgmma`` selects the wgmma instruction, ``_sk`` after the stages the stream-K schedule, ``_tma`` the
        activation tile through a tensor map, ``_x16`` bf16 activations staged as fp16."""
        parts = short.strip().split("_")
        mma = "sync"
        if parts and parts[-1] == "wgmma":
            mma = "wgmma"
            parts = parts[:-1]
        pipeline = parts[-1] if parts and parts[-1] in PIPELINES else "cp_async"
        if pipeline != "cp_async":
            parts = parts[:-1]
        tma_x = bool(parts) and parts[-1] == "tma"
        if tma_x:
            parts = parts[:-1]
        x16 = bool(parts) and parts[-1] == "x16"
        if x16:
            parts = parts[:-1]
        if parts and parts[-1] == "wf":
            raise ValueError(f"kernel choice {short!r}: '_wf' (session 41's windowed wgmma decode with zeros folded "
                             "through the sums of x) measured slower than the default and was removed in session 42")
        pf, pf_ring = 0, False
        if parts and parts[-1].startswith("pf") and parts[-1].lstrip("pfr").isdigit():
            pf_ring = parts[-1].startswith("pfr")
            pf = int(parts[-1].lstrip("pfr"))
            parts = parts[:-1]
        cluster = 0
        if parts and parts[-1].startswith("c") and parts[-1][1:].isdigit():
            cluster = int(parts[-1][1:])
            parts = parts[:-1]
        stream_k = bool(parts) and parts[-1] == "sk"
        if stream_k:
            parts = parts[:-1]
        fields = {}
        for p in parts:
            key = p.rstrip("0123456789")
            if not key or key == p or key in fields:
                raise ValueError(f"not a KernelChoice short name: {short!r} (e.g. bt8_wn4_tm2_wk1_ak2_s8_bulk)")
            fields[key] = int(p[len(key):])
        try:
            return cls(fields["bt"], fields["wn"], fields["tm"], fields["wk"], fields["ak"], fields["s"], pipeline, mma,
                       stream_k, cluster, tma_x, x16, pf, pf_ring)
        except KeyError as e:
            raise ValueError(f"not a KernelChoice short name: {short!r} (missing {e})") from None

    def short(self) -> str:
        base = f"bt{self.bt}_wn{self.warps_n}_tm{self.tiles_m}_wk{self.warps_k}_ak{self.atoms_k}_s{self.stages}"
        return (base + ("_sk" if self.stream_k else "") + (f"_c{self.cluster}" if self.cluster else "")
                + (f"_pf{'r' if self.pf_ring else ''}{self.pf}" if self.pf else "")
                + ("_x16" if self.x16 else "") + ("_tma" if self.tma_x else "")
                + ("" if self.pipeline == "cp_async" else "_" + self.pipeline)
                + ("_wgmma" if self.wgmma else ""))


@dataclass(frozen=True)
class ArchInfo:
    arch: str
    sms: int
    smem_per_block: int     # max dynamic shared memory per block (opt-in)
    smem_per_sm: int


# Facts per compute capability (CUDA programming guide, "Features and Technical Specifications").  The SM count is
# the device's own when a GPU is present; these numbers are the defaults for compile-only planning.
_ARCH_TABLE: Dict[str, Tuple[int, int, int]] = {
    "sm_75": (40, 64 * 1024, 64 * 1024),
    "sm_80": (108, 163 * 1024, 164 * 1024),
    "sm_86": (84, 99 * 1024, 100 * 1024),
    "sm_89": (128, 99 * 1024, 100 * 1024),
    "sm_90": (132, 227 * 1024, 228 * 1024),
    "sm_90a": (132, 227 * 1024, 228 * 1024),
    "sm_100a": (148, 227 * 1024, 228 * 1024),
    "sm_120a": (84, 99 * 1024, 100 * 1024),
}


def arch_info(arch: str, sms: int = 0) -> ArchInfo:
    base = _ARCH_TABLE.get(arch) or _ARCH_TABLE.get(arch.rstrip("a")) or _ARCH_TABLE["sm_80"]
    return ArchInfo(arch, sms or base[0], base[1], base[2])


# (384 / 512: 257-384 tokens keep the 128-token tiles -- a 256-token tile would compute up to twice the rows there --,
# 385-512 take 256-token tiles on narrow layers (session 19: both tiles pad to 512 token rows there), 513+ on every
# layer: session 18)
M_BUCKETS = (8, 16, 32, 64, 128, 256, 384, 512, 1 << 30)
# split-K partial sums of a wgmma call stay under this many bytes (they live in L2, 60 MB on an H200)
WGMMA_PARTIAL_BYTES = 24 << 20
# N from which a layer counts as wide for the large-M choice (choose_kernel)
WIDE_N = 16384


def default_prefill_m(arch: str, bits: int = 8) -> int:
    """M at and above which a layer dequantizes its weight to a scratch matrix and calls cuBLAS instead of running
    the GEMM kernel ($HUMMING_PREFILL_M overrides).  sm_90a has the wgmma kernels, which beat expand + cuBLAS below
    M ~ 1024 on the H200 (session-4 sweeps: M=256 geomean 0.57x vs 0.55x cuBLAS; at M=1024 0.71x vs 0.75x).
    Codes of <= 4 bits up to 2047 tokens since session 18: the 256-token tiles (128 weight rows x 256 tokens, one
    m64n256k16 per k16 step) against expand + cuBLAS, int4, x cuBLAS of the same run (results/h200-2026-12-02-s18/
    c_sweep_bt256.txt vs a_bench_prefill_expand.log), 6144x4096 / 28672x4096 / 4096x14336: M=1024 0.80 (stream-K)
    / 0.95 / 0.86 vs 0.80 / 0.84 / 0.85; M=2048 0.92 / 0.92 / 0.89 vs 0.81 / 0.87 / 0.88; at M=4096 expand + cuBLAS
    stays ahead (0.87 / 0.89 / 0.91 vs 0.95 geomean in session 17).
    Codes wider than 4 bits from 513 tokens since session 26 (1024 before): expand + cuBLAS against every kernel
    tile and the bulk kernel, us, 6144x4096 / 28672x4096 / 4096x14336 (results/h200-2026-12-04-s26/a, c, f):
    int8 channel M=640 64.6 / 297.5 / 139.3 vs the bulk default 71.5 / 307.0 / 146.0 (best tile 61.7 / 317.3 /
    147.0); M=768 69.9 / 335.3 / 159.9 vs 82.2 / 372.1 / 159.3; M=896 79.7 / 384.4 / 195.4 vs 93.7 / 413.3 / 213.2;
    fp8 e4m3 likewise; int5 g128 M=640 / 896 61.5 / 290.5 / 134.5 and 78.9 / 365.8 / 184.7 vs their stream-K default
    72.4 / 326.3 / 156.1 and 100.4 / 452.4 / 207.2; fp6 e3m2 g32 likewise (12-33 %).  (The 256-token tiles win only
    where M fills whole 256-token tiles in one wave -- int8 M=1024 on 6144x4096 / 4096x14336, 85.3 / 166.9 vs 87.9 /
    192.8 -- and lose from 1152: a lead, not a rule.)"""
    if arch != "sm_90a":
        return 128
    return 2048 if bits <= 4 else 513


def split_k_256_token_tile(choice: "KernelChoice") -> bool:
    """A split-K grid of the cp.async kernel's 256-token wgmma tiles: the tiles whose plan may launch a stream-K twin
    (wave_cliff_twin), a 192-row sibling (wide_rows_sibling) or whole waves plus a split tail (dp_tail_applies), and
    the kernels that take a row-tile offset (kRowTiles in gemm_wna16.cuh)."""
    return (choice.bt == 256 and choice.wgmma and choice.pipeline == "cp_async" and not choice.stream_k
            and not choice.cluster)


def wave_cliff_twin(choice: "KernelChoice") -> Optional["KernelChoice"]:
    """The stream-K twin (same tile, same stages, a persistent grid over (tile, stage) units) of a 256-token
    split-K tile, or None.  The layer's plan launches the twin instead where the split-K grid would leave many
    SMs idle in its last wave (split_grid_on_wave_cliff): 6144x4096 at M=1024 is 192 tiles on 132 SMs, two
    waves, the second 45 % full -- int4 99.9 us split-K vs 87.6 us stream-K; on full waves split-K wins
    (28672x4096 M=1024, 896 tiles: 373.4 vs 415.4 us; results/h200-2026-12-02-s18/c_sweep_bt256.txt)."""
    if split_k_256_token_tile(choice):
        return dataclasses.replace(choice, stream_k=True)
    return None


def wide_rows_sibling(choice: "KernelChoice") -> Optional["KernelChoice"]:
    """The 192-row sibling of a 128-row x 256-token split-K tile: three warpgroups of m64n256k16 instead of two
    (164 registers at 384 threads, no spills), five one-atom stages (three two-atom stages of 192 rows would overflow
    shared memory).  Per tile it does 1.5x the work per stage barrier and reads each x tile for 1.5x the rows; what
    decides is the grid: the layer's plan launches it where its waves of 192-row tiles cost less than the base
    tile's waves of 128-row ones (plan_row_waves).  int4, us, same run (results/h200-2026-12-02-s19/b_sweep_wn12.txt),
    base / sibling / base's stream-K twin: 6144x4096 M=1024 100.6 / **74.9** / 91.7 (192 -> 128 tiles: one wave; the
    upstream peer 76.1 in the same call); 28672x4096 M=1024 378.0 / 380.4 (896 vs 600 tiles: 7 vs 5 waves, a tie);
    4096x14336 M=1024 169.7 / 236.2 (128 vs 88 tiles: one wave each, the sibling's a third idle)."""
    if split_k_256_token_tile(choice) and choice.warps_n == 8 and choice.tiles_m == 1:
        return dataclasses.replace(choice, warps_n=12, atoms_k=1, stages=5)
    return None


def x16_sibling(choice: "KernelChoice") -> Optional["KernelChoice"]:
    """The bf16-staged-as-fp16 twin (KernelChoice.x16) of an 8-token mma.sync decode choice, or None.  The layer's
    plan launches it at M <= x16_max_m(K) (2; 8 on layers deeper than 4096) where the format and activations allow it (ops/gemm.py GemmLayer._alternatives:
    4-bit integer codes, bf16 activations, sm_90a -- where it was measured).  int4 g128, us, bf16 decode vs staged,
    same run (results/h200-2026-12-04-s24/a/sweep_x16_*.txt): 28672x4096 (bt8_wn14_tm1_wk2) M=1 20.3 vs 19.4, M=2
    20.9 vs 20.7, M=4 21.5 vs 21.5, M=8 22.5 vs 23.1; 4096x14336 (bt8_wn4_tm2_wk2) M=1 11.8 vs 11.6, M=2 12.6 vs 12.4,
    M=4 14.1 vs 14.0, M=8 16.2 vs 16.8 -- the staging converts every token row of the block's range, so its cost grows
    with M while the decode saving does not."""
    if choice.direct and not choice.wgmma and choice.bt == 8 and not choice.x16:
        return dataclasses.replace(choice, x16=True)
    return None


# up to this many tokens the plan launches x16_sibling where the layer allows it
X16_MAX_M = 2
# ... and up to this many on layers deeper than X16_LONG_K (x16_max_m).  Since session 37's pass over x (its cost no
# longer grows row by row) the twin also wins at 3-8 tokens on the long layer and not on the wide one, same run,
# us, x16 vs bf16 decode: H200 4096x14336 M = 4 / 8 12.9 / 15.2 vs 13.1 / 15.6, 28672x4096 20.6 / 22.6 vs 20.5 / 21.5
# (results/2026-12-05-s37/d/sweep_{long,wide}_default.txt); H100 4096x14336 14.8 / 16.1 vs 15.0 / 16.6 (c/).
X16_LONG_MAX_M = 8
X16_LONG_K = 4096


def x16_max_m(k: int) -> int:
    """The most tokens at which a layer of depth K launches its x16 twin (ops/plan.py)."""
    return X16_LONG_MAX_M if k > X16_LONG_K else X16_MAX_M


# the shared-memory prefetch budget of the small layers' decode choice (KernelChoice.pf, smem_prefetch_decode_choice)
# per token count, KB: entry m - 1 serves m tokens, and the plan launches the prefetch choice up to SMEM_PF_MAX_M
# tokens.  H200, int4 g128, same run (results/2026-12-06-s41/c/sweep_pf2_*.txt), us, 6144x4096 / 4096x4096 /
# 2048x4096: M=1 72 KB 5.1 / 4.5 / 3.3 (48 KB 6.3 / 4.5 / 3.3); M=2 48 KB 6.9 / 5.8 / 4.1 vs 72 KB 7.3 / 6.2 / 4.1 and
# the wgmma decode default 7.6 / 6.8 / 5.6.  At M=3 the wgmma default wins (6144x4096: 7.9 vs 8.7, s41/b).  H100
# (session 38, results/2026-12-05-s38/b): M=2 7.4 vs 7.6.  (Session 35's H100 run, with the old pass over x, had the
# wgmma default ahead at M=2: 7.68 vs 9.00.)
SMEM_PREFETCH_KB_BY_M = (72, 48)
SMEM_PF_MAX_M = len(SMEM_PREFETCH_KB_BY_M)


def smem_pf_tag(m: int) -> str:
    """The plan_alternatives tag of the prefetch choice for m tokens (1 <= m <= SMEM_PF_MAX_M): "smem_pf" at one
    token, "smem_pf<m>" above (each budget is its own kernel); the x16 twin appends "_x16"."""
    return "smem_pf" if m == 1 else f"smem_pf{m}"


# The 224-row mma.sync decode tile: fourteen warp rows of one atom row, two K-warps (28 warps, one block per SM) --
# the 1-8-token choice of wide int4 layers whose 224-row grid fills the SMs (_direct_defaults: spread_224) and of
# NVFP4 / block-scaled fp8 there.
DECODE_224 = KernelChoice(8, 14, 1, 2, 256, 4, "direct")
# The 128-row wgmma decode of 1-8 tokens: one wgmma m64n8k16 warpgroup pair per 128 rows, split along K -- the
# 8-token choice of narrow K <= 4096 layers (int3 / int4 / 4-bit floats) and of 8-bit float codes on wide or long ones.
DECODE_WGMMA_PAIR = KernelChoice(8, 8, 1, 1, 256, 4, "direct", "wgmma")

# One-token tiles (plan_alternatives tags "ring_x16" and "mid_x16"), launched at M <= ONE_TOKEN_TILES_MAX_M -- the
# one token count they were timed at -- for int4 with bf16 activations on sm_90a, both as x16 twins:
# - "ring_x16": the 224-row tile's weights through a 64 KB warp-private shared-memory ring (KernelChoice.pf_ring)
#   instead of its register ring.  28672x4096 M=1, us: H200 16.6 vs 17.5 for the plain x16 twin (results/2026-12-06-
#   s47/b/sweep_m1_wide.txt; a 96 KB ring 17.2); H100 2-3 % faster (session 46).
# - "mid_x16": the 224-row tile with K splits on layers of MID_224_MIN_N..MID_224_MAX_N rows and K = 4096, whose
#   8-token choice is the 128-row wgmma decode (its one-split 224-row grid would not fill the SMs:
#   _decode_grid_fills_sms).  M=1, us, H200 (same file): 14336x4096 12.3 (2 splits, 128 blocks) vs 15.8, 12288x4096
#   11.7 (2 splits, 110 blocks) vs 12.3; H100 14336x4096 14.4 vs 16.2 (session 46).  Between the two every layer is
#   one wave of 2-split blocks; narrower layers and wider ones (from 14785 rows the planner takes 3 splits, two
#   waves of one-block-per-SM blocks) were not timed.
# Both kernels matched the fp32 reference on an H100 in their bf16 form at M = 1..8 (results/2026-12-07-s48/a) and
# in their x16 form on the CPU emulation (tests/test_gemm_emulated.py).  HUMMING_ONE_TOKEN_TILES=0 turns both off.
ONE_TOKEN_TILES_MAX_M = 1
MID_224_MIN_N, MID_224_MAX_N = 12288, 14336
ONE_TOKEN_RING_KB = 64


def one_token_tiles_enabled() -> bool:
    """HUMMING_ONE_TOKEN_TILES (default 1; 0 turns it off): whether plans launch the "ring_x16" / "mid_x16" one-token
    tiles (ONE_TOKEN_TILES_MAX_M)."""
    return env_switch("HUMMING_ONE_TOKEN_TILES")


def one_token_tiles(choice: "KernelChoice", bits: int, n: int, k: int,
                    float_family: bool) -> List[Tuple[str, "KernelChoice"]]:
    """The one-token tiles (see ONE_TOKEN_TILES_MAX_M) a layer's plan may launch instead of its 8-token choice: the
    224-row tile's ring twin where that tile is the choice, the mid-size layers' 224-row tile where the 128-row wgmma
    decode is; [] for other codes, shapes and choices, or with the switch off."""
    if bits != 4 or float_family or not one_token_tiles_enabled():
        return []
    if choice == DECODE_224:
        return [("ring_x16", dataclasses.replace(choice, x16=True, pf=ONE_TOKEN_RING_KB, pf_ring=True))]
    if (choice == DECODE_WGMMA_PAIR and MID_224_MIN_N <= n <= MID_224_MAX_N
            and -(-k // 64) == 64):
        return [("mid_x16", dataclasses.replace(DECODE_224, x16=True))]
    return []


def plan_alternatives(choice: "KernelChoice", bits: int = 0, n: int = 0, k: int = 0, group: int = 0,
                      float_family: bool = False, sms: int = 0) -> List[Tuple[str, "KernelChoice"]]:
    """What a layer's plan may launch instead of an M bucket's choice, decided per call M (ops/gemm.py
    GemmLayer._plan): ("wide_rows", wide_rows_sibling) first, then ("stream_k_twin", wave_cliff_twin), and
    ("x16", x16_sibling) at M <= x16_max_m(K); for the 8-token wgmma decode choice of a layer that has one (``n``,
    ``k``, ``group``, ``float_family``, ``sms``: the layer), per token count m <= SMEM_PF_MAX_M (smem_pf_tag(m):
    "smem_pf", "smem_pf2") the prefetch choice with that count's budget (smem_prefetch_decode_choice) and its x16 twin
    (tag + "_x16"); and the one-token tiles "ring_x16" / "mid_x16" (one_token_tiles, launched at M <=
    ONE_TOKEN_TILES_MAX_M).  Every alternative is compiled with the bucket's choice (specs, prewarm, strict no-JIT
    mode, CI's all_choices).  ``bits`` (0 = not known): 8-bit codes get no wide-rows sibling -- its
    three warpgroups' 8-bit fragments run out of registers, and ptxas serializes its wgmmas ("insufficient register
    resources", C7510: int8 / e5m2 with channel scales, session 27's compile matrix; with group scales its stages do
    not fit shared memory anyway)."""
    out = []
    sibling = wide_rows_sibling(choice) if bits < 8 else None
    for tag, alt in (("wide_rows", sibling), ("stream_k_twin", wave_cliff_twin(choice)),
                     ("x16", x16_sibling(choice))):
        if alt is not None:
            out.append((tag, alt))
    if choice.direct and choice.wgmma and choice.bt == 8:
        for m in range(1, SMEM_PF_MAX_M + 1):
            pf = smem_prefetch_decode_choice(n, k, bits, group, float_family, sms, m)
            if pf is not None:
                out += [(smem_pf_tag(m), pf), (smem_pf_tag(m) + "_x16", dataclasses.replace(pf, x16=True))]
    return out + one_token_tiles(choice, bits, n, k, float_family)


def plan_swap_tags(m: int, k: int) -> List[str]:
    """The plan_alternatives tags that replace an M bucket's own kernel at m tokens of a layer of depth K, in order of
    preference (ops/plan.py launches the first the layer has): the shared-memory prefetch grid of that token count and
    its x16 twin (m <= SMEM_PF_MAX_M), the one-token tiles (m <= ONE_TOKEN_TILES_MAX_M), the x16 twin (m <=
    x16_max_m(K))."""
    tags = [smem_pf_tag(m) + "_x16", smem_pf_tag(m)] if m <= SMEM_PF_MAX_M else []
    if m <= ONE_TOKEN_TILES_MAX_M:
        tags += ["ring_x16", "mid_x16"]
    if m <= x16_max_m(k):
        tags.append("x16")
    return tags


def plan_row_waves(blocks: int, slots: int, block_n: int, atoms_per_block: int) -> int:
    """The cost model that picks between a split-K tile and its wide-rows sibling: waves of resident blocks times the
    work of one block (weight rows x atom columns), i.e. the rows x atoms one slot works through.  Ties keep the
    bucket's choice.  (With slots = SMs and one atom: the rows the busiest SM streams, which picks the wide layers'
    224-row decode blocks in _direct_defaults.)"""
    return -(-blocks // max(1, slots)) * block_n * atoms_per_block


def split_grid_on_wave_cliff(blocks: int, slots: int) -> bool:
    """Whether a one-shot grid of `blocks` on `slots` resident slots takes two or more waves and wastes over a fifth of
    its last wave's slots (blocks / (waves * slots) < 0.8).  A one-wave grid is no cliff: its blocks all run at once,
    and the stream-K twin's overhead outweighs the idle SMs it would use (6144x4096 at 385-512 tokens, 96 tiles on
    132 SMs, int4: 48.7 / 49.5 us split-K vs 50.2 / 50.8 stream-K; results/h200-2026-12-02-s19/f_sweep_m400.txt)."""
    waves = -(-blocks // max(1, slots))
    return waves >= 2 and blocks < 0.8 * waves * slots


# the most K splits dp_tail_split gives the tail launch (each split's partial tile is written and read back once)
DP_TAIL_MAX_SPLITS = 4


def splits_of(k_atoms: int, atoms_k: int, want: int) -> Tuple[int, int]:
    """(splits, atoms per split) for about ``want`` K splits of k_atoms atoms in whole stages of atoms_k atoms (at most
    one split per stage; the last split may come out short)."""
    per = -(-k_atoms // min(want, max(1, k_atoms // atoms_k)))
    per = -(-per // atoms_k) * atoms_k
    return -(-k_atoms // per), per


def dp_tail_applies(choice: "KernelChoice") -> bool:
    """Whether a split-K grid of this choice may run as whole waves plus a split tail (dp_tail_split): the 256-token
    cp.async wgmma tiles -- the family of wave_cliff_twin, where it was measured.  HUMMING_DP_TAIL=0 turns it off."""
    raw = os.environ.get("HUMMING_DP_TAIL", "1").strip() or "1"
    if raw not in ("0", "1"):
        raise ValueError(f"HUMMING_DP_TAIL must be 0 (one grid) or 1 (split plans, the default), got {raw!r}")
    return raw == "1" and split_k_256_token_tile(choice)


def dp_tail_split(m_tiles: int, n_tiles: int, slots: int, k_atoms: int, atoms_k: int) -> Optional[Tuple[int, int]]:
    """Split a one-split grid of m_tiles x n_tiles tiles that takes W >= 2 waves of `slots` resident blocks and leaves
    its last wave at most half full into two launches: the first ``head`` row tiles (every token tile of them: at
    most W whole waves), then the other row tiles with their K range cut into ``splits`` (2..DP_TAIL_MAX_SPLITS,
    at most one wave of blocks, whole stages of ``atoms_k`` atoms each).  Returns (head, splits) or None.

    The last wave then runs 1 / splits of a tile per block instead of whole tiles on a few SMs.  Measured as two
    layers back to back (int4 g128, 128-row x 256-token tiles, 28672x4096: 448 tiles on 132 SMs, 3.39 waves; head
    25344 rows = 396 tiles, tail 3328 rows = 52 tiles x 2 splits): M=400 185.9 vs 195.1 us, M=512 183.4 vs 197.6
    (results/h200-2026-12-04-s30/a/dp_tail_wide.txt).  A grid on a wave cliff (split_grid_on_wave_cliff) runs as its
    stream-K twin instead; a grid whose tail fills more than half a wave gains nothing (one split)."""
    blocks = m_tiles * n_tiles
    waves = blocks // max(1, slots)
    if waves < 2 or blocks % slots == 0 or split_grid_on_wave_cliff(blocks, slots):
        return None
    head = waves * slots // m_tiles
    tail_tiles = (n_tiles - head) * m_tiles
    splits = min(DP_TAIL_MAX_SPLITS, slots // max(1, tail_tiles), k_atoms // max(1, atoms_k))
    if head < 1 or splits < 2:
        return None
    return head, splits


def sibling_head_split(m_tiles: int, n16: int, base_rows: int, head_rows: int, base_slots: int, head_slots: int,
                       k_atoms: int, atoms_k: int) -> Optional[Tuple[int, int]]:
    """Where dp_tail_split finds nothing, a split tail behind whole waves of the wide-rows sibling's tiles: the first
    ``head`` row tiles of ``head_rows`` rows (every token tile of them, whole waves of the sibling's slots), then the
    remaining rows as base tiles of ``base_rows`` rows with K cut into ``splits`` (one wave).  Returns (head, splits)
    where that costs less than the base tile's one grid -- counted in base-tile waves: a sibling wave head_rows /
    base_rows, the tail 1 / splits + 0.1 -- else None.  The head must end on a base-tile boundary (the tail launch
    counts its row tiles from there).

    The wide layer at 129-256 tokens: 224 base tiles on 132 SMs are 1.7 waves (no cliff, and too many left over for
    dp_tail_split); 132 sibling tiles of 192 rows are one wave over 25344 rows, the last 3328 rows 26 base tiles x 4
    splits.  Measured as two layers back to back (the tail on the narrow layers' tile): 28672x4096 M = 200 / 256
    89.4 / 93.9 vs 96.3 / 97.8 us (results/h200-2026-12-04-s30/e/dp_tail_default.txt)."""
    base_tiles = m_tiles * -(-n16 // base_rows)
    base_waves = -(-base_tiles // max(1, base_slots))
    waves = m_tiles * -(-n16 // head_rows) // max(1, head_slots)
    if waves < 1:
        return None
    head = waves * head_slots // m_tiles
    while head > 0 and (head * head_rows) % base_rows:
        head -= 1
    if head <= 0 or head * head_rows >= n16:
        return None
    tail_tiles = m_tiles * -(-(n16 - head * head_rows) // base_rows)
    splits = min(DP_TAIL_MAX_SPLITS, base_slots // max(1, tail_tiles), k_atoms // max(1, atoms_k))
    if splits < 2:
        return None
    cost = -(-(m_tiles * head) // head_slots) * head_rows / base_rows + 1.0 / splits + 0.1
    return (head, splits) if cost < base_waves else None


def m_bucket(m: int) -> int:
    for b in M_BUCKETS:
        if m <= b:
            return b
    return M_BUCKETS[-1]


def _fits(choice: KernelChoice, info: ArchInfo, bits: int, gps: int, zero: bool, group: int = 0) -> bool:
    return choice.smem_bytes(bits, gps, zero, group) <= info.smem_per_block


def groups_per_stage(group: int, block_k: int) -> int:
    """Scale groups one pipeline stage of block_k columns touches (KernelChoice.smem_bytes' argument): 0 without
    group scales."""
    return 0 if group == 0 else (1 if group >= block_k else block_k // group)



def _bulk_candidates(bucket: int, arch: str = ""):
    """Bulk-copy pipeline (sm_90+), M <= 64: one token tile covers the bucket, 4-8 math warps + a producer warp,
    deep rings (two blocks per SM on 228 KB parts).  On sm_90a from 33 tokens up: two wgmma math warpgroups + a
    producer warpgroup, 128 weight rows x 64 / 128 tokens (the best bulk wgmma tiles of the session-5 sweeps,
    results/h200-2026-11-30/c*_sweep_bulk_wgmma.log)."""
    if arch == "sm_90a" and bucket > 32:
        bt = 64 if bucket <= 64 else 128
        return [KernelChoice(bt, 8, 1, 1, 1, 4, "bulk", "wgmma"), KernelChoice(bt, 8, 1, 1, 1, 3, "bulk", "wgmma")]
    if bucket <= 8:
        return [KernelChoice(8, 4, 2, 1, 2, 8, "bulk"), KernelChoice(8, 4, 2, 1, 2, 4, "bulk")]
    if bucket <= 16:
        return [KernelChoice(16, 4, 2, 2, 2, 6, "bulk"), KernelChoice(16, 4, 2, 2, 2, 3, "bulk")]
    if bucket <= 32:
        return [KernelChoice(32, 4, 2, 2, 2, 5, "bulk"), KernelChoice(32, 4, 2, 2, 2, 3, "bulk")]
    if bucket <= 64:
        return [KernelChoice(64, 8, 1, 1, 2, 4, "bulk"), KernelChoice(64, 8, 1, 1, 2, 2, "bulk")]
    return []


def _direct_candidates(bucket: int, arch: str = ""):
    """HUMMING_PIPELINE=direct (experiments): the direct kernel for every M <= 32 it serves -- the best choices of the
    session-9 sweeps (results/h200-2026-12-01-s9/b_sweep_*.txt): two K-warps per 128-row block at M <= 8 (mma.sync,
    any arch), wgmma math from 9 tokens on sm_90a; mma.sync 16-token tiles elsewhere (slower than the cp.async
    kernel on the H200)."""
    if bucket <= 8:
        return [KernelChoice(8, 4, 2, 2, 256, 4, "direct")]
    if bucket <= 16:
        if arch == "sm_90a":
            return [KernelChoice(16, 8, 1, 1, 256, 4, "direct", "wgmma")]
        return [KernelChoice(16, 2, 2, 4, 256, 2, "direct")]
    if bucket <= 32 and arch == "sm_90a":
        return [KernelChoice(32, 8, 1, 1, 256, 4, "direct", "wgmma")]
    return []


def choose_direct_splits(choice: KernelChoice, n: int, k: int, m: int, info: ArchInfo, blocks_per_sm: int,
                         group: int = 0, zero: bool = False, smem_limit: int = 0, bits: int = 4) -> Tuple[int, int]:
    """(splits, atoms per split) for the direct kernel.  A split's range is a whole number of units per K-warp (every
    K-warp of every block streams the same bytes), at most atoms_k atoms, and its shared memory (min(m, bt) stored x
    rows of the range: direct_smem_bytes) fits ``smem_limit`` (default: a block's opt-in maximum less 1 KB of static
    shared memory).  Among those, the range whose grid takes the fewest waves of resident blocks -- residency from
    ``blocks_per_sm`` (registers) and the range's shared memory -- times each warp's atoms plus a fixed cost of
    ~4 atoms per block (first-load latency, epilogue), fewest splits on ties.  HUMMING_DEBUG_SPLITS forces the
    count (experiments)."""
    k_atoms = -(-k // 64)
    n_tiles = -(-n // choice.block_n)
    m_tiles = -(-m // choice.bt)
    unit = direct_unit_atoms(group)   # ranges start on group boundaries (both kernels index scales from there)
    quantum = unit * choice.warps_k
    cap = max(quantum, choice.atoms_k // quantum * quantum)
    rows = min(m, choice.bt)
    limit = smem_limit or info.smem_per_block - 1024
    if choice.cluster:
        # exactly `cluster` splits (the cluster along z); HUMMING_DEBUG_SPLITS does not apply
        per = choice.cluster_range(k, group)
        if per is None:
            raise ValueError(f"kernel choice {choice.short()} cannot cover K={k} with {choice.cluster} splits of at "
                             f"most {cap} atoms")
        smem = choice.direct_smem_bytes(per, rows, group, zero, bits)
        if smem > limit:
            raise ValueError(f"kernel choice {choice.short()} needs {smem} bytes of shared memory for a "
                             f"{per}-atom K range of {rows} token rows; a block may take {limit}")
        return choice.cluster, per
    forced = env_int("HUMMING_DEBUG_SPLITS", 0, 1, 256)
    smallest = choice.direct_smem_bytes(quantum, rows, group, zero, bits)
    if smallest > limit:
        raise ValueError(f"kernel choice {choice.short()} needs {smallest} bytes of shared memory for its smallest K "
                         f"range ({quantum} atoms, {rows} token rows, group {group}); a block may take {limit}: "
                         "choose fewer token or weight rows per block")
    best = None
    for per in range(quantum, max(quantum, min(cap, -(-k_atoms // quantum) * quantum)) + 1, quantum):
        splits = -(-k_atoms // per)
        smem = choice.direct_smem_bytes(per, rows, group, zero, bits)
        if smem > limit:
            continue
        bps = max(1, min(blocks_per_sm, info.smem_per_sm // (smem + 1024)))
        waves = -(-(n_tiles * m_tiles * splits) // (info.sms * bps))
        if forced:
            cost = (abs(splits - forced), 0)
        elif choice.pf and choice.wgmma:
            # a prefetching wgmma grid: at most one block per SM (the next launch's block must fit beside it), as
            # many blocks as that allows (the decode streams with every SM): the most splits whose grid fits
            blocks = n_tiles * m_tiles * splits
            cost = (0, -splits) if blocks <= info.sms else (1, splits)
        elif choice.pf:
            # a prefetching grid wants one wave of few blocks (the next launch's blocks must fit beside it) and no
            # split-K end: fewest waves, then fewest splits
            cost = (waves, splits)
        else:
            cost = (waves * (per // choice.warps_k + 4), splits)
        if best is None or cost < best[0]:
            best = (cost, splits, per)
    return best[1], best[2]


def has_bulk(arch: str) -> bool:
    """Whether `arch` has the bulk-copy engine (sm_90 and newer)."""
    return _has_bulk(arch)


def _has_bulk(arch: str) -> bool:
    try:
        return int(arch.split("_")[1].rstrip("af")) >= 90
    except (IndexError, ValueError):
        return False


def cluster_defaults_enabled() -> bool:
    """HUMMING_CLUSTER (default 1; 0 turns them off): whether the heuristics pick the cluster-reduced split-K choices
    (thread block clusters summing the K splits in distributed shared memory) where they measured faster on the H200
    and passed their GPU tests there (sessions 11-12, NOTES.md).  Forced choices with a cluster (tests, tuning) run
    either way."""
    return env_switch("HUMMING_CLUSTER")


# HUMMING_WIDE_DECODE_BULK (default 1 since session 47; part of decode_bulk_choice, so HUMMING_DECODE_BULK=0 turns it
# off too): every wide layer's (N >= WIDE_N) 9-16-token int4 rule takes the warp-specialized bulk kernel with three
# math warpgroups (a producer warpgroup keeps a 4-stage ring of 2 atoms x 384 rows in flight by TMA) instead of the
# 2-block cluster decode.  Session 47, on the H200 (results/2026-12-06-s47/b, the bench with the switch 1 / 0), int4
# g128, us at M = 9 / 12 / 16: 28672x4096 26.0 / 26.2 / 26.2 vs 26.2 / 26.4 / 26.8, 20480x5120 24.3 / 24.4 / 24.4 vs
# 31.4 / 31.5 / 31.8, 16384x4096 19.1 / 19.2 / 19.2 vs 21.7 / 21.3 / 19.9; narrower layers lose with it (c/: M=16
# 14336x4096 17.6 vs 16.9, 12288x4096 16.3 vs 15.5, 10240x8192 21.6 vs 20.8), hence WIDE_N.  On the H100 the wide
# layer loses ~4 % with it (session 46: 28.1 vs 27.1); the heuristics are per arch, and the H200 is the measure.
# Session 45 had seen the lead under an H200's per-SM load on an H100 (tuning.sm_reserve: 19968x4096 24.8 vs 27.4).
WIDE_DECODE_BULK = KernelChoice(16, 12, 2, 1, 2, 4, "bulk", "wgmma", tma_x=True)


# Decode on big layers: the warp-specialized bulk kernel (gemm_wna16_sm90.cuh: a producer warpgroup keeps a 4-stage
# ring of two-atom TMA copies in flight, persistent stream-K over one block per SM, so no grid waves) instead of the
# direct wgmma decode, whose grids of 128- / 256-row blocks run whole waves plus a tail there.  Session 46, an H100 (no
# H200 came; results/2026-12-06-s46/c-e), us, the plan vs the better bulk tile:
# - 17-32 tokens, int4 g128, M = 17 / 32 (24 / 32 on the bench shapes): 28672x4096 41.1 / 41.9 vs 29.3 / 29.1,
#   37888x3584 46.4 / 50.4 vs 33.2 / 33.3, 8192x28672 72.3 / 77.0 vs 50.1 / 50.5, 10240x8192 28.4 / 29.5 vs 24.1 /
#   24.2, 14336x4096 23.8 / 24.8 vs 19.7 / 19.9, 4096x14336 23.1 / 24.5 vs 19.6 / 19.8, 3584x18944 26.5 / 28.7 vs 22.8
#   / 23.6, 8192x8192 23.6 / 24.9 vs 21.2 / 21.4; at M=24 12288x4096 20.3 vs 17.8, 2048x28672 25.4 vs 21.3.  Layers
#   below ~48 M weights lose (M=24: 11008x4096 16.1 vs 17.0, 4096x11008 15.7 vs 16.8, 5120x8192 15.5 vs 17.1, 3072x14336
#   16.0 vs 18.5, 8192x4096 13.4 vs 15.1, 6144x4096 12.0 vs 13.3 at M=17, 4096x4096 8.7 vs 11.4).  The other codes at
#   M=24 on 28672x4096 / 4096x14336 / 8192x8192 (4096x7168 loses for each): int3 g128 44.8 / 23.4 / 24.6 vs 29.9 / 19.4
#   / 21.1, int4 g128 + int zero points 42.8 / 23.1 / 24.3 vs 31.3 / 20.0 / 22.0, MXFP4 42.4 / 23.6 / 24.3 vs 32.6 /
#   21.1 / 23.1, NVFP4 45.4 / 24.6 / 25.6 vs 35.9 / 23.3 / 25.5, int8 channel 55.4 / 31.5 / 33.2 vs 48.0 / 28.1 / 30.9,
#   fp8 channel 56.0 / 32.2 / 33.3 vs 47.5 / 28.2 / 30.9.  With 40 of the H100's SMs held (each of the rest at an
#   H200's per-SM load, session 45) the bulk kernel led by as much or more: 19968x4096 M=32 28.5 vs 41.3, 4096x14336
#   23.7 vs 30.2 (4352x4096 a tie).  Rows per tile: 256 (two warpgroups of two m64 tiles) for codes of <= 4 bits from
#   DECODE_BULK_WIDE_N rows, else 192 (three warpgroups of one m64 tile: more tiles for the 132 blocks to share; 8-bit
#   codes at 163 registers in the 256-row tile lose with it everywhere).
# - 9-16 tokens, int4 g128, M=16: only the biggest layers (the 256-row direct decode's waves: 37888x3584 runs 296
#   blocks on 264 slots): 37888x3584 38.8 vs 30.8, 8192x28672 53.0 vs 47.0, 57344x8192 127.6 vs 90.1 (three
#   warpgroups of two m64 tiles, WIDE_DECODE_BULK); on the H100 28672x4096 (27.1 vs 28.1), 10240x8192 (20.9 vs
#   22.2) and 14336x4096 (17.0 vs 18.2) kept the direct decode.  Since session 47 every layer with N >= WIDE_N takes
#   it too (HUMMING_WIDE_DECODE_BULK, measured on the H200, above WIDE_DECODE_BULK).
# Both need K to be whole two-atom stages (128 columns); other K keep the direct decode.
DECODE_BULK_MIN_WEIGHTS = 48 << 20          # 17-32 tokens: 12288x4096 takes it, 11008x4096 does not
DECODE_BULK_16_MIN_WEIGHTS = 128 << 20      # 9-16 tokens: 37888x3584 takes it (N >= WIDE_N: any size)
DECODE_BULK_WIDE_N = 10240
DECODE_BULK_32_WIDE = KernelChoice(32, 8, 2, 1, 2, 4, "bulk", "wgmma", tma_x=True)
DECODE_BULK_32 = KernelChoice(32, 12, 1, 1, 2, 4, "bulk", "wgmma", tma_x=True)


def decode_bulk_enabled() -> bool:
    """HUMMING_DECODE_BULK (default 1; 0 turns it off): the big layers' bulk decode rule (decode_bulk_choice)."""
    return env_switch("HUMMING_DECODE_BULK")


def decode_bulk_serves(bucket: int, bits: int, group: int, float_family: bool, zero: int = 0) -> bool:
    """The codes the bulk decode rule was measured on (DECODE_BULK_MIN_WEIGHTS): at 17-32 tokens 3- / 4-bit integers
    with channel or 128-column group scales and no or integer zero points, MXFP4, NVFP4, 8-bit integers and floats
    with channel scales; at 9-16 tokens int4 with channel or 128-column groups.  ``zero`` as in choose_kernel (2: float
    zero points, not measured)."""
    if zero == 2:
        return False
    if 8 < bucket <= 16:
        return not float_family and bits == 4 and group in (0, 128)
    if 16 < bucket <= 32:
        if bits == 8:
            return group == 0
        if float_family:
            return bits == 4 and group in (16, 32)
        return bits in (3, 4) and group in (0, 128)
    return False


def decode_bulk_choice(bucket: int, n: int, k: int, bits: int, group: int, float_family: bool,
                       zero: int = 0) -> Optional[KernelChoice]:
    """The bulk tile a big layer takes instead of the direct wgmma decode at 9-32 tokens (DECODE_BULK_MIN_WEIGHTS), or
    None: the codes decode_bulk_serves, at least DECODE_BULK_MIN_WEIGHTS weights at 17-32 tokens and
    DECODE_BULK_16_MIN_WEIGHTS at 9-16, K a multiple of the two-atom stage (128 columns)."""
    if (not decode_bulk_enabled() or n <= 0 or k <= 0 or k % 128
            or not decode_bulk_serves(bucket, bits, group, float_family, int(zero))):
        return None
    if 8 < bucket <= 16:
        # (HUMMING_WIDE_DECODE_BULK, default 1: every wide layer)
        big = n * k >= DECODE_BULK_16_MIN_WEIGHTS or (n >= WIDE_N and wide_decode_bulk_enabled())
        return WIDE_DECODE_BULK if big else None
    if n * k < DECODE_BULK_MIN_WEIGHTS:
        return None
    return DECODE_BULK_32_WIDE if bits <= 4 and n >= DECODE_BULK_WIDE_N else DECODE_BULK_32


# Two 16-token designs for the layers the 9-16-token bulk rule serves, built as switches and removed after an H100
# measured both slower (results/2026-12-07-s50, NOTES.md sessions 49-50): whole-tile mma.sync bulk grids (one block
# per 224-row tile, no stream-K joins: 28672x4096 M=16 36.5 / 32.2 us vs 28.3 for WIDE_DECODE_BULK) and the direct
# decode with two atom rows per warp (half the ldmatrix reads of x: 30.0 / 35.1 us for 4- / 3-deep rings).  With 40
# SMs held (an H200's per-SM load) the order held: 19968x4096 24.6 (bulk) vs 31.7-36.4 and 27.7-32.9.


def wide_decode_bulk_enabled() -> bool:
    """HUMMING_WIDE_DECODE_BULK (default 1; 0 turns it off): see WIDE_DECODE_BULK."""
    return env_switch("HUMMING_WIDE_DECODE_BULK")


# HUMMING_WIDE_BULK_64 (default 1; session 52): wide int4 layers (N >= WIDE_N) at 33-64 tokens whose 256-row tiles
# fill WHOLE_TILE_FILL_64..1 of the SMs take the warp-specialized bulk kernel with a 5-deep ring, run as ONE BLOCK PER
# TILE (bulk_whole_tiles: the stream-K schedule over a grid of one block per tile hands each block exactly one whole
# tile -- no parked partials, no joins).  The cp.async kernel it replaces has the same grid; the bulk kernel's math
# warps issue no copies (330 instructions per stage and warp against 432, NOTES session 51).  Measured on an H100
# (no H200 came; the layer is compute-bound at 64 tokens, so the card's bandwidth hardly shows), us, the plan's
# bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma vs this tile (results/2026-12-07-s52/b, d):
#   28672x4096 (112 tiles) M = 33 / 48 / 64: 35.8 / 35.1 / 35.4 vs 34.8 / 34.5 / 34.2 (call B's M=64: 36.0 vs 34.3)
#   19968x4096 (78 tiles):                    34.6 / 34.5 / 34.9 vs 33.8 / 33.3 / 33.5
# Its stream-K grids over all 132 SMs lose (37-41 us on 28672x4096, session 50): the whole-tile grid is the point.
# Only int4 with 128-column groups and no zero points was measured; other codes keep the cp.async tile.
WIDE_BULK_64 = KernelChoice(64, 8, 2, 1, 2, 5, "bulk", "wgmma", tma_x=True)
WHOLE_TILE_FILL_64 = 0.5


def wide_bulk_64_enabled() -> bool:
    """HUMMING_WIDE_BULK_64 (default 1; 0 turns it off, and with it the whole-tile grids): see WIDE_BULK_64."""
    return env_switch("HUMMING_WIDE_BULK_64")


def bulk_whole_tiles(choice: KernelChoice, tiles: int, sms: int) -> bool:
    """Whether the planner runs a bulk choice as one block per tile instead of a stream-K grid over every resident
    slot: 64-token wgmma bulk tiles of 256 rows (WIDE_BULK_64's height, or forced ones) whose ``tiles`` fill
    WHOLE_TILE_FILL_64..1 of ``sms``, with HUMMING_WIDE_BULK_64 on.  The kernel is the same; a grid of one block
    per tile hands every block exactly one tile's units (StreamKSchedule), so no tile is split."""
    return (choice.bulk and choice.wgmma and choice.bt == 64 and choice.block_n == 256 and sms > 0
            and WHOLE_TILE_FILL_64 * sms <= tiles <= sms and wide_bulk_64_enabled())


def _wide_bulk_64_serves(n: int, k: int, bits: int, group: int, float_family: bool, zero: int, sms: int) -> bool:
    """Whether the 33-64-token wide rule (WIDE_BULK_64) takes this layer: int4 with 128-column groups, no zero
    points, N >= WIDE_N, K whole two-atom stages, tiles filling WHOLE_TILE_FILL_64..1 of the SMs."""
    return (bits == 4 and not float_family and group == 128 and zero == 0 and n >= WIDE_N and k > 0
            and k % WIDE_BULK_64.block_k == 0 and bulk_whole_tiles(WIDE_BULK_64, -(-n // WIDE_BULK_64.block_n), sms))


def _decode_grid_fills_sms(n: int, block_rows: int, sms: int) -> bool:
    """Whether a one-split decode grid of `block_rows`-row blocks keeps >= 90 % of the SMs busy in its last round
    (18432 rows in 224-row blocks are 83 blocks: a third of the SMs would idle)."""
    tiles = -(-n // block_rows)
    return tiles >= 0.9 * -(-tiles // max(1, sms)) * sms


def smem_prefetch_enabled() -> bool:
    """HUMMING_SMEM_PREFETCH (default 1; 0 turns it off): whether the decode heuristics pick the shared-memory prefetch
    choices (KernelChoice.pf, smem_prefetch_decode_choice).  Forced choices with _pf run either way."""
    return env_switch("HUMMING_SMEM_PREFETCH")


# the shared memory a prefetching block copies its first weight atoms into at one token (KernelChoice.pf), KB: with
# x, scales and the K-warps' scratch a block stays under half of an sm_90 SM's 228 KB, so the next launch's block fits
# beside it (SMEM_PREFETCH_KB_BY_M: the budget per token count)
SMEM_PREFETCH_KB = SMEM_PREFETCH_KB_BY_M[0]


def smem_prefetch_decode_choice(n: int, k: int, bits: int, group: int, float_family: bool,
                                sms: int, m: int = 1) -> Optional[KernelChoice]:
    """The one-token decode choice (SMEM_PF_MAX_M) that copies each block's weights to shared memory before
    griddepcontrol.wait (KernelChoice.pf), or None where it does not apply: 4-bit integer codes, K <= 4096, and at most 48 weight rows per
    SM -- one block per SM of 16 x a rows (a = 1..3 atom rows, one tile per warp, 8-12 warps split along K), one K
    split, so that the whole layer (<= 96 KB per SM at K = 4096) is in flight before the previous kernel finishes:
    at most ~32 K registers and ~92 KB of shared memory per block, so the next PDL launch's block is resident beside it
    and prefetches while this one computes (the plan releases the next launch early: ops/plan.py).  Measured on an
    H100 (results/2026-12-05-s35/a): 6144x4096 int4 g128 M=1 6.3 us (x16) vs 7.8 for the wgmma default; the same
    grid without the prefetch 9.5 (and SMEM_PF_MAX_M for the bench of 16 / 32 / 48-row blocks)."""
    if not smem_prefetch_enabled() or float_family or bits != 4 or not (0 < k <= 4096) or n <= 0 or sms <= 0:
        return None
    a = -(-n // (16 * sms))            # atom rows per block: the rows spread over the SMs
    if a > 3:
        return None
    wk = 8 if a == 1 else 4            # 8-12 warps: enough loads in flight and math warps for the post-wait chain
    if (k // 64) < wk * direct_unit_atoms(group):
        return None
    if not 1 <= m <= SMEM_PF_MAX_M:
        raise ValueError(f"smem_prefetch_decode_choice: m must be 1..{SMEM_PF_MAX_M}, got {m}")
    # HUMMING_SMEM_PREFETCH_KB (tuning): the budget at every token count; past ~84 KB a 48-row block no longer fits
    # twice in an SM
    kb = env_int("HUMMING_SMEM_PREFETCH_KB", SMEM_PREFETCH_KB_BY_M[m - 1], 8, 200)
    return KernelChoice(8, a, 1, wk, 64, 4, "direct", pf=kb)


def wgmma_prefetch_enabled() -> bool:
    """HUMMING_WG_PREFETCH (default 1; 0 turns it off): whether the 3-16-token decode heuristics pick the prefetching
    wgmma choices (wgmma_prefetch_decode_choice).  Forced choices with _pf run either way."""
    return env_switch("HUMMING_WG_PREFETCH")


# The prefetching wgmma decode candidates per M bucket, in order of preference (rows per block ascending: more
# blocks, more K splits, each warp's range longer per row).  64 KB budgets: each kernel reserves only the positions
# its range needs (KernelChoice.direct_prefetch_atoms), so one instantiation serves every layer it fits.
_WG_PREFETCH_CANDIDATES = {
    16: (KernelChoice(16, 4, 2, 1, 256, 2, "direct", "wgmma", pf=64),     # 128 rows, 4 KB per position
         KernelChoice(16, 8, 2, 1, 256, 2, "direct", "wgmma", pf=64)),    # 256 rows, 8 KB per position
    8: (KernelChoice(8, 8, 1, 1, 256, 4, "direct", "wgmma", pf=64),       # 128 rows, 4 KB per position
        KernelChoice(8, 4, 1, 1, 256, 4, "direct", "wgmma", pf=64)),      # 64 rows, 2 KB per position
}


def wgmma_prefetch_serves(bits: int, group: int, float_family: bool) -> bool:
    """The codes the prefetching wgmma decode was measured on (and so serves): 3- / 4-bit integers at any group,
    MXFP4 and NVFP4 (4-bit floats with 32- / 16-column groups), 8-bit integers and floats with channel scales."""
    if bits == 8:
        return group == 0
    return bits == 4 and group in (16, 32) if float_family else bits in (3, 4)


def wgmma_prefetch_decode_choice(n: int, k: int, bucket: int, bits: int, group: int, float_family: bool,
                                 sms: int) -> Optional[KernelChoice]:
    """The 1-16-token decode choice that copies each block's WHOLE weight range to shared memory before
    griddepcontrol.wait (the direct wgmma kernel with KernelChoice.pf), or None: the codes wgmma_prefetch_serves,
    K <= 4096, and a
    candidate (_WG_PREFETCH_CANDIDATES) whose plan -- at most one block per SM, as many K splits as that allows
    (choose_direct_splits) -- puts 75-100 % of the SMs to work, prefetches every position of its range, and leaves
    room for the next launch's block (two blocks' shared memory per SM).  Then the next PDL launch's blocks sit beside
    this grid and load all their weights while it computes, as the one-token decode does (session 35).
    Measured on an H100 (session 42, results/2026-12-06-s42/f), int4 g128, us, vs the wgmma decode default:
    4096x4096 M = 12 / 16 7.3 / 7.7 vs 7.9 / 8.4 (256-row blocks), M = 4 / 8 6.3 / 7.3 vs 7.7 / 9.5; 2048x4096
    M = 12 / 16 5.7 / 5.8 vs 7.2 / 7.7 (128-row blocks).  Where only part of a range fits it loses (6144x4096 M=16
    10.5 vs 9.5, M=4 10.3 vs 8.0; 4096x14336 18.2 vs 15.2), so those layers keep the default.
    int3 g128 and MXFP4 (session 43, H100, results/2026-12-06-s43/b, the candidates forced vs the plain decode): at
    M=16 the 128-row candidate wins every small layer, int3 1024x4096 / 2048x4096 / 4096x4096 / 4096x2048 5.2 / 5.6 /
    7.3 / 5.6 vs 6.5 / 7.7 / 8.2 / 6.9, MXFP4 5.2 / 5.7 / 7.2 / 5.6 vs 8.3 / 7.8 / 8.4 / 7.0; at M=8 int3 5.3 / 5.8 /
    7.2 / 5.8 vs 6.5 / 7.1 / 9.4 / 6.8 for the 128-row one (the 64-row one 0.3 faster on 1024x4096), MXFP4 5.3 / 6.0 /
    7.3 / 5.9 vs 6.8 / 9.2 / 9.8 / 8.2.  The 8-token choice also serves their 1-2 tokens (int4 alone has the mma.sync
    prefetch grid there): the bench's A/B at M=1, int3 3.68 / 4.44 / 5.90 / 4.43 vs 4.23 / 5.47 / 6.69 / 5.42, MXFP4
    3.74 / 4.69 / 6.13 / 4.67 vs 4.35 / 5.43 / 7.09 / 5.27 (M=2 alike; results/2026-12-06-s43/d).
    int8 / fp8 e4m3 channel and NVFP4 (session 43, results/2026-12-06-s43/e, forced vs their plans' cp.async or plain
    direct kernels), us on 1024x4096 / 2048x4096 / 4096x2048: int8 M=16 6.0 / 7.0 / 6.9 vs 7.4 / 9.0 / 8.5, M=8 6.2 /
    7.4 / 7.2 vs 6.9 / 9.2 / 9.2; fp8 M=16 6.2 / 7.1 / 7.0 vs 6.6 / 7.9 / 7.5, M=8 6.2 / 7.3 / 7.2 vs 6.9 / 9.4 / 9.0;
    NVFP4 (and 4096x4096) M=16 5.6 / 6.1 / 6.0 / 8.2 vs 6.3 / 7.0 / 6.5 / 8.6, M=8 5.6 / 6.4 / 6.2 / 7.8 vs 7.1 / 9.6
    / 8.4 / 10.1 (the candidate the rule takes in each cell); through the bench (results/2026-12-06-s43/f, M = 1 / 2 /
    8 / 16) faster in every cell it serves, e.g. int8 2048x4096 M=1 6.12 vs 7.55, NVFP4 2048x4096 M=8 6.41 vs 9.55.
    Other codes (2, 5-7 bits, 8-bit codes with group or block scales) were not measured and keep their kernels."""
    if (not wgmma_prefetch_enabled() or not wgmma_prefetch_serves(bits, group, float_family) or not (0 < k <= 4096)
            or n <= 0 or bucket not in _WG_PREFETCH_CANDIDATES):
        return None
    info = arch_info("sm_90a", sms)
    for c in _WG_PREFETCH_CANDIDATES[bucket]:
        try:
            splits, per = choose_direct_splits(c, n, k, bucket, info, 2, group, True, bits=bits)
        except ValueError:
            continue
        blocks = -(-n // c.block_n) * splits
        smem = c.direct_smem_bytes(per, bucket, group, True, bits)   # (with zero terms: the larger)
        if (blocks <= info.sms and 4 * blocks >= 3 * info.sms and c.direct_prefetch_atoms(per, bits, group) >= per
                and 2 * (smem + 1024) <= info.smem_per_sm):
            return c
    return None


# Narrow int4 layers with K <= 4096 at 9-16 tokens take the 128-row direct wgmma tile with the polled split-K end
# instead of the 256-row tile on the ticket path (_direct_defaults; plan.splitk_poll_applies turns the polled end on
# for this choice where this rule holds).  HUMMING_NARROW16_POLLED=0 / 1: never / for every narrow int3 / int4 layer.
NARROW16_POLLED_CHOICE = KernelChoice(16, 8, 1, 1, 256, 4, "direct", "wgmma")


# (Sessions 55-56 had two opt-in rules here, HUMMING_NARROW16_WK and HUMMING_NARROW64_WK, that gave narrow layers at
# 9-16 / 33-64 tokens tiles with K-warpgroups -- the K splits summed in the block's shared memory, so fewer or no
# cross-block split-K ends.  Both lost on every cell of their bench A/B (H100, session 57, results/2026-12-08-s57/a):
# 6144x4096 M=16 11.62 vs 8.99 us, M=64 18.48-25.08 vs 14.93; 4096x14336 M=64 32.66-35.25 vs 21.58.  Their grids
# cannot fill the SMs without splits: 96 blocks of 64 rows on 132 SMs, one per SM (the direct tile stages its whole
# K range of x).  The rules were removed; the kernels keep K-warpgroups as an execution choice ("_wk2" / "_wk4" on a
# direct or staged wgmma tile), tested on the emulation and on the GPU.)


def narrow16_polled(bits: int, k: int) -> bool:
    """Whether the rule above holds for a narrow layer of `bits`-bit integer codes and K columns."""
    if os.environ.get("HUMMING_NARROW16_POLLED", "").strip():
        return bool(env_int("HUMMING_NARROW16_POLLED", 0, 0, 1)) and bits in (3, 4)
    return bits == 4 and 0 < k <= 4096


def _direct_defaults(arch: str, bucket: int, bits: int, float_family: bool, k: int, n: int, group: int = 0,
                     cluster: bool = False, sms: int = 0, prefetch: bool = True, zero: int = 0,
                     bulk_decode: bool = True):
    """The direct kernel (gemm_wna16_direct.cuh) where it measured faster than the cp.async kernels on the H200
    (session 9, results/h200-2026-12-01-s9/b_sweep_*.txt; int4 g128 unless noted; us on 6144x4096 / 28672x4096 /
    4096x14336 against the previous default).  sm_90a only: the winners use wgmma math, and the mma.sync variant was
    measured on the H200 alone."""
    if arch != "sm_90a":
        return []
    narrow = 0 < n < WIDE_N
    if 16 < bucket <= 32:
        # 17-32 tokens ran the mma.sync cp.async kernel: 12.8-13.2 / 41.3 / 23.6 vs 18.3 / 48.3 / 26.5; big layers take
        # the bulk kernel since session 46 (decode_bulk_choice)
        direct = KernelChoice(32, 8, 1, 1, 256, 4, "direct", "wgmma")
        bulk = bulk_decode and decode_bulk_choice(bucket, n, k, bits, group, float_family, zero)
        return [bulk, direct] if bulk else [direct]
    if 8 < bucket <= 16:
        bulk = bulk_decode and decode_bulk_choice(bucket, n, k, bits, group, float_family, zero)
        if bulk:   # (the biggest layers; the direct choices below stay as its fallbacks)
            return [bulk] + _direct_defaults(arch, bucket, bits, float_family, k, n, group, cluster, sms, prefetch,
                                             zero, bulk_decode=False)
        pfc = prefetch and wgmma_prefetch_decode_choice(n, k, 16, bits, group, float_family, sms or arch_info(arch).sms)
        if pfc:
            return [pfc]
        if cluster and n >= WIDE_N and 0 < k <= 8192 and bits in (3, 4) and not float_family:
            # wide layers, 9-16 tokens: 256 weight rows per block, two K splits summed by a 2-block thread block
            # cluster in distributed shared memory (no workspace round trips at the end).  28672x4096 M=16, us vs the
            # cp.async wgmma default: int4 27.1 vs 29.6 (session 11, results/h200-2026-12-01-s11/b_sweep_m16.txt;
            # again in session 12, results/h200-2026-12-01-s12/b_sweep_m16i4.txt), int3 28.6 vs 29.3; int8 (36.5 vs
            # 47.8) and MXFP4 (34.3 vs 40.0 for its direct default) lose (a_sweep_m16_*.txt); clusters of 4 / 8
            # lost.  K <= 8192 keeps the 16-row x range in shared memory.
            return [KernelChoice(16, 8, 2, 1, 256, 2, "direct", "wgmma", cluster=2)]
        if float_family and (bits == 8 or (bits == 4 and 0 < group < 32)):
            # float 8-bit codes (fp8 weight-only) and 16-column groups (NVFP4): the cp.async wgmma tile below
            # (bt16_wn8_tm2_wk1_ak1_s4_wgmma) on every layer.  Session 27, M=16, us, 6144x4096 / 28672x4096 /
            # 4096x14336, vs the MXFP4 direct tile they took before (results/h200-2026-12-04-s27/b/sweep_*_m16.txt):
            # e4m3 channel 11.5 / 37.1 / 21.1 vs 15.3 / 46.3 / 25.6, e4m3 128x128 blocks 11.9 / 38.8 / 21.4 vs 15.4 /
            # 47.3 / 25.6, NVFP4 10.9 / 37.1 / 18.9 vs 12.3 / 44.9 / 20.9 (the direct kernel stages a block's whole
            # K range of scales; 16-column groups make that four scale rows per atom)
            return []
        if float_family:
            # MXFP4: 11.9 / 33.8 / 19.9 vs 12.2 / 35.2 / 20.9 (int4 ties, int3 / int8 lose: they keep the default)
            return [KernelChoice(16, 8, 2, 1, 256, 2, "direct", "wgmma")]
        if bits in (3, 4) and narrow and bulk_decode and narrow16_polled(bits, k):
            # (session 54) the 128-row tile below with the polled split-K end (plan.splitk_poll_applies): on an H100
            # 6144x4096 / 4096x14336 M=16 9.0 / 16.1 us (twice) vs 9.9 / 16.4 for the 256-row tile on the ticket
            # path, 9.7 / 16.7 for this tile on it (results/2026-12-07-s54/c); the bench's A/B at M = 9 / 16
            # (s54/d): 6144x4096 8.77 / 9.00 vs 9.41 / 9.78, 4096x14336 16.06 / 16.03 vs 15.86 / 16.32 -- so on by
            # default for int4 with K <= 4096 only.  On the H200 the ticket path had the 256-row tile ahead (9.1 /
            # 15.4 vs 9.6 / 16.7, session 13); the polled end there is unmeasured.  Dense layers only (bulk_decode:
            # the MoE caller passes False; its plans keep the ticket path).
            return [NARROW16_POLLED_CHOICE]
        if bits in (3, 4) and narrow:
            # int3 / int4 on narrow layers: the same 256-row tiles since the split-K sums are shared by up to 4
            # blocks (splitk_epilogue's reducers, session 13): 6144x4096 / 4096x14336 M=16, us, vs the 128-row
            # choice below: int4 9.1 / 15.4 vs 9.6 / 16.7, int3 9.4 / 15.9 vs 9.5 / 18.0 (int8 loses: 14.9 / 24.4
            # vs 13.6 / 22.2; results/h200-2026-12-01-s13/d_sweep_r4_m16.txt, d_sweep_fmt_*.txt)
            return [KernelChoice(16, 8, 2, 1, 256, 2, "direct", "wgmma")]
        if bits in (3, 4, 8) and narrow:
            # int4: 9.8 / - / 17.0 vs 11.1 / - / 18.3; int3 9.7 / - / 17.5 vs 10.9 / - / 17.6; int8 channel 14.0 / - /
            # 22.9 vs 14.2 / - / 24.6 (results/h200-2026-12-01-s9/d_sweep_*_m16.txt).  28672x4096 loses (int4 32.5 vs
            # 29.3) and keeps the cp.async wgmma kernel.
            return [KernelChoice(16, 8, 1, 1, 256, 4, "direct", "wgmma")]
        return []
    if bucket <= 8:
        pfc = prefetch and wgmma_prefetch_decode_choice(n, k, 8, bits, group, float_family, sms or arch_info(arch).sms)
        if pfc:
            return [pfc]
        if narrow and 0 < k <= 4096 and ((not float_family and bits in (3, 4)) or (float_family and bits == 4)):
            # 6144x4096: int4 7.7 vs 8.3, int3 7.7 vs 8.4, MXFP4 9.0 vs 9.6 (one wgmma m64n8k16 warpgroup pair per 128
            # rows, 8 K splits; results/h200-2026-12-01-s9/d_sweep_*_m1.txt -- the other two shapes lose for int3 /
            # MXFP4, which keep the cp.async kernel there).  NVFP4 (16-column groups) since session 27: 9.2 vs 11.7
            # (results/h200-2026-12-04-s27/b/sweep_nv_m1.txt)
            return [DECODE_WGMMA_PAIR]
        # (wide layers where 224-row blocks spread the rows more evenly over the SMs than 128-row ones: see bits == 4)
        spread_224 = (n >= WIDE_N and sms and _decode_grid_fills_sms(n, 224, sms)
                     and plan_row_waves(-(-n // 224), sms, 224, 1) < plan_row_waves(-(-n // 128), sms, 128, 1))
        if float_family:
            # Session 27, M=1, us, 6144x4096 / 28672x4096 / 4096x14336, vs the cp.async kernels they ran before
            # (results/h200-2026-12-04-s27/b/sweep_{f8c,f8b,nv}_m1.txt):
            if bits == 8 and (n >= WIDE_N or k > 4096):
                # float 8-bit codes on wide / long-K layers: one wgmma m64n8k16 warpgroup pair per 128 rows.  e4m3
                # channel - / 36.5 / 20.8 vs - / 41.7 / 20.9 (6144x4096 ties: 11.8 either way); with 128x128 block
                # scales (128-column groups) the 224-row mma.sync blocks win on the wide layer: 35.2 vs 38.9 for the
                # wgmma blocks and 41.6 for the old default (4096x14336: 20.3 vs 20.7)
                if group and spread_224:
                    return [DECODE_224, DECODE_WGMMA_PAIR]
                return [DECODE_WGMMA_PAIR]
            if bits == 4 and 0 < group < 32 and spread_224:
                # NVFP4 on wide layers: the 224-row blocks, 29.1 vs 31.0 (4096x14336 keeps the cp.async kernel: 16.8)
                return [DECODE_224]
            return []
        if bits == 4:
            # 22.7 vs 22.9 on 28672x4096, 12.2 vs 12.9 on 4096x14336 (two K-warps per 128-row block)
            base = KernelChoice(8, 4, 2, 2, 256, 4, "direct")
            # (the busiest SM's rows: blocks on one SM share its bandwidth and issue slots -- plan_row_waves over
            # the SMs of one-split grids)
            if spread_224:
                # wide layers where 224-row blocks (fourteen warp rows of one atom row, two K-warps: 28 warps, one
                # block per SM) spread the rows more evenly over the SMs: 28672x4096 is 224 blocks of 128 rows on 132
                # SMs (92 SMs stream two, 40 one) but 128 blocks of 224 rows.  int4, M=1, us, same run
                # (results/h200-2026-12-02-s20/): 20.5 vs 22.5 (b_sweep_m1_wide.txt; seven warp rows of two atom
                # rows, 14 warps: 21.2, and 21.0 vs 22.3 in a_sweep_m1_balance.txt); the narrow layers lose with
                # such blocks (6144x4096 8.1-9.3 vs 7.7, 4096x14336 13.6-16.0 vs 12.2).
                return [DECODE_224, base]
            return [base]
        if bits == 8 and (n >= WIDE_N or k > 4096):
            # int8 channel: 36.3 vs 39.5 on 28672x4096, 21.0 vs 21.9 on 4096x14336 (6144x4096 loses: 12.0 vs 10.8)
            return [KernelChoice(8, 4, 2, 1, 256, 4, "direct", "wgmma")]
    return []


def _eight_bit_defaults(arch: str, bucket: int, k: int, n: int, bits: int):
    """8-bit codes (integer and float) on sm_90a: the 128-row x 256-token TMA tile (one m64n256k16 per k16 step and
    warpgroup, four one-atom stages -- the tile the <= 4-bit codes run from 513 tokens) where M fills whole 256-token
    tiles: 129-256 tokens on wide layers and on layers with K > 4096, 385-512 tokens on every layer.  257-384 tokens
    keep the bulk kernel (three 128-token tiles beat two 256-token ones padded to 512), and from 513 tokens the layer
    takes expand + cuBLAS (default_prefill_m).  Session 26, us, 6144x4096 / 28672x4096 / 4096x14336, tile vs the
    default it replaced (results/h200-2026-12-04-s26/c/sweep_i8_a.txt, sweep_f8_a.txt):
    - int8 channel, M=256: 37.7 / **114.2** / **56.6** vs the bulk kernel 35.1 / 125.5 / 63.9 (narrow K <= 4096
      layers keep it); fp8 e4m3 channel: 38.1 / **113.4** / **56.4** vs 35.5 / 136.2 / 66.0.
    - int8, M=512: **54.8** / **227.1** / **96.5** vs 55.1 / 241.0 / 113.8 (expand + cuBLAS 55.4 / 245.5 / 122.6);
      fp8: **54.9** / **223.8** / **95.8** vs 54.6 / 241.5 / 112.8.
    - M=384: the bulk kernel 44.5 / 183.3 / 87.2 vs the tile 54.0 / 226.4 / 92.8.
    The 192-row sibling (wide_rows_sibling: five stages) is not offered to 8-bit codes (plan_alternatives: ptxas
    serializes its wgmmas for lack of registers; with group scales its stages would not fit shared memory), so the
    plan's only alternative here is the stream-K twin on wave cliffs."""
    if arch != "sm_90a" or bits < 8:
        return []
    tile = KernelChoice(256, 8, 1, 1, 1, 4, mma="wgmma", tma_x=True)
    if (128 < bucket <= 256 and (n >= WIDE_N or k > 4096)) or 384 < bucket <= 512:
        return [tile]
    return []


def _bulk_defaults(arch: str, bucket: int, k: int, n: int, float_family: bool = False, bits: int = 4):
    """The warp-specialized bulk wgmma kernel (gemm_wna16_sm90.cuh: a producer warpgroup, persistent stream-K) where
    it measured faster than the cp.async wgmma kernels on the H200: 129-256 tokens on narrow layers with K <= 4096
    (codes wider than 4 bits), and 8-bit codes at 257-384 tokens on every layer (below).
    - K <= 4096, two math warpgroups (128 rows): the 96 128 x 128 tiles of 6144 rows at M = 256 leave a split-K grid
      unbalanced over 132 SMs.  Session 10 (results/h200-2026-12-01-s10/), 6144x4096, us, bulk vs the cp.async
      default: int4 M=128 25.4 vs 28.5, M=256 35.6 vs 41.2; M=256 int3 36.2 vs 41.7, int8 37.7 vs 39.2, MXFP4 39.1
      vs 44.1.  From 257 tokens the 256-row cp.async tiles win (M=512 55.7 vs 62.5, session 12).
    - (K > 4096 and wide layers, 129-256 tokens, 8-bit integer codes: three math warpgroups from session 12 / 14 to
      session 25 -- 4096x14336 M=256 int8 62.2 vs 72.3, 28672x4096 132.4 / 123.0 vs 140.1 / 137.9 against the
      256-row split-K tiles; since session 26 _eight_bit_defaults' 128-row x 256-token TMA tile serves them.)
    The wide layers lose for codes of <= 4 bits (28672x4096 M=256: 124-131 vs 115)."""
    if arch == "sm_90a" and bucket > 256 and bits >= 8:
        # (float codes too since session 26: fp8 e4m3 measured like int8 in every cell; at M = 300 / 384, us, vs the
        # 256-row stream-K tile they used: e4m3 45.0 / 172.8 / 86.4 and 45.3 / 181.8 / 85.0 vs 54.2 / 189.2 / 99.5
        # and 54.5 / 201.1 / 101.4, e5m2 likewise -- results/h200-2026-12-04-s26/g/sweep_*_m300_384.txt.  257-384 tokens
        # keep it; 385-512 take _eight_bit_defaults' tile, 513+ expand + cuBLAS -- this entry serves them only where
        # HUMMING_PREFILL_M is raised.)
        # 8-bit integer codes from 257 tokens, every layer: M=512, us, vs the 256-row cp.async tiles (stream-K when
        # wide): 6144x4096 64.1 vs 67.9, 28672x4096 254.1 vs 263.7, 4096x14336 120.0 vs 124.3 (session 12,
        # results/h200-2026-12-01-s12/d_sweep_m512_uint8.txt); int3 / int4 / MXFP4 lose there.  Three math
        # warpgroups since session 14 (both kernels with the register join of stream_k.cuh), two runs: 28672x4096
        # 244.5 / 234.2 vs 265.5 / 288.4, 4096x14336 115.6 / 110.2 vs 122.6 / 118.7, 6144x4096 59.4 / 52.9 vs 64.8 /
        # 63.8 (results/h200-2026-12-01-s14/c_sweep_sk_wuint8b128.txt, d_sweep_m256_wuint8b128.txt)
        return [KernelChoice(128, 12, 1, 1, 1, 4, "bulk", "wgmma"), KernelChoice(128, 8, 1, 1, 1, 6, "bulk", "wgmma")]
    if arch != "sm_90a" or not 128 < bucket <= 256 or not 0 < n < WIDE_N:
        # (65-128 tokens ran the bulk kernel too until session 13: once several blocks share the split-K sums, the
        # cp.async wgmma kernel's ticketed splits win there -- 6144x4096 M=128, us: int4 24.0 vs 25.4, int3 24.0 vs
        # 25.7, int8 26.2 vs 28.1, MXFP4 24.2 vs 27.1; results/h200-2026-12-01-s13/e_sweep_m128_256_*.txt)
        return []
    if 0 < k <= 4096 and bits > 4:
        # (codes of 4 bits or fewer take the 256-row stream-K tiles here since session 14: choose_kernel)
        return [KernelChoice(128, 8, 1, 1, 1, 6, "bulk", "wgmma")]
    # (K > 4096: int3 / int4 took the three-warpgroup kernel until session 13 -- the 256-row cp.async tiles won once
    # several blocks shared the split-K sums, 4096x14336 M=256 int4 60.1 vs 61.9, int3 59.6 vs 65.9 --, 8-bit integer
    # codes until session 25)
    return []


def choose_kernel(arch: str, bucket: int, bits: int, group: int = 0, zero: int = 0, sms: int = 0,
                  k: int = 0, pipeline: str = "", n: int = 0, float_family: bool = False,
                  cluster: Optional[bool] = None, prefetch: bool = True, bulk_decode: bool = True) -> KernelChoice:
    """The kernel for one M bucket.  Small M streams weights with the cp.async kernel and split-K; large M uses wider
    token tiles and more rows per warp to reuse each dequantized fragment across more MMAs.

    ``zero``: the zero-point mode -- 0 / False none, 1 / True integer zero points, 2 float zero points (a layer passes
    FormatParams.zero_mode; a bool still means "none" / "some").

    ``pipeline`` (default ``$HUMMING_PIPELINE``, else "cp_async") = "bulk" selects the sm_90+ bulk-copy pipeline
    (persistent stream-K, gemm_wna16_sm90.cuh) for M <= 64 -- on sm_90a at every M, with wgmma math warpgroups from
    33 tokens up -- when K allows it (``k``: the layer's K; 0 = any; ``n``: its N, 0 = any);
    "direct" the global -> register decode kernel (gemm_wna16_direct.cuh) for M <= 16 (M <= 32 on sm_90a) everywhere
    (the bulk pipeline is correct on the H200 but slower there, NOTES.md).  Without a pipeline named, sm_90a takes the
    direct kernel and, from 65 tokens on narrow layers, the bulk wgmma kernel in the cases they measured faster
    (_direct_defaults, _bulk_defaults; ``float_family``: the weights are a float format).  ``prefetch`` False: no
    prefetching wgmma decode (wgmma_prefetch_decode_choice; its grid rule assumes one dense GEMM per launch -- the
    expert-indexed MoE kernels pass False).  ``bulk_decode`` False: no bulk decode on big layers at 9-32 tokens
    (decode_bulk_choice; the MoE kernels need grids of one token tile per block and pass False)."""
    only = pipeline or os.environ.get("HUMMING_PIPELINE", "")
    info = arch_info(arch, sms)
    float_zero_small_groups = zero == 2 and 0 < group < 128     # (FLOAT_ZERO_TMA, FLOAT_ZERO_ONE_ATOM)
    bucket = m_bucket(bucket)   # any M maps to its bucket
    use_cluster = cluster_defaults_enabled() if cluster is None else cluster   # HUMMING_CLUSTER, or the caller's
    if only and only not in PIPELINES:
        raise ValueError(f"HUMMING_PIPELINE must be one of {PIPELINES}, got {only!r}")
    cands = []
    if _has_bulk(arch) and only == "bulk":
        cands += [c for c in _bulk_candidates(bucket, arch) if c.runs_shape(k or c.block_k)]
    if only == "direct":
        cands += [c for c in _direct_candidates(bucket, arch) if c.runs_shape(k or c.block_k, group)]
    # an opt-in pipeline that has no choice here (M bucket, K, group, shared memory) falls back to the cp.async kernel
    cands = [c for c in cands if _fits(c, info, bits, groups_per_stage(group, c.block_k), zero, group)]
    # cp.async kernel, from `python -m vllm_humming.tuning.sweep` on an H200 (results/sweep-h200.json): best geomean
    # over the three default shapes per bucket; the later entries are fallbacks for smaller shared memory / wider codes.
    if only not in ("bulk", "direct") or not cands:
        if not only:
            cands += [c for c in _direct_defaults(arch, bucket, bits, float_family, k, n, group, use_cluster, info.sms,
                                                  prefetch, int(zero), bulk_decode)
                      if c.runs_shape(k or 64, group)]
            cands += [c for c in _eight_bit_defaults(arch, bucket, k, n, bits) if c.runs_shape(k)]
            cands += [c for c in _bulk_defaults(arch, bucket, k, n, float_family, bits) if c.runs_shape(k)]
        if arch == "sm_90a" and bucket > 32:
            # wgmma (H100/H200): from 64 tokens up the mma.sync kernels are bound by shared-memory reads of x (one
            # ldmatrix per 16 weight rows) and by latency per stage; wgmma reads x once per 64 rows straight from
            # shared memory.  Session-4 sweeps (results/h200-2026-11-29d/r5_*): M=64 23.8 / 52.3 / 38.7 us on the
            # three default shapes vs 26.7 / 84.4 / 42.7 with mma.sync; M=256 129 us on 28672x4096 vs 215 us for the
            # mma.sync kernel and 168 us for expand + cuBLAS (r1_bench_int4_m256_m1024_expand_cublas.log).
            # Codes of <= 4 bits from 33 tokens: the activation tile through the TMA unit (tma_x: one box copy per
            # atom issued by one thread instead of 16-byte cp.async pieces from every math thread), each rule's tile
            # first with it, then without (session 17).  Same run, int4, us, 6144x4096 / 28672x4096 / 4096x14336,
            # the old default vs the new one (results/h200-2026-12-02-s17/b_sweep_tma_*.txt): M=64 15.4 / 38.9 /
            # 22.4 vs 14.9 / 36.8 / 21.8; M=128 22.0 / 56.1 / 35.7 vs 20.9 / 53.7 / 30.9; M=256 31.1 / 107.8 /
            # 56.9 vs 28.5 / 106.7 / 52.1.  (With the copies merely skipped, session 17's call A: M=256 32.4 / 108.8
            # / 58.2 -> 27.5 / 96.8 / 53.6 -- the instructions, not the bytes, were the cost.)  Call C, int3 / MXFP4:
            # M=64 14.9 / 37.8 / 21.6 vs 15.5 / 37.5 / 22.4 and 16.0 / 43.2 / 24.3 vs 16.7 / 43.6 / 25.1; M=256
            # 28.0 / - / 53.6 vs 31.6 / - / 56.3 and 30.7 / - / 56.8 vs 34.4 / - / 61.8.  The wide layer's stream-K
            # grids (129+ tokens) gain nothing from it (M=256 int4 106.7 vs 107.8, int3 108.9 vs 107.2, MXFP4 114.7 vs
            # 114.5; M=512 int4 217.1 vs 214.9) and keep the cp.async copies.  8-bit codes take it at 33-64 tokens
            # (int8: 16.1 / 45.8 / 25.7 vs 16.8 / 48.7 / 26.4, c_sweep_m64_i8.txt).
            tma = bits <= 4 or bucket <= 64
            if bucket <= 64:
                if float_family and bits == 4 and group == 16 and (n >= WIDE_N or 0 < k <= 4096):
                    # NVFP4 (16-column e4m3 group scales: four scale rows per atom), 33-64 tokens: 128-row tiles on
                    # wide layers, one-atom stages on narrow K <= 4096 layers.  Same run, us, M = 48 / 64 (session
                    # 30, results/h200-2026-12-04-s30/b/sweep_m64_nvfp4.txt): 28672x4096 40.2 / 41.4 vs 42.6 / 44.0
                    # for the 256-row tile below, 6144x4096 14.2 / 15.8 vs 14.5 / 16.7 for two-atom stages;
                    # 4096x14336 keeps the two-atom tile (21.9 / 22.5 vs 23.8 / 24.6)
                    cands.append(KernelChoice(64, 8, 1, 1, 2 if n >= WIDE_N else 1, 4, mma="wgmma", tma_x=True))
                # codes of <= 4 bits: two atoms per stage (session 15 for int4, session 16 for int3 / MXFP4, below)
                two_atoms = bits <= 4
                if n >= WIDE_N:
                    # wide layers, 33-64 tokens: 256 rows per block (two m64 tiles per warpgroup: each x fragment
                    # feeds two MMAs), 112 blocks for 28672 rows.  28672x4096 M=64, us: int4 42.2-42.8 vs 44.3-44.4,
                    # int3 42.5 vs 46.0, int8 49.6 vs 50.6, MXFP4 49.7 vs 50.6 (session 12,
                    # results/h200-2026-12-01-s12/b_sweep_m64wide.txt, c_sweep_m64w_*.txt; stream-K over the same
                    # tiles loses: 47.2); the narrow shapes lose (6144x4096 20.0 vs 16.9, 4096x14336 31.4 vs 28.0).
                    if two_atoms:
                        # two atoms per stage (half the per-stage barriers and waits): 28672x4096 M=64 / 48, us, int4
                        # 38.4 / 38.4 vs 42.0 / 40.1 (session 15, results/h200-2026-12-02-s15/g_sweep_i4_ak2_m64.txt);
                        # int3 37.3 / 36.1 vs 41.4 / 41.6, MXFP4 43.1 / 42.6 vs 48.7 / 47.7 (session 16,
                        # results/h200-2026-12-02-s16/a_sweep_ak2_m64_*.txt); int8 ties (49.4 vs 49.2), keeps one atom
                        if bulk_decode and _wide_bulk_64_serves(n, k, bits, group, float_family, int(zero), info.sms):
                            cands.append(WIDE_BULK_64)   # (one block per tile, session 52)
                        if tma:
                            cands.append(KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma", tma_x=True))
                        cands.append(KernelChoice(64, 8, 2, 1, 2, 4, mma="wgmma"))
                    if tma:
                        cands.append(KernelChoice(64, 8, 2, 1, 1, 4, mma="wgmma", tma_x=True))
                    cands.append(KernelChoice(64, 8, 2, 1, 1, 4, mma="wgmma"))
                if two_atoms:
                    # narrow layers, 6144x4096 / 4096x14336 M=64, us: int4 15.1 / 22.5 vs 15.4 / 24.2, int3 15.5 / 22.7 vs
                    # 15.6 / 24.7, MXFP4 16.8 / 24.8 vs 16.7 / 26.6 (same files; M=48 likewise); int8 loses (18.2 /
                    # 27.5 vs 16.9 / 26.1)
                    if tma:
                        cands.append(KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma", tma_x=True))
                    cands.append(KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma"))
                # (narrow layers with K <= 4096 ran two 2-block cluster splits in session 12: 6144x4096 M=64 int4
                # 16.0 vs 17.0 us; since the ticketed splits' sums are shared by several blocks (session 13) the five
                # ticketed splits below win: int4 15.2 vs 15.7, int3 15.6 vs 16.3, int8 17.0 vs 17.2, MXFP4 16.4 vs
                # 17.6 -- results/h200-2026-12-01-s13/d_sweep_r4_m64.txt, d_sweep_fmt_*.txt)
                if tma:
                    cands.append(KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma", tma_x=True))
                cands += [KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma"), KernelChoice(64, 8, 1, 1, 1, 4, mma="wgmma")]
            else:
                if 64 < bucket <= 256 and bits <= 4:
                    # codes of <= 4 bits, 65-256 tokens: two atoms per stage (session 16, results/h200-2026-12-02-s16/
                    # a_sweep_ak2_m256_*.txt; int4: session 15, g_sweep_i4_ak2_m256.txt), us, new vs old default,
                    # int4 / int3 / MXFP4 (8-bit codes tie or lose and keep the choices below):
                    if n >= WIDE_N and bucket > 128:
                        # wide, 129-256 tokens: 128 rows x 256 tokens (session 18: 28672x4096 M=256 102.8 vs 108.4
                        # us for the 256-row x 128-token stream-K tile, results/h200-2026-12-02-s18/c_sweep_bt256.txt;
                        # both compute 256 token rows per tile at any M in the bucket).  Split-K since session 20,
                        # when its warpgroups run decoupled (gemm_wna16.cuh): 97.1 vs 100.8 us for stream-K
                        # (results/h200-2026-12-02-s20/a_sweep_m256_*.txt); a grid on a wave cliff runs as the
                        # stream-K twin (the layer's plan, wave_cliff_twin).
                        cands.append(KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True))
                    if n >= WIDE_N:
                        # wide: 256-row tiles, three stages of two atoms; from 129 tokens as stream-K.  28672x4096
                        # M=128 55.7 / 52.9 / 59.7 vs 56.7 / 58.0 / 60.5; M=256 109.7 / 105.6 / 115.1 vs 112.9 /
                        # 117.3 / 120.3.  (Session 17, with TMA x tiles at M=256: split-K 105.3, stream-K 106.7 --
                        # stream-K kept for the wave cliffs of split-K grids between the measured M.)
                        if bucket <= 128:   # split-K (M=128: 53.7 vs 56.1 with TMA, b_sweep_tma_m128_256.txt)
                            cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", tma_x=True))
                        if bucket <= 128 or not float_zero_small_groups:   # (FLOAT_ZERO_TMA below)
                            cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=bucket > 128))
                    elif 0 < n:
                        # narrow, TMA x tiles (session 17): 128-row split-K tiles of four two-atom stages, whatever
                        # K -- 4096x14336 M=128 / 256 30.9 / 52.1 against 34.4 / 55.2 for the 256-row TMA tile and
                        # 35.7 / 56.9 for the old default; 6144x4096 20.9 / 28.5 vs 21.0 / 29.3 with three stages
                        cands.append(KernelChoice(128, 8, 1, 1, 2, 4, mma="wgmma", tma_x=True))
                    if 0 < n < WIDE_N and 0 < k <= 4096:
                        # narrow, K <= 4096: 128-row split-K tiles.  6144x4096 M=128 23.0 / 23.3 / 24.1 vs 24.4 /
                        # 24.1 / 24.1; M=256 32.8 / 33.3 / 35.0 vs 35.1 / 36.3 / 37.6 (stream-K)
                        cands.append(KernelChoice(128, 8, 1, 1, 2, 3, mma="wgmma"))
                    elif 0 < n < WIDE_N and k > 4096:
                        # narrow, K > 4096: 256-row split-K tiles.  4096x14336 M=128 35.8 / 35.2 / 37.4 vs 36.5 /
                        # 36.4 / 38.0; M=256 57.7 / 56.2 / 61.2 vs 60.1 / 60.2 / 62.8
                        cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma"))
                if bits <= 4 and (bucket > 512 or (bucket > 384 and n > 0)):
                    # (385-512 tokens on narrow layers since session 19, where both token tiles pad M to 512 rows:
                    # int4, us, M = 400 / 448, vs the 128-token stream-K default: 6144x4096 48.7 / 49.5 vs 52.3 / 52.7,
                    # 4096x14336 90.8 / 91.0 vs 103.9 / 106.0 -- results/h200-2026-12-02-s19/f_sweep_m400.txt.  The
                    # wide layer was mixed then, 207.5 / 211.3 vs 214.1 / 201.9; re-measured in session 28 it wins or
                    # ties everywhere, so every layer takes it: 28672x4096 int4 M = 400 / 448 / 512 195.9 / 192.2 /
                    # 196.2 vs 197.6 / 200.8 / 219.7, int3 M = 400 / 512 196.7 / 195.2 vs 195.8 / 214.9, MXFP4
                    # 203.2 / 203.8 vs 209.8 / 222.0; 57344x4096 int4 361.2 / 350.2 vs 385.5 / 427.9 --
                    # results/h200-2026-12-04-s28/d/sweep_wide_*.txt)
                    # codes of <= 4 bits, 513 tokens up to the prefill threshold (2047): 128 weight rows x 256 tokens
                    # per block -- one m64n256k16 per k16 step and warpgroup: half the MMA instructions and groups
                    # of the 256-row x 128-token tile at the same 128 accumulators, 166 registers instead of 255.
                    # int4, us, 6144x4096 / 28672x4096 / 4096x14336 (results/h200-2026-12-02-s18/c_sweep_bt256.txt),
                    # vs the 256-row split-K TMA tile / the old default (stream-K 256-row): M=512 49.9 / 201.6 / 94.7
                    # vs 52.6 / 214.2 / 96.9 / 52.8 / 209.0 / 105.5; M=1024 99.9 (87.6 as the stream-K twin, see
                    # wave_cliff_twin) / 373.4 / 180.9 vs 105.2 / 386.9 / 185.7; M=2048 167.2 / 807.8 / 395.8 vs
                    # 166.9 / 812.5 / 382.1.
                    cands.append(KernelChoice(256, 8, 1, 1, 2, 3, mma="wgmma", tma_x=True))
                if bucket > 256:
                    # 257 tokens up to the prefill threshold: 256 weight rows per block on every layer.  M=512, us:
                    # 6144x4096 55.7 vs 62.5 (bulk), 4096x14336 107.4 vs 116.3 (128-row tiles); the wide layer as
                    # stream-K (132 persistent blocks over 448 tiles' stages): 213.2 vs 245.9 split-K (session 12,
                    # results/h200-2026-12-01-s12/c_sweep_sk256.txt; at M=256 the two tie, 115.9 vs 115.1).
                    # Five stages since session 14 for codes of <= 4 bits (the stream-K end's register join, same
                    # run): M=512 28672x4096 int4 217.7 / 213.9 vs 231.2 / 228.5, int3 221.8 / 224.1 vs 238.2 / 230.8;
                    # 4096x14336 int4 108.6 / 107.0 vs 113.5 / 109.3, MXFP4 116.9 / 115.9 vs 126.9 / 121.3; 6144x4096
                    # ties (results/h200-2026-12-01-s14/c_sweep_sk_*.txt, d_sweep_m256_*.txt).
                    # Session 16: codes of <= 4 bits in three stages of two atoms, M=512 int4 / int3 / MXFP4, us:
                    # 28672x4096 209.8 / 201.8 / 222.7 vs 223.3 / 238.7 / 242.3, 4096x14336 107.0 / 102.5 / 110.5 vs
                    # 108.8 / 117.0 / 118.4, 6144x4096 53.6 / 52.5 / 56.5 vs 52.6 / 55.2 / 56.9
                    # (results/h200-2026-12-02-s16/b_sweep_ak2_m512_*.txt)
                    if bits <= 4 and not float_zero_small_groups:
                        if 0 < n < WIDE_N:   # TMA x tiles on narrow layers: M=512 52.4 / 104.2 vs 53.8 / 105.0 (s17)
                            cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True, tma_x=True))
                        cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True))
                    elif bits <= 4 and not (bits == 3 and group == 32):
                        # FLOAT_ZERO_TMA: codes with float zero points and groups of < 128 columns (two or more groups
                        # per two-atom stage) take the two-atom tile with TMA x tiles on every layer, wide ones too.
                        # Without TMA x tiles the math threads' per-atom code with a float zero term per group does
                        # not fit in 255 registers: ptxas keeps it out of line (a call with an 864-920 byte stack),
                        # serializes every wgmma (C7510), NVRTC takes 20-27 s, and the kernel runs 50-60x slower --
                        # uint4 g32 M=300 2069 / 9006 / 4758 us (results/h200-2026-12-04-s28/b/sweep_fzp_*.txt).  With
                        # TMA x tiles it compiles clean (255 registers, no call) for every code of <= 4 bits with
                        # 16-64-column groups, bf16 and fp16, except 3-bit codes with 32-column groups
                        # (scripts/ptxas_choice.py, session 28), and it is the fastest of the three tiles measured: uint4
                        # g32 / g64 + float zero, us, vs the one-atom tile below: M=300 44.2 / 155.7 / 82.4 vs 45.9 /
                        # 176.5 / 89.5 (g32), 44.0 / 153.6 / 82.1 vs 45.1 / 173.5 / 113.7 (g64); the wide layer at
                        # M=512 214.3 / 212.4 vs 252.6 / 245.4 (since session 28 every layer takes the 256-token
                        # tile at 385-512 tokens where its stages fit, above).
                        cands.append(KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True, tma_x=True))
                    # (FLOAT_ZERO_ONE_ATOM: uint3 g32 with float zero points, whose two-atom tiles ptxas serializes
                    # with or without TMA x tiles, takes this one-atom tile; it compiles clean in ~2.5 s, session 27.)
                    cands.append(KernelChoice(128, 8, 2, 1, 1, 5 if bits <= 4 else 4, mma="wgmma", stream_k=True))
                if 128 < bucket <= 256 and 0 < n < WIDE_N and 0 < k <= 4096 and bits <= 4:
                    # narrow layers, K <= 4096, codes of <= 4 bits, 129-256 tokens: stream-K over 256-row tiles (48
                    # tiles of 6144 rows split over 132 blocks) once a split tile's finisher sums the parked parts in
                    # its registers (session 14); 6144x4096 M=256, two runs, us, vs the bulk kernel: int4 34.8 / 34.9
                    # vs 36.3 / 37.4, int3 36.0 / 35.8 vs 36.4 / 37.7, MXFP4 37.1 / 36.6 vs 39.3 / 40.8 (same files).
                    # (Since session 16 the two-atom 128-row split-K tiles above come first: this is their fallback.)
                    cands.append(KernelChoice(128, 8, 2, 1, 1, 5, mma="wgmma", stream_k=True))
                if bucket == 128 and n >= WIDE_N:
                    # wide layers, 65-128 tokens: the same 256-row tiles (112 blocks of 28672 rows at one per SM,
                    # against 224 blocks of 128-row tiles that read every activation stage twice as often).
                    # 28672x4096 M=128 int4, us: 56.1 vs 63.3 (session 15, results/h200-2026-12-02-s15/c_sweep_i4_m128.txt;
                    # formats and M = 72 / 96 in e_sweep_wide_*.txt); narrow layers tie or lose (4096x14336 35.8 vs
                    # 35.9, 6144x4096 25.7 vs 24.1).  (Codes of <= 4 bits take the two-atom tile above since session 16.)
                    cands.append(KernelChoice(128, 8, 2, 1, 1, 4, mma="wgmma"))
                if bucket > 128 and (n >= WIDE_N or (bucket <= 256 and 0 < n and k > 4096)):
                    # wide layers, 129+ tokens: 256 weight rows per block (two m64 tiles per warpgroup, one wgmma
                    # group per k16 step) halve the activation re-reads; 28672x4096 int4 M=256 112.6 vs 125.1 us, but
                    # 6144 / 4096 rows lose 3-7 % (too few tiles) -- session-7 sweep, results/h200-2026-11-30-s7/.
                    # Narrow layers with K > 4096 at 129-256 tokens since session 13 (split-K sums shared by several
                    # blocks): 4096x14336 M=256 int4 60.1 vs 61.9 (bulk), int3 59.6 vs 65.9, MXFP4 61.9 vs 66.1 (128-row
                    # tiles); int8 keeps the bulk kernel (_bulk_defaults) -- e_sweep_m128_256_*.txt
                    cands.append(KernelChoice(128, 8, 2, 1, 1, 4, mma="wgmma"))
                cands += [KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma"), KernelChoice(128, 8, 1, 1, 1, 3, mma="wgmma")]
        if arch == "sm_90a" and 8 < bucket <= 16:
            # 9-16 tokens: wgmma m64n16k16 (256 weight rows per block, two m64 tiles per warpgroup).  At M=16 the
            # mma.sync kernel waits on its math pipe on the H200 (ncu: math-pipe throttle and fixed-latency stalls,
            # 16 warps per SM).  Session-8 sweep (results/h200-2026-11-30-s8/g_*), us: int4 11.0 / 29.3 / 18.2 vs
            # 11.2 / 30.9 / 18.0; int8 14.3 / 36.6 / 24.3 vs 14.5 / 45.8 / 24.9.
            cands.append(KernelChoice(16, 8, 2, 1, 1, 4, mma="wgmma"))
        if bucket <= 8 and 0 < n < WIDE_N and (group == 0 or group >= 128):
            # narrow layers, channel or >= 128-column groups: two K-warps over two-atom stages halve the per-stage
            # barriers per weight byte (the top stall of the M=1 kernel under ncu, session 7).  Session-8 sweep
            # (results/h200-2026-11-30-s8/c_*): int4 6144x4096 8.2 vs 8.6 us, 4096x14336 12.7 vs 12.9; int3 8.3 vs 8.3,
            # 12.7 vs 13.1; int8 (a ring of three) 10.8 vs 12.0, 21.6 vs 22.1.  28672x4096 loses 1-6 % and MXFP4
            # (32-column groups) loses or ties on every shape, so they keep the one-warp stages below.
            cands.append(KernelChoice(8, 4, 2, 2, 2, 3 if bits >= 8 else 4))
        if bucket <= 8:
            if bits >= 8:
                # 8-bit codes: a stage is twice int4's bytes, and a ring of two (16 KB of W per block, like int4's
                # four) won on every default shape: 12.3 / 40.4 / 21.8 us vs 12.8 / 43.3 / 22.9 with four stages
                # (results/h200-2026-11-30-s6/b_sweep_int8_stdout.txt)
                cands.append(KernelChoice(8, 4, 2, 1, 1, 2))
            cands += [KernelChoice(8, 4, 2, 1, 1, 4), KernelChoice(8, 4, 2, 1, 1, 3), KernelChoice(8, 4, 2, 1, 1, 2)]
        elif bucket <= 16:
            # 256 rows per block (8 x 2 warps, two atom rows each, both K halves of a two-atom stage), a ring of
            # three: best or within 3 % of the best on every default shape for int3 / int4 / int8 / MXFP4 (session-6
            # sweeps, results/h200-2026-11-30-s6/f_sweep_m16_4formats.log; 28672x4096 int3 29.0 vs 35.0 us,
            # int4 31.7 vs 34.1, int8 46.4 vs 52.1, MXFP4 35.3 vs 37.7 against the 128-row choice below)
            cands.append(KernelChoice(16, 8, 2, 2, 2, 3))
            cands += [KernelChoice(16, 8, 1, 2, 2, 4), KernelChoice(16, 8, 1, 2, 2, 3), KernelChoice(16, 4, 1, 2, 2, 3)]
        elif bucket <= 32:
            cands += [KernelChoice(32, 8, 1, 2, 2, 4), KernelChoice(32, 8, 1, 2, 2, 3), KernelChoice(32, 4, 1, 2, 2, 3)]
        elif bucket <= 64:
            cands += [KernelChoice(64, 8, 1, 2, 2, 4), KernelChoice(64, 8, 1, 2, 2, 3), KernelChoice(64, 4, 1, 1, 1, 3)]
        else:
            # M > 64: 64-token tiles, two m16 tiles per warp (each dequantized fragment feeds 16 MMAs).
            cands += [KernelChoice(64, 4, 2, 1, 1, 4), KernelChoice(64, 4, 2, 1, 1, 3), KernelChoice(64, 4, 1, 1, 1, 3)]
        cands.append(KernelChoice(min(bucket, 64) if bucket >= 16 else 8, 4, 1, 1, 1, 2))
    for c in cands:
        if _fits(c, info, bits, groups_per_stage(group, c.block_k), zero, group):
            if os.environ.get("HUMMING_PRINT_CHOICE") == "1":
                print(f"[humming] {arch} M<={bucket} bits={bits} group={group} zero={zero} K={k or 'any'}: "
                      f"{c.short()}")
            return c
    raise ValueError(f"no kernel choice fits {arch}'s shared memory for M bucket {bucket}, {bits}-bit weights")


def env_switch(name: str, default: bool = True) -> bool:
    """An on / off switch from the environment: "1" on, "0" off, unset or empty the default; anything else is an
    error naming it."""
    v = os.environ.get(name, "").strip()
    if not v:
        return default
    if v not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, got {v!r}")
    return v == "1"


def env_int(name: str, default: int, lo: int, hi: int) -> int:
    """An integer experiment knob from the environment, lo..hi; anything else is an error naming it."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not lo <= int(raw) <= hi:
        raise ValueError(f"{name} must be an integer {lo}..{hi}, got {raw!r}")
    return int(raw)


def choose_splits(choice: KernelChoice, n: int, k: int, m: int, info: ArchInfo, blocks_per_sm: int,
                  bits: int = 4) -> Tuple[int, int]:
    """(splits, atoms per split) for a call.

    Split K across blocks only as far as it takes to occupy the resident block slots once (blocks beyond one wave
    only add a tail), keep every split at least two pipeline stages long (a one-stage block never overlaps its loads
    with math), and not at all for large M, where the fp32 partials would cost more traffic than the weights.
    """
    n_tiles = -(-n // choice.block_n)
    m_tiles = -(-m // choice.bt)
    k_atoms = -(-k // 64)
    slots = max(1, info.sms * max(1, blocks_per_sm))
    base = n_tiles * m_tiles
    if choice.cluster:
        # exactly `cluster` splits (the cluster dims are compiled in); the last may be short or empty (an empty
        # segment runs no stage and adds zeros)
        per = -(-k_atoms // choice.cluster)
        return choice.cluster, -(-per // choice.atoms_k) * choice.atoms_k
    forced = env_int("HUMMING_DEBUG_SPLITS", 0, 1, 256)   # experiments (tuning.sweep --splits): this many splits
    if forced:
        return splits_of(k_atoms, choice.atoms_k, forced)
    if choice.wgmma:
        # wgmma kernels hold 1-4 blocks per SM, so a layer with fewer tiles than slots (N = 4096 at any M, 6144 up to
        # M ~ 512) leaves SMs idle without splits.  Split as far as the slots hold every block at once (rounding up
        # started a second, mostly empty wave: 6144x4096 M=256 ran 48 us with 3 splits, 37 us with none), keep >= 4
        # stages per split, and keep the fp32 partials (written + read once, L2-resident) under WGMMA_PARTIAL_BYTES.
        # A split is a whole number of stages: with two atoms per stage a split starting at an odd atom would put
        # two scale groups of 128 columns into one stage (the kernel reads one group per stage there).
        cap = max(1, WGMMA_PARTIAL_BYTES // max(1, m_tiles * choice.bt * n * 4))
        splits = max(1, min(slots // base, k_atoms // (4 * choice.atoms_k), cap, 16))
        per = -(-k_atoms // splits)
        per = -(-per // choice.atoms_k) * choice.atoms_k
        return -(-k_atoms // per), per
    if m > 64 or base * 5 >= slots * 4:
        return 1, k_atoms
    min_atoms = 2 * choice.atoms_k
    # fp32 partials (written and read once each) stay under half of the weight bytes
    # (HUMMING_DEBUG_SPLIT_RATIO, experiments: the 128 below; smaller allows more partial traffic)
    ratio = env_int("HUMMING_DEBUG_SPLIT_RATIO", 128, 1, 1 << 20)
    traffic_cap = max(1, (k * bits) // (ratio * max(1, m)))
    # At most 32 splits (HUMMING_DEBUG_MAX_SPLITS, experiments).  16 left 4096x14336 M=1 at 512 blocks for 924
    # slots; 28 splits fill them and enable the early PDL release there: 14.5 -> 13.4 us (session 7, H200)
    max_splits = env_int("HUMMING_DEBUG_MAX_SPLITS", 32, 1, 256)
    splits = max(1, min(slots // base, k_atoms // min_atoms, traffic_cap, max_splits))
    per = -(-k_atoms // splits)
    per = -(-per // choice.atoms_k) * choice.atoms_k
    return -(-k_atoms // per), per


def all_choices(arch: str, bits: int, group: int = 0, zero: int = 0, float_family=None):
    """Every choice the heuristics can emit for this (arch, bits, group, zero-point mode as in choose_kernel), under
    every pipeline setting -- what
    CI compiles: per M bucket the choice for a K the bulk pipeline runs and for one it does not (K = 64: one atom
    column, never a multiple of a two-atom stage), 4096 and a long one (8192), for any N, a narrow one and two wide ones
    (WIDE_N, 28672), for int and float weights (``float_family`` None) or the one given, with HUMMING_CLUSTER off and
    on, and with the bulk decode rule on and off (``bulk_decode``: what MoE experts launch)."""
    seen = []
    info = arch_info(arch)
    fams = (False, True) if float_family is None else (bool(float_family),)
    for pipeline in ("",) + PIPELINES:
        for b in M_BUCKETS:
            for k in (0, 64, 4096, 8192):
                for n in (0, WIDE_N // 2, WIDE_N, 28672):   # (28672: 224-row decode blocks, _direct_defaults)
                    for fam, cluster, bulk in itertools.product(fams, (False, True), (True, False)):
                        # (cluster: HUMMING_CLUSTER off / on; bulk False: the direct decodes the bulk decode rule
                        # replaces on big layers, which MoE experts and HUMMING_DECODE_BULK=0 still launch --
                        # e.g. the wide 9-16-token cluster decode)
                        c = choose_kernel(arch, b, bits, group, zero, k=k, pipeline=pipeline, n=n,
                                          float_family=fam, cluster=cluster, bulk_decode=bulk)
                        for _, alt in plan_alternatives(c, bits, float_family=fam):   # launched instead of c per M
                            # (a layer's plan drops an alternative its format's stages cannot fit: GemmLayer.
                            # _alternatives -- e.g. the 192-row sibling of 8-bit codes)
                            if alt not in seen and _fits(alt, info, bits, groups_per_stage(group, alt.block_k),
                                                         zero, group):
                                seen.append(alt)
                        if c not in seen:
                            seen.append(c)
    # the shared-memory prefetch alternatives of one token exist per layer shape (one block of 16 / 32 / 48 rows per
    # SM: smem_prefetch_decode_choice): the narrow layers that take each
    # (and the prefetching wgmma decode choices of 3-16 tokens: wgmma_prefetch_decode_choice; and the mid-size layers'
    # one-token tile: one_token_tiles)
    for n in (2048, 4096, 6144, MID_224_MIN_N):
        for fam in fams:
            for b in (1, 16):
                c = choose_kernel(arch, b, bits, group, zero, k=4096, n=n, float_family=fam)
                for alt in [c] + [alt for _, alt in plan_alternatives(c, bits, n=n, k=4096, group=group,
                                                                      float_family=fam, sms=info.sms)]:
                    if alt not in seen:
                        seen.append(alt)
    if arch == "sm_90a" and any(wgmma_prefetch_serves(bits, group, fam) for fam in fams):
        # every candidate of wgmma_prefetch_decode_choice (which one a layer takes depends on its N and K)
        seen += [c for cs in _WG_PREFETCH_CANDIDATES.values() for c in cs if c not in seen]
    return seen
