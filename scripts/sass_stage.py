"""Developer tool (CPU, no GPU): how many SASS instructions one pipeline stage of a GEMM kernel costs, and which.

    python scripts/sass_stage.py w:uint4b8,s:g128:bfloat16 bt8_wn4_tm2_wk1_ak1_s4 [--arch sm_90a] [--defines A,B]

Compiles the kernel with NVRTC, disassembles it with cuobjdump (pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm),
cuts the main loop at its block barriers (BAR.SYNC: one per stage in every cp.async mainloop) and prints, per stage,
the instruction count and an opcode histogram -- the accounting behind NOTES.md's "instructions per stage" numbers.
The decode kernels unroll their loop by the ring depth, so consecutive stages show the same code with other slots.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile


def find_cuobjdump():
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    try:
        import nvidia.cu13 as cu   # the pip wheels put their tools here (a namespace package: no __file__)
        for d in cu.__path__:
            cand = os.path.join(d, "bin", "cuobjdump")
            if os.path.exists(cand):
                return cand
    except ImportError:
        pass
    sys.exit("cuobjdump not found: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("desc")
    ap.add_argument("choice")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--defines", default="", help="HUMMING_DEBUG_DEFINES for the compile (experiment macros)")
    ap.add_argument("--top", type=int, default=12, help="opcodes shown per stage")
    args = ap.parse_args()
    os.environ.setdefault("HUMMING_CACHE_DIR", tempfile.mkdtemp())
    if args.defines:
        os.environ["HUMMING_DEBUG_DEFINES"] = args.defines
    import torch

    from vllm_humming.desc import WeightDesc
    from vllm_humming.jit import compile_kernel
    from vllm_humming.ops.gemm import _spec, format_params
    from vllm_humming.tuning.heuristics import KernelChoice

    fp = format_params(WeightDesc.parse(args.desc))
    art = compile_kernel(_spec(fp, KernelChoice.parse(args.choice), torch.bfloat16, args.arch))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(art.cubin)
        f.flush()
        sass = subprocess.run([find_cuobjdump(), "--dump-sass", f.name], capture_output=True, text=True,
                              check=True).stdout
    ops = []
    for line in sass.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            # "@!PT" never executes but still takes an issue slot (ptxas pads LDGSTS with such LDS)
            ops.append("PAD_" + m.group(2) if (m.group(1) or "").strip() == "@!PT" else m.group(2))
    bars = [i for i, o in enumerate(ops) if o.startswith("BAR.SYNC")]
    print(f"{args.choice} ({args.desc}, {args.arch}): {len(ops)} instructions, {len(bars)} block barriers")
    for a, b in zip(bars, bars[1:]):
        seg = ops[a:b]
        if not any(o.startswith(("HMMA", "HGMMA")) for o in seg):
            continue   # prologue / epilogue barriers
        hist = collections.Counter(o.split(".")[0] for o in seg)
        print(f"  stage @{a}: {len(seg)} instructions: " +
              ", ".join(f"{k} {v}" for k, v in hist.most_common(args.top)))


if __name__ == "__main__":
    main()
