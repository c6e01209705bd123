"""``python -m vllm_humming.tuning.mma_probe``: does a warpgroup's dequant-like ALU work overlap its own in-flight
register-A wgmmas, and does ordering two warpgroups ("ping-pong") make it overlap?  (kernels/include/humming/
mma_probe.cuh; NOTES session 51.)

Each case runs one block per SM for ``stages`` stages of "ALU into a fragment buffer, then kTiles x kSteps
m64n64k16 wgmmas from it" with no memory traffic, in three modes (both / MMA only / ALU only), and prints the SM
cycles per stage of block 0 next to what the tensor cores need for those wgmmas at the dense peak (``--peak``, MACs
per cycle per SM).  Both ~= MMA only + ALU only means the two do not overlap; both ~= max(...) means they do.
Session 52's cases vary one thing each (MmaCase fields): mma.sync instead of wgmma, one role per warpgroup, A from
shared memory, the ALU's fragment stores, tile-major MMA order, integer / fp32 ALU mixes, m64n16k16 (16 tokens);
the slowest SM's cycles are printed next to block 0's.

    python -m vllm_humming.tuning.mma_probe [--stages 400] [--json out.json]

sm_90a only (wgmma).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from typing import List, Optional, Sequence

MODES = {0: "both", 1: "mma", 2: "alu"}


@dataclass(frozen=True)
class MmaCase:
    """``warpgroups`` math warpgroups per block (1 or 2), each with ``tiles`` m64 tiles x ``steps`` k16 steps of
    m64n64k16 per stage and ``alu4`` groups of four dequant-like instructions per fragment register per stage;
    ``mode`` 0 both / 1 MMA only / 2 ALU only; ``pingpong``: the two warpgroups issue their MMAs in turn."""
    warpgroups: int = 2
    tiles: int = 2
    steps: int = 8
    alu4: int = 1
    mode: int = 0
    pingpong: bool = False
    sync: bool = False   # mma.sync m16n8k16 instead of wgmma (the same MACs and A fragments)
    # (session 52; mma_probe.cuh's kFlags) split: warpgroup 0 issues every ALU instruction, warpgroup 1 every wgmma,
    # unsynchronized; ss: the wgmmas read A from shared memory; store: the ALU phase stores its fragments to shared
    # memory (implied by ss in mode 0 without split); chain: tile-major MMA order (consecutive wgmmas share an
    # accumulator)
    split: bool = False
    ss: bool = False
    store: bool = False
    chain: bool = False
    alu: str = "bf16"   # the ALU groups' last two ops: "bf16" (hsub2, hmul2), "int" (add, lop3), "f32" (fadd, fmul)
    tokens: int = 64    # N of each m64nNk16 wgmma: 64, or 8 / 16 / 24 / 32 (register A)

    @property
    def name(self) -> str:
        return (f"wg{self.warpgroups}_tm{self.tiles}_k{self.steps}_alu{self.alu4}_{MODES[self.mode]}"
                + ("_pp" if self.pingpong else "") + ("_sync" if self.sync else "")
                + ("_split" if self.split else "") + ("_ss" if self.ss else "")
                + ("_st" if self.store else "") + ("_chain" if self.chain else "")
                + ("" if self.alu == "bf16" else f"_{self.alu}") + ("" if self.tokens == 64 else f"_n{self.tokens}"))

    @property
    def flags(self) -> int:
        """mma_probe.cuh's kFlags (kProbeSplit 1, kProbeSS 2, kProbeStore 4, kProbeChain 8, kProbeAluInt 16,
        kProbeAluF32 32)."""
        return (1 * self.split + 2 * self.ss + 4 * self.store + 8 * self.chain + 16 * (self.alu == "int")
                + 32 * (self.alu == "f32"))

    @property
    def smem_bytes(self) -> int:
        """mma_probe.cuh's probe_mma_smem_bytes: B tile, two A tiles, the fragment stores, alignment slack."""
        return 1024 + 8192 + 2 * 8192 + self.tiles * self.steps * 16 * 128 * self.warpgroups

    @property
    def wgmmas_per_stage(self) -> int:
        """m64n64k16 wgmmas one block issues per stage (every warpgroup)."""
        return 0 if self.mode == 2 else self.warpgroups * self.tiles * self.steps

    @property
    def macs_per_stage(self) -> int:
        """MACs one block's wgmmas do per stage (m64 x tokens x k16 each)."""
        return self.wgmmas_per_stage * 64 * self.tokens * 16

    @property
    def alu_per_stage(self) -> int:
        """Dequant-like instructions one thread issues per stage (4 per group per fragment register; with split roles
        warpgroup 0 issues twice this and warpgroup 1 none)."""
        return 0 if self.mode == 1 else 4 * self.alu4 * self.tiles * self.steps * 4


