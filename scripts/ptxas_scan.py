"""Registers, spills and ptxas's wgmma warnings (C75xx) of every default kernel a set of layers would build, on the
CPU machine (NVRTC only, no GPU): ptxas's -v report per (format, choice).  Flags spills and the wgmma warnings --
C7512 / C7511 / C7513: ptxas serialized the wgmmas; C7519: it injected a warpgroup.arrive so the MMAs could use
registers written after the last fence.

    python scripts/ptxas_scan.py [--arch sm_90a] [--prefill-m 1024] [--formats F;F...] [--shapes NxK,...]
"""
import argparse
import re

from vllm_humming.jit.compiler import build_options
from vllm_humming.jit.nvrtc import run_nvrtc
from vllm_humming.ops.gemm import layer_kernel_specs

FORMATS = ("w:uint4b8,s:g128:bfloat16;w:uint3b4,s:g128:bfloat16;mxfp4;w:uint8b128,s:channel:bfloat16;"
           "w:uint4,s:g128:bfloat16,zp:int;w:uint2b2,s:g64:bfloat16;w:float4_e2m1,s:g16:float8_e4m3fn,s2:tensor:float32")
SHAPES = "6144x4096,28672x4096,4096x14336,4096x4096,18432x7168"

ap = argparse.ArgumentParser()
ap.add_argument("--arch", default="sm_90a")
ap.add_argument("--prefill-m", type=int, default=1024)
ap.add_argument("--formats", default=FORMATS)
ap.add_argument("--shapes", default=SHAPES)
a = ap.parse_args()
seen = set()
for d in a.formats.split(";"):
    for shape in a.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        for spec in layer_kernel_specs(d, n, k, a.arch, prefill_m=a.prefill_m):
            choice = spec.config.get("choice")
            if not choice or (d, choice) in seen:
                continue
            seen.add((d, choice))
            _, opts = build_options(spec)
            log = run_nvrtc(spec.source, "k.cu", opts + ["--ptxas-options=-v"], "cubin").log
            regs = re.search(r"Used (\d+) registers", log)
            spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
            warns = sorted(set(re.findall(r"C75[0-9][0-9]", log)))
            st, ld = spill.groups() if spill else ("?", "?")
            flag = "  <--" if st not in ("0", "?") or warns else ""
            print(f"{d:52s} {choice:42s} regs {regs.group(1) if regs else '?':>3} spill {st}/{ld} "
                  f"{' '.join(warns)}{flag}", flush=True)
