"""``vllm-humming bench``: the speed measurement (CUDA-graph replay of layer copies past the L2, median of replays).

Modules: :mod:`formats` (what is measured), :mod:`harness` (how), :mod:`peers` (upstream humming adapter),
:mod:`cold` (cold-compile child process), :mod:`report` (JSON and tables).  ``python -m vllm_humming.bench ARGS`` is
the same as ``vllm-humming bench ARGS``.
"""


def main(argv=None) -> int:
    """Entry point of ``python -m vllm_humming.bench``: parse the bench options and run."""
    import argparse
    import sys

    from ..commands import bench as cmd

    argv = sys.argv[1:] if argv is None else list(argv)
    p = argparse.ArgumentParser(prog="python -m vllm_humming.bench")
    cmd.add_arguments(p)
    args = p.parse_args(argv)
    return cmd.run(args, argv=[sys.executable, "-m", "vllm_humming.bench"] + argv)