def check(case: MmaCase) -> None:
    if (case.warpgroups not in (1, 2) or case.tiles not in (1, 2) or not 1 <= case.steps <= 8 or case.alu4 < 1
            or case.alu4 > 4 or case.mode not in MODES or (case.pingpong and case.warpgroups != 2)
            or (case.sync and (case.pingpong or case.split or case.ss))
            or (case.split and (case.warpgroups != 2 or case.mode != 0 or case.pingpong))
            or case.alu not in ("bf16", "int", "f32")
            or not (case.tokens == 64 or (case.tokens in (8, 16, 24, 32) and not case.sync and not case.ss))):
        raise ValueError(f"mma_probe: bad case {case} (warpgroups 1-2, tiles 1-2, steps 1-8, alu4 1-4, mode 0-2, "
                         "pingpong needs two warpgroups and wgmma; split needs two warpgroups, mode 0, no "
                         "pingpong; sync takes no pingpong / split / ss; alu bf16 / int / f32; tokens 64, or 8-32 without sync "
                         "/ ss)")


def default_cases() -> List[MmaCase]:
    """The 64-token decode's loop shape (two warpgroups, two m64 tiles x 8 k16 steps per stage) with one or two
    groups of four ALU instructions per fragment register (256 / 512 per thread per stage; the real loop: ~432), in
    the three modes, with and without ping-pong; then one warpgroup alone."""
    out: List[MmaCase] = []
    for alu4 in (1, 2):
        for mode in (0, 1, 2):
            out.append(MmaCase(2, 2, 8, alu4, mode))
        out.append(MmaCase(2, 2, 8, alu4, 0, True))
        for mode in (0, 1, 2):
            out.append(MmaCase(1, 2, 8, alu4, mode))
        # the same MACs through mma.sync (8 warps, one block per SM)
        for mode in (0, 1):
            out.append(MmaCase(2, 2, 8, alu4, mode, sync=True))
        # (session 52) where the overlap goes missing: one role per warpgroup (A in registers; the ALU storing its
        # fragments; both through shared memory -- the dequant-to-shared-memory design), shared-memory A in each
        # warpgroup, the ALU's stores alone, the tile-major MMA order
        out += [MmaCase(2, 2, 8, alu4, 0, split=True), MmaCase(2, 2, 8, alu4, 0, split=True, store=True),
                MmaCase(2, 2, 8, alu4, 0, split=True, ss=True, store=True), MmaCase(2, 2, 8, alu4, 1, ss=True),
                MmaCase(2, 2, 8, alu4, 0, ss=True), MmaCase(2, 2, 8, alu4, 2, store=True),
                MmaCase(2, 2, 8, alu4, 0, chain=True), MmaCase(2, 2, 8, alu4, 1, chain=True)]
        # the same ALU counts on the integer pipe / in fp32 (does the tensor pipe contend with the packed 16-bit
        # path?), alone and with the MMAs
        for alu in ("int", "f32"):
            out += [MmaCase(2, 2, 8, alu4, 0, alu=alu), MmaCase(2, 2, 8, alu4, 2, alu=alu)]
        # the 16-token decode's MMA shape (m64n16k16): the same ALU per stage, a quarter of the MACs
        out += [MmaCase(2, 2, 8, alu4, m, tokens=16) for m in (0, 1)] + [MmaCase(1, 2, 8, alu4, 1, tokens=16)]
    return out


