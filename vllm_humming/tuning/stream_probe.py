"""Time weight-stream skeletons (no dequant, no MMA) on the GPU: the rate a decode kernel's copy structure can reach.

The kernels are ``kernels/include/humming/stream_probe.cuh`` (``probe_ldg``: loads straight into registers, as the
direct decode kernels do; ``probe_bulk``: a producer thread filling a shared-memory ring with bulk copies for consumer
warps, as the warp-specialized bulk kernel does; ``probe_ring``: load warps filling such a ring with 16-byte cp.async
copies, a layout no kernel of ours has yet -- NOTES session 50).  Each case streams one buffer of a layer's int4 weight bytes per
launch, over enough copies of the buffer to exceed L2, timed as the bench times a layer (one CUDA graph calling every
copy once, 25 ms of warm-up replays, median of ``replays``; :func:`vllm_humming.tuning.sweep.time_graph`).

    python -m vllm_humming.tuning.stream_probe [--sizes wide,long,small] [--json out.json]

prints one line per case: the case, µs per launch and TB/s, for each buffer.  ``--cases`` picks a subset by name
prefix (``ldg``, ``bulk``, ``ring``).  Why this exists: NOTES session 49.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import sys
from dataclasses import dataclass, asdict
from typing import Dict, List, Optional, Sequence

__all__ = ["LdgCase", "BulkCase", "RingCase", "SIZES", "default_cases", "streamed_bytes", "probe_spec", "bulk_smem_bytes", "main"]

# weight bytes of the int4 layers of the table (packed codes only: N * K / 2)
SIZES: Dict[str, int] = {
    "wide": 28672 * 4096 // 2,    # 28672x4096
    "long": 4096 * 14336 // 2,    # 4096x14336
    "small": 6144 * 4096 // 2,    # 6144x4096
}


@dataclass(frozen=True)
class LdgCase:
    """probe_ldg: ``blocks_per_sm`` blocks of ``threads`` threads per SM, ``unroll`` 16-byte loads in flight per
    thread."""
    threads: int = 256
    unroll: int = 8
    blocks_per_sm: int = 2

    @property
    def name(self) -> str:
        return f"ldg_t{self.threads}_u{self.unroll}_b{self.blocks_per_sm}"

    def in_flight_per_sm(self) -> int:
        return self.threads * self.unroll * 16 * self.blocks_per_sm


class _SlotRingCase:
    """What probe_bulk and probe_ring cases share: a ring of ``stages`` slots of ``slot`` bytes per block, filled by
    ``producer_warps`` warps for ``cons_warps`` consumer warps that read each slot (``touch``) and hold it ``hold``
    SM cycles; ``blocks_per_sm`` persistent blocks per SM.  ``_fill`` (pieces / load warps) is the one kernel argument
    in which they differ, ``_tag`` its letter in the name."""
    _kind = _tag = ""
    dyn = 0   # dynamic slot chunks: a dataclass field of BulkCase only (probe_ring owns fixed runs)

    @property
    def _fill(self) -> int:
        raise NotImplementedError

    @property
    def producer_warps(self) -> int:
        raise NotImplementedError

    @property
    def threads(self) -> int:
        return 32 * (self.cons_warps + self.producer_warps)

    @property
    def name(self) -> str:
        return (f"{self._kind}_s{self.slot // 1024}k_x{self.stages}_{self._tag}{self._fill}_w{self.cons_warps}"
                f"_t{self.touch}_h{self.hold}_b{self.blocks_per_sm}" + (f"_d{self.dyn}" if self.dyn else ""))

    def in_flight_per_sm(self) -> int:
        return self.slot * self.stages * self.blocks_per_sm


@dataclass(frozen=True)
class BulkCase(_SlotRingCase):
    """probe_bulk: one producer thread, ``pieces`` bulk copies per slot; ``dyn`` > 0: blocks take chunks of ``dyn``
    slots from a global counter instead of owning a fixed run (the rest: _SlotRingCase)."""
    slot: int = 16384
    stages: int = 8
    pieces: int = 1
    cons_warps: int = 8
    touch: int = 1
    hold: int = 0
    blocks_per_sm: int = 1
    dyn: int = 0
    _kind, _tag = "bulk", "p"

    @property
    def _fill(self) -> int:
        return self.pieces

    @property
    def producer_warps(self) -> int:
        return 1


@dataclass(frozen=True)
class RingCase(_SlotRingCase):
    """probe_ring: ``load_warps`` warps fill the ring with 16-byte cp.async copies, each lane its share of every
    slot (the rest: _SlotRingCase)."""
    slot: int = 16384
    stages: int = 8
    load_warps: int = 4
    cons_warps: int = 8
    touch: int = 1
    hold: int = 0
    blocks_per_sm: int = 1
    _kind, _tag = "ring", "l"

    @property
    def _fill(self) -> int:
        return self.load_warps

    @property
    def producer_warps(self) -> int:
        return self.load_warps


def bulk_smem_bytes(case: _SlotRingCase) -> int:
    """Dynamic shared memory of one probe_bulk / probe_ring block: the ring plus two mbarriers and a flag per slot."""
    return case.slot * case.stages + 20 * case.stages


def _check(case) -> None:
    if isinstance(case, LdgCase):
        if case.threads % 32 or not 32 <= case.threads <= 1024 or case.unroll < 1 or case.blocks_per_sm < 1:
            raise ValueError(f"stream_probe: bad case {case}")
        return
    if isinstance(case, BulkCase) and (case.pieces < 1 or case.slot % case.pieces or (case.slot // case.pieces) % 16):
        raise ValueError(f"stream_probe: {case.name}: the slot and each piece must be multiples of 16 bytes")
    if (case.slot % 16 or case.cons_warps < 1 or case.producer_warps < 1 or case.threads > 1024 or case.stages < 1
            or case.blocks_per_sm < 1 or case.hold < 0 or case.dyn < 0 or case.touch not in (0, 1, 2)):
        raise ValueError(f"stream_probe: bad case {case}")


def default_cases() -> List[object]:
    """Session 49's cases: register loads at 32-128 KB in flight per SM, then bulk rings of 64-192
    KB in 8-32 KB slots, one or four copies per slot, with and without the consumers reading the slot, and with the
    consumers holding each slot for a math-like time."""
    out: List[object] = [LdgCase(256, 4, 2), LdgCase(256, 8, 2), LdgCase(512, 8, 1), LdgCase(256, 8, 4),
                         LdgCase(512, 4, 2), LdgCase(128, 16, 4)]
    for slot, stages in ((8192, 8), (8192, 16), (16384, 4), (16384, 8), (16384, 12), (32768, 4), (32768, 6)):
        out.append(BulkCase(slot, stages, 1, 8, 1, 0, 1))
    out += [BulkCase(16384, 8, 4, 8, 1, 0, 1), BulkCase(16384, 8, 1, 8, 0, 0, 1), BulkCase(16384, 8, 1, 4, 1, 0, 1),
            BulkCase(16384, 8, 1, 12, 1, 0, 1), BulkCase(8192, 6, 1, 8, 1, 0, 2), BulkCase(16384, 6, 1, 8, 1, 0, 2),
            BulkCase(24576, 4, 2, 12, 1, 0, 1), BulkCase(24576, 8, 2, 12, 1, 0, 1)]
    # consumers holding each 16 KB slot: 16 KB per SM at the H200's ~27 B/ns per SM is ~600 ns = ~1200 cycles
    for hold in (400, 800, 1200):
        out.append(BulkCase(16384, 8, 1, 8, 1, hold, 1))
        out.append(BulkCase(16384, 12, 1, 8, 1, hold, 1))
    # session 50: load warps with cp.async (4-16 of them: 2-8 KB of 16-byte requests per round), 8 consumer warps,
    # 64-192 KB rings; then holding each slot as the math would
    for slot, stages, load in ((8192, 8, 4), (16384, 8, 4), (16384, 8, 8), (16384, 12, 8), (32768, 4, 8),
                               (16384, 8, 16)):
        out.append(RingCase(slot, stages, load, 8, 1, 0, 1))
    for hold in (800, 1200):
        out.append(RingCase(16384, 8, 8, 8, 1, hold, 1))
    # session 51: the holds cost 6-27 % with each block owning a fixed run of slots, though they fit the per-SM byte
    # budget -- the same rings taking chunks of 1 / 2 / 4 slots from a global counter
    for hold in (0, 400, 800, 1200):
        for dyn in (1, 2, 4):
            out.append(BulkCase(16384, 8, 1, 8, 1, hold, 1, dyn))
    # session 51: (dynamic chunks recover ~1 of the 3-7 us the holds cost) the consumers releasing each slot as soon
    # as they have read it, then holding (touch 2)
    for hold in (400, 800, 1200):
        out.append(BulkCase(16384, 8, 1, 8, 2, hold, 1))
        out.append(RingCase(16384, 8, 8, 8, 2, hold, 1))
    # session 52: is what a hold costs beyond the byte budget (~0.45 us per 16 KB slot) a cost per slot?  The same
    # hold per byte (and the same 128 KB ring) in 8 / 16 / 32 KB slots, and 32 KB slots in a 192 KB ring
    for per16k in (800, 1200):
        for slot, stages in ((8192, 16), (32768, 4), (32768, 6)):
            out.append(BulkCase(slot, stages, 1, 8, 1, per16k * slot // 16384, 1))
    return out


def probe_spec(case, arch: str):
    """The KernelSpec of one case's kernel (a generated one-line instantiation of stream_probe.cuh)."""
    from ..jit import KernelSpec

    _check(case)
    if isinstance(case, LdgCase):
        name = f"humming_probe_ldg_t{case.threads}_u{case.unroll}"
        src = ('#include "humming/stream_probe.cuh"\n'
               f'extern "C" __global__ void __launch_bounds__({case.threads}) {name}(const uint4* __restrict__ src, '
               'long long n16, uint32_t* __restrict__ sink) {\n'
               f'  humming::probe_ldg<{case.threads}, {case.unroll}>(src, n16, sink);\n}}\n')
    elif isinstance(case, RingCase):
        name = "humming_probe_ring"
        src = ('#include "humming/stream_probe.cuh"\n'
               f'extern "C" __global__ void __launch_bounds__(1024) {name}(const uint8_t* __restrict__ src, '
               'long long nslots, int slot, int stages, int load_warps, int cons_warps, int touch, unsigned hold, '
               'uint32_t* __restrict__ sink) {\n'
               '  humming::probe_ring(src, nslots, slot, stages, load_warps, cons_warps, touch, hold, sink);\n}\n')
    else:
        name = "humming_probe_bulk"
        src = ('#include "humming/stream_probe.cuh"\n'
               f'extern "C" __global__ void __launch_bounds__(1024) {name}(const uint8_t* __restrict__ src, '
               'long long nslots, int slot, int stages, int pieces, int cons_warps, int touch, unsigned hold, '
               'uint32_t* __restrict__ sink, int dyn, unsigned long long* __restrict__ sched) {\n'
               '  humming::probe_bulk(src, nslots, slot, stages, pieces, cons_warps, touch, hold, sink, dyn, sched);'
               '\n}\n')
    return KernelSpec(name=name, source=src, arch=arch, config={"kernel": "stream_probe", "case": asdict(case)})


