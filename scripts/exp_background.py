"""Cold start of a model's linear layers with and without background compilation (GPU, fresh kernel cache).

    python scripts/exp_background.py [--shapes 6144x4096,4096x4096,28672x4096,4096x14336] [--ms 1,2,4,...]

Prepares one int4 g128 layer per shape (Llama-3-8B's four linear shapes by default), then -- as vLLM's CUDA-graph
capture does -- calls every layer once at each token count.  With HUMMING_JIT_BACKGROUND=1 each layer's kernels start
compiling on the background thread when the layer is prepared (what the vLLM integration does); with 0 each call
compiles what it needs when it first needs it.  Prints the seconds from the first preparation to the end of the calls,
and the NVRTC compiles.  Run it in a fresh process with an empty HUMMING_CACHE_DIR for each setting.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from vllm_humming import jit  # noqa: E402
from vllm_humming.desc import WeightDesc  # noqa: E402
from vllm_humming.ops import compile_in_background, prepare_linear  # noqa: E402
from vllm_humming.reference import quantize_weight  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="6144x4096,4096x4096,28672x4096,4096x14336")
    p.add_argument("--ms", default="1,2,4,8,16,24,32,48,64,96,128,256,512")
    p.add_argument("--desc", default="w:uint4b8,s:g128:bfloat16")
    p.add_argument("--load-s", type=float, default=0.0, help="seconds to wait after preparing the layers, as vLLM "
                   "spends loading the rest of the model before its first forward")
    a = p.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    qws = [quantize_weight(torch.randn(n, k, device="cuda") * 0.05, WeightDesc.parse(a.desc)) for n, k in shapes]
    torch.cuda.synchronize()
    jit.reset_stats()
    t0 = time.perf_counter()
    layers = []
    for qw in qws:
        pl = prepare_linear(qw)
        compile_in_background(pl)   # (None unless HUMMING_JIT_BACKGROUND=1)
        layers.append(pl)
    t_prep = time.perf_counter() - t0
    time.sleep(a.load_s)
    t1 = time.perf_counter()
    for m in (int(v) for v in a.ms.split(",")):
        for (n, k), pl in zip(shapes, layers):
            pl.kernel(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    calls = time.perf_counter() - t1
    st = jit.stats()
    print(f"HUMMING_JIT_BACKGROUND={os.environ.get('HUMMING_JIT_BACKGROUND', '') or '1 (default)'}: prepared "
          f"{len(layers)} layers in {t_prep:.2f} s, waited {a.load_s:.1f} s, the calls of every layer at M = {a.ms} "
          f"took {calls:.2f} s ({total:.2f} s in all); "
          f"{st['nvrtc_compiles']} NVRTC compiles ({st['nvrtc_seconds']:.1f} s of NVRTC across threads)")


if __name__ == "__main__":
    main()