def probe_spec(case: MmaCase, arch: str):
    from ..jit import KernelSpec

    check(case)
    name = "humming_probe_mma_" + case.name
    threads = 128 * case.warpgroups
    src = ('#include "humming/mma_probe.cuh"\n'
           f'extern "C" __global__ void __launch_bounds__({threads}, 1) {name}(int stages, unsigned seed, '
           'uint32_t* __restrict__ sink, long long* __restrict__ cycles) {\n'
           f'  humming::probe_wgmma_alu<{case.tiles}, {case.steps}, {case.alu4}, {case.mode}, '
           f'{"true" if case.pingpong else "false"}, {"true" if case.sync else "false"}, {case.flags}, '
           f'{case.tokens}>(stages, seed, sink, cycles);\n'
           '}\n')
    return KernelSpec(name=name, source=src, arch=arch, config={"kernel": "mma_probe", "case": asdict(case)})


def run(cases: Sequence[MmaCase], stages: int = 400, replays: int = 10, peak_macs: int = 2048,
        out=sys.stdout) -> List[dict]:
    """Time every case with the bench's method (tuning.sweep.time_graph: graph replays after a warm-up, median of
    ``replays``) and read block 0's SM cycles per stage, against the tensor cores' cycles for its wgmmas at
    ``peak_macs`` per cycle per SM."""
    import torch

    from ..jit import compile_kernel, current_arch, load_kernel
    from .sweep import time_graph

    for name, v, lo in (("stages", stages, 2), ("replays", replays, 1), ("peak_macs", peak_macs, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"mma_probe: {name} is an int >= {lo}, got {v!r}")
    bad = [c for c in cases if not isinstance(c, MmaCase)]
    if bad:
        raise ValueError(f"mma_probe: cases are MmaCase, got {bad[0]!r}")
    if not torch.cuda.is_available():
        raise RuntimeError("mma_probe: needs a CUDA GPU (torch.cuda.is_available() is False)")
    dev = torch.cuda.current_device()
    arch = current_arch(dev)
    if arch != "sm_90a":
        raise RuntimeError(f"mma_probe: wgmma runs on sm_90a only, this GPU is {arch}")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    print(f"# mma_probe on {props.name}, {sms} blocks (one per SM), {stages} stages; tensor cycles at "
          f"{peak_macs} MACs / cycle / SM", file=out)
    sink = torch.zeros(4, dtype=torch.int32, device=dev)
    cycles = torch.zeros(2, dtype=torch.int64, device=dev)   # block 0's, the slowest block's
    rows = []
    for case in cases:
        fn = load_kernel(compile_kernel(probe_spec(case, arch)), dev)
        fn.set_max_smem(case.smem_bytes)
        args = (stages, 12345, sink, cycles)
        cycles.zero_()
        us = time_graph([lambda c=case: fn.launch(sms, 128 * c.warpgroups, c.smem_bytes, None, args)], replays)
        per_stage = int(cycles[0]) / stages
        slowest = int(cycles[1]) / stages
        tensor = case.macs_per_stage / peak_macs
        print(f"{case.name:<34} {us:9.1f} us  {per_stage:8.0f} cycles/stage (slowest SM {slowest:6.0f})  (tensor "
              f"{tensor:6.0f}, ALU {case.alu_per_stage} instr/thread)", file=out)
        rows.append({"case": case.name, **asdict(case), "us": us, "cycles_per_stage": per_stage,
                     "slowest_cycles_per_stage": slowest,
                     "tensor_cycles_per_stage": tensor, "alu_per_stage": case.alu_per_stage})
        out.flush()
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vllm_humming.tuning.mma_probe", description=__doc__.split("\n")[0])
    ap.add_argument("--stages", type=int, default=400)
    ap.add_argument("--replays", type=int, default=10)
    ap.add_argument("--peak", type=int, default=2048, help="dense bf16 MACs per cycle per SM (H100 / H200: 2048)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.stages < 2 or a.replays < 1 or a.peak < 1:
        ap.error(f"--stages must be >= 2, --replays and --peak >= 1 (got {a.stages}, {a.replays}, {a.peak})")
    rows = run(default_cases(), a.stages, a.replays, a.peak)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