def streamed_bytes(case, nbytes: int) -> int:
    """The bytes one launch of ``case`` reads from an ``nbytes`` buffer (probe_bulk streams whole slots only)."""
    return nbytes if isinstance(case, LdgCase) else nbytes // case.slot * case.slot


def sm_clock_ghz(case, sink) -> Optional[float]:
    """The SM clock block 0 of the last probe_bulk / probe_ring launch ran at (SM cycles / ns over its consumer
    loop, stored as two int64 at sink[2:6]); None for the register probe or an unwritten sink."""
    import torch

    if isinstance(case, LdgCase) or sink.numel() < 6:
        return None
    cycles, ns = sink[2:6].view(torch.int64).tolist()
    return cycles / ns if ns > 0 else None


def _launcher(case, fn, buf, sink, sms: int, sched=None):
    """A zero-argument callable launching ``case`` once over ``buf`` on the current stream.  ``sched``: probe_bulk's
    two 64-bit scheduling counters (zeros; the kernel leaves them zero), allocated here when not given."""
    nbytes = buf.numel()
    if isinstance(case, LdgCase):
        grid = sms * case.blocks_per_sm
        args = (buf, ctypes.c_int64(nbytes // 16), sink)
        return lambda: fn.launch(grid, case.threads, 0, None, args)
    grid = sms * case.blocks_per_sm
    smem = bulk_smem_bytes(case)
    fn.set_max_smem(smem)
    args = (buf, ctypes.c_int64(nbytes // case.slot), case.slot, case.stages, case._fill, case.cons_warps,
            case.touch, ctypes.c_uint32(case.hold), sink)
    if isinstance(case, BulkCase):
        if sched is None:
            import torch

            sched = torch.zeros(2, dtype=torch.int64, device=buf.device)
        args = args + (case.dyn, sched)
    return lambda: fn.launch(grid, case.threads, smem, None, args)


def run(cases: Sequence[object], sizes: Sequence[str], replays: int = 20, min_bytes: int = 320 << 20,
        reserve_sms: int = 0, out=sys.stdout) -> List[dict]:
    """Time every case on every buffer size; ``reserve_sms``: hold that many SMs idle (tuning.sm_reserve) and size
    the grids for the rest -- on an H100, 40 puts each remaining SM under an H200's per-SM load."""
    import torch

    from ..jit import current_arch
    from . import sweep

    bad = [s for s in sizes if s not in SIZES]
    if bad:
        raise ValueError(f"stream_probe: unknown size(s) {bad}; known: {sorted(SIZES)}")
    if isinstance(reserve_sms, bool) or not isinstance(reserve_sms, int) or reserve_sms < 0:
        raise ValueError(f"stream_probe: reserve_sms is an int >= 0, got {reserve_sms!r}")
    if not torch.cuda.is_available():
        raise RuntimeError("stream_probe: needs a CUDA GPU (torch.cuda.is_available() is False)")
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count - reserve_sms
    arch = current_arch(dev)
    print(f"# stream_probe on {props.name}, {sms} SMs used ({reserve_sms} held idle), {arch}", file=out)
    old_reserved, sweep.RESERVED_SMS = sweep.RESERVED_SMS, reserve_sms
    try:
        return _run_cases(cases, sizes, replays, min_bytes, dev, sms, arch, out)
    finally:
        sweep.RESERVED_SMS = old_reserved


def _run_cases(cases, sizes, replays, min_bytes, dev, sms, arch, out) -> List[dict]:
    import torch

    from ..jit import compile_kernel, load_kernel
    from .sweep import time_graph

    rows = []
    sink = torch.zeros(8, dtype=torch.int32, device=dev)   # [0]: XOR of the words read; [2:6]: two int64 (SM clock)
    sched = torch.zeros(2, dtype=torch.int64, device=dev)   # probe_bulk's chunk counter + finished producers
    for size in sizes:
        nbytes = SIZES[size]
        copies = max(2, math.ceil(min_bytes / nbytes))
        bufs = [torch.randint(-2**31, 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device=dev).view(torch.uint8)
                for _ in range(copies)]
        # the device-to-device copy of one buffer (reads + writes; the bench's "copy" ceiling), same method
        dst = [torch.empty_like(b) for b in bufs]
        t = time_graph([lambda s=s, d=d: d.copy_(s) for s, d in zip(bufs, dst)], replays)
        print(f"{size:>5} {nbytes / 1e6:7.2f} MB  torch copy            {t:8.2f} us  {2 * nbytes / t / 1e6:5.2f} TB/s "
              "(read + write)", file=out)
        rows.append({"size": size, "bytes": nbytes, "case": "torch_copy", "us": t, "tbps": 2 * nbytes / t / 1e6})
        del dst
        for case in cases:
            fn = load_kernel(compile_kernel(probe_spec(case, arch)), dev)
            try:
                t = time_graph([_launcher(case, fn, b, sink, sms, sched) for b in bufs], replays)
            except Exception as e:   # one bad case (launch failure) does not end the probe
                print(f"{size:>5} {case.name}: FAILED {type(e).__name__}: {e}", file=out)
                rows.append({"size": size, "case": case.name, "error": str(e)})
                if "illegal" in str(e).lower() or "launch failed" in str(e).lower():
                    raise
                continue
            tbps = streamed_bytes(case, nbytes) / t / 1e6
            ghz = sm_clock_ghz(case, sink)
            print(f"{size:>5} {nbytes / 1e6:7.2f} MB  {case.name:<34} {t:8.2f} us  {tbps:5.2f} TB/s  "
                  f"({case.in_flight_per_sm() // 1024} KB/SM in flight)"
                  + (f"  SM clock {ghz:.2f} GHz" if ghz else ""), file=out)
            rows.append({"size": size, "bytes": nbytes, "case": case.name, "us": t, "tbps": tbps,
                         "in_flight_per_sm": case.in_flight_per_sm(), "sm_clock_ghz": ghz})
        out.flush()
        del bufs
        torch.cuda.empty_cache()
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vllm_humming.tuning.stream_probe", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="wide,long,small", help=f"comma list of {sorted(SIZES)}")
    ap.add_argument("--cases", default="", help="comma list of case-name prefixes to run (default: all)")
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--reserve-sms", type=int, default=0, help="hold this many SMs idle while timing (tuning."
                    "sm_reserve) and size the grids for the rest")
    a = ap.parse_args(argv)
    sizes = [s for s in a.sizes.split(",") if s]
    bad = [s for s in sizes if s not in SIZES]
    if bad:
        ap.error(f"unknown size(s) {bad}; known: {sorted(SIZES)}")
    cases = default_cases()
    if a.cases:
        pre = [p for p in a.cases.split(",") if p]
        cases = [c for c in cases if any(c.name.startswith(p) for p in pre)]
    if a.reserve_sms < 0:
        ap.error(f"--reserve-sms must be >= 0, got {a.reserve_sms}")
    rows = run(cases, sizes, a.replays, reserve_sms=a.reserve_sms)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
