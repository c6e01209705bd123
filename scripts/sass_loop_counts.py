#!/usr/bin/env python3
"""Static instruction counts of a GEMM kernel's main loop, on the CPU (no GPU): compile one kernel choice with NVRTC
through the JIT (HUMMING_DEBUG_DEFINES applies as usual), disassemble the cubin with nvdisasm, find the loops (a
label and the backward branch to it) and print, for each loop that issues MMAs, its opcode histogram.

nvdisasm is not a dependency: `pip download --no-deps nvidia-cuda-nvdisasm -d DIR`, unzip the wheel and pass
--nvdisasm DIR/nvidia/cu13/bin/nvdisasm (or put it on PATH).

    python scripts/sass_loop_counts.py --desc w:uint4b8,s:g128:bfloat16 \
        --choice bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma --nvdisasm /tmp/nvd/nvidia/cu13/bin/nvdisasm
    HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_SKIP_DEQUANT python scripts/sass_loop_counts.py ...

Counts are per thread per loop iteration (one body of the unrolled loop); divide by the weights a thread handles per
body to compare loops of different unroll depths (session 41, NOTES.md).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_INSN = re.compile(r"^\s+/\*[0-9a-f]+\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^(\.L_x_\d+):")
_BRANCH = re.compile(r"BRA(?:\.\w+)*\s+`\((\.L_x_\d+)\)")


def loops(sass_lines):
    """(label, first line, last line) of every backward branch's loop."""
    where = {}
    out = []
    for i, line in enumerate(sass_lines):
        m = _LABEL.match(line)
        if m:
            where[m.group(1)] = i
        b = _BRANCH.search(line)
        if b and b.group(1) in where and where[b.group(1)] < i:
            out.append((b.group(1), where[b.group(1)], i))
    return out


def opcode(insn: str) -> str:
    insn = re.sub(r"^@!?U?P[0-9T]+\s+", "", insn)   # predicate guard
    return insn.split()[0].split(".")[0] if insn.split() else ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--desc", required=True, help="weight description, e.g. w:uint4b8,s:g128:bfloat16")
    p.add_argument("--choice", required=True, help="kernel choice short name (KernelChoice.short())")
    p.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--nvdisasm", default=shutil.which("nvdisasm") or "", help="path of nvdisasm")
    p.add_argument("--all-loops", action="store_true", help="also loops without MMAs")
    p.add_argument("--top", type=int, default=12, help="opcodes per histogram (0: all)")
    p.add_argument("--dump", default="", help="print this loop's SASS (its label, e.g. .L_x_30)")
    args = p.parse_args(argv)
    if not args.nvdisasm or not os.path.exists(args.nvdisasm):
        p.error("nvdisasm not found: pass --nvdisasm (pip download --no-deps nvidia-cuda-nvdisasm)")

    import torch

    from vllm_humming.desc import WeightDesc
    from vllm_humming.jit import compile_kernel
    from vllm_humming.ops.gemm import _spec, format_params
    from vllm_humming.tuning.heuristics import KernelChoice

    from vllm_humming.desc import DescError
    from vllm_humming.tuning.heuristics import _ARCH_TABLE

    if args.arch not in _ARCH_TABLE:
        p.error(f"--arch {args.arch!r} is not one of {sorted(_ARCH_TABLE)}")
    try:
        desc = WeightDesc.parse(args.desc)
        choice = KernelChoice.parse(args.choice)
        reason = choice.unsupported_reason(args.arch, 4096, format_params(desc).group)
        if reason:
            raise ValueError(reason)
        spec = _spec(format_params(desc), choice, getattr(torch, args.dtype), args.arch, str(desc))
    except (ValueError, DescError) as e:
        p.error(f"--desc {args.desc!r} / --choice {args.choice!r}: {e}")
    art = compile_kernel(spec)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as f:
            f.write(art.cubin)
        sass = subprocess.run([args.nvdisasm, "-c", path], check=True, capture_output=True, text=True).stdout
    lines = sass.splitlines()
    defines = os.environ.get("HUMMING_DEBUG_DEFINES", "")
    print(f"{args.choice} {args.desc} {args.dtype} {args.arch}  defines: {defines or '-'}  "
          f"cubin {len(art.cubin)} B  log: {art.log.strip()[:120] or '-'}")
    for label, a, b in loops(lines):
        ops = collections.Counter(opcode(m.group(1)) for m in map(_INSN.match, lines[a:b + 1]) if m)
        mma = ops.get("HGMMA", 0) + ops.get("HMMA", 0)
        if not mma and not args.all_loops:
            continue
        top = "  ".join(f"{n} {o}" for o, n in ops.most_common(args.top or None))
        print(f"  loop {label} ({b - a} lines): {sum(ops.values())} instructions, {mma} MMA  |  {top}")
        if label == args.dump:
            print("\n".join(lines[a:b + 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
