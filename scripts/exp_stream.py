"""Experiment (H200): raw weight-streaming rate of access patterns, no math -- is our packed layout's access pattern
(one 4 KB run per block per stage, successive stages one atom column = N16/16 * 512 B apart) slower to stream than
plain contiguous reads?

    python scripts/exp_stream.py

Each block of 256 threads reads its chunks with 16-byte non-coherent loads, kUnroll loads in flight per thread, and
XORs them into one word it writes out (so nothing is optimized away).  Timed as CUDA-graph replays over > 512 MB of
buffers, median of 20.  Patterns (same bytes, same grid):
  linear : block b reads one contiguous range.
  layout : chunk c of block b = stage c of n-tile (b % n_tiles), i.e. offset (c * n_tiles + b % n_tiles) * 4 KB,
           each (n-tile, split) block covering c in [split*S, (split+1)*S)  -- what gemm_wna16 reads at M = 1.
"""
import statistics

import torch

from vllm_humming.jit import KernelSpec, Launcher, compile_kernel, current_arch, load_kernel
from vllm_humming.tuning.sweep import time_graph

SRC = r"""
#include "humming/common.cuh"
template <int kPattern, int kUnroll>
__device__ void stream(const uint4* __restrict__ w, uint32_t* out, long long chunks_per_block, int n_tiles,
                       long long stage_chunks) {
  // a "chunk" = 4 KB = 256 uint4 = one uint4 per thread
  uint32_t acc = 0;
  const int b = blockIdx.x;
  for (long long c0 = 0; c0 < chunks_per_block; c0 += kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      long long c = c0 + u;
      long long chunk;
      if (kPattern == 0) chunk = (long long)b * chunks_per_block + c;
      else {
        int tile = b % n_tiles, split = b / n_tiles;
        long long stage = split * chunks_per_block + c;
        chunk = stage * n_tiles + tile;
      }
      const uint4* p = w + chunk * 256 + threadIdx.x;
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y),
                   "=r"(v[u].z), "=r"(v[u].w) : "l"(p));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) out[b * blockDim.x + threadIdx.x] = acc;
}
extern "C" __global__ void __launch_bounds__(256) stream_linear(const uint4* w, uint32_t* out, long long cpb, int nt, long long sc) { stream<0, 8>(w, out, cpb, nt, sc); }
extern "C" __global__ void __launch_bounds__(256) stream_layout(const uint4* w, uint32_t* out, long long cpb, int nt, long long sc) { stream<1, 8>(w, out, cpb, nt, sc); }
"""


def main():
    arch = current_arch()
    fns = {}
    for name in ("stream_linear", "stream_layout"):
        art = compile_kernel(KernelSpec(name=name, source=SRC, arch=arch, config={"exp": "stream"}))
        fns[name] = Launcher(load_kernel(art), ("ptr", "ptr", "i64", "i32", "i64"))
    out = torch.zeros(1 << 20, dtype=torch.int32, device="cuda")
    for n, k in ((28672, 4096), (6144, 4096), (4096, 14336)):
        nbytes = n * k // 2
        n_tiles = n // 128                  # BN = 128 rows: 4 KB per atom column at int4
        stages = k // 64
        for splits in (1, 2, 4, 8):
            blocks = n_tiles * splits
            cpb = stages // splits
            if cpb % 8:
                continue
            copies = max(1, -(-(512 << 20) // nbytes))
            bufs = [torch.empty(nbytes // 4, dtype=torch.int32, device="cuda").random_() for _ in range(copies)]
            row = []
            for name, fn in fns.items():
                t = time_graph([lambda b=b: fn.launch(blocks, 256, 0, None, b, out, cpb, n_tiles, 0) for b in bufs])
                row.append(f"{name.split('_')[1]} {t:6.1f}us {nbytes / t / 1e6:5.2f}TB/s")
            print(f"{n}x{k} int4 ({nbytes / 1e6:.1f} MB) blocks={blocks:5d} (splits {splits}): " + " | ".join(row),
                  flush=True)
            del bufs


if __name__ == "__main__":
    main()
