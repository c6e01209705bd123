"""``vllm-humming`` console script: a thin dispatcher over ``vllm_humming.commands.<name>``.

Each command module defines ``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only when their
command runs, so ``vllm-humming --help`` stays fast and the CPU-only commands never import CUDA.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command name -> (module under vllm_humming.commands, one-line help)
COMMANDS = {
    "bench": ("bench", "time our GEMM kernels against cuBLAS bf16 and upstream humming (CUDA-graph replay)"),
    "compile-report": ("compile_report", "compile time per kernel and per layer, cold (empty cache) and warm"),
    "plan": ("plan", "the launch plan (kernel, grid, K splits, waves) a layer makes per M, computed without a GPU"),
    "inspect": ("inspect", "per layer of a checkpoint: description, tensors, kernel family or fallback reason"),
    "dequantize": ("dequantize", "write a bf16 safetensors copy of a quantized checkpoint's linear weights"),
    "doctor": ("doctor", "report NVRTC, CUDA headers, GPU, cache directory and vLLM versions"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="vllm-humming", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    argv = sys.argv[1:] if argv is None else argv
    wanted = argv[0] if argv and not argv[0].startswith("-") else None
    for name, (mod, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        if name == wanted:  # only the chosen command's module is imported
            module = importlib.import_module(f"vllm_humming.commands.{mod}")
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if args.command is None else 2
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
