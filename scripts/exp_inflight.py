"""Experiment (H200): weight-streaming rate vs bytes in flight, for register loads and for cp.async rings -- does
staging through shared memory itself cap the rate, or only the depth of the ring?

    python scripts/exp_inflight.py

Every kernel reads the packed int4 weight of a 28672x4096 (or 6144x4096) layer in the decode kernel's order: block
(tile, split) reads, stage by stage, the 4 KB run of its 128 weight rows in successive atom columns (one atom column =
n_tiles * 4 KB apart), no math, and XORs what it read into one word (so nothing is optimized away).  Variants:
  ldg      D stages per batch of 16-byte register loads, then consume (in flight: D * 4 KB per block at the batch start)
  ring     cp.async ring of D+1 stages, cp.async.wait_group D-1 + __syncthreads per stage (the default mainloop's shape)
  ringns   the same ring without __syncthreads (each thread consumes only what it copied itself)
Timed as CUDA-graph replays over > 512 MB of buffers, median of 20.
"""
import torch

from vllm_humming.jit import KernelSpec, Launcher, compile_kernel, current_arch, load_kernel
from vllm_humming.tuning.sweep import time_graph

SRC = r"""
#include "humming/common.cuh"
#include "humming/copy.cuh"
using namespace humming;
// chunk = one 4 KB stage of one tile; kPer uint4 per thread per stage
template <int kThreads, int kD>
__device__ void ldg(const uint4* __restrict__ w, uint32_t* out, int stages_per_block, int n_tiles) {
  constexpr int kPer = 256 / kThreads;
  const int tile = blockIdx.x % n_tiles, split = blockIdx.x / n_tiles;
  uint32_t acc = 0;
  for (int s0 = 0; s0 < stages_per_block; s0 += kD) {
    uint4 v[kD][kPer];
#pragma unroll
    for (int d = 0; d < kD; ++d)
#pragma unroll
      for (int p = 0; p < kPer; ++p) {
        const long long stage = (long long)split * stages_per_block + s0 + d;
        const uint4* src = w + (stage * n_tiles + tile) * 256 + p * kThreads + threadIdx.x;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[d][p].x), "=r"(v[d][p].y),
                     "=r"(v[d][p].z), "=r"(v[d][p].w) : "l"(src));
      }
#pragma unroll
    for (int d = 0; d < kD; ++d)
#pragma unroll
      for (int p = 0; p < kPer; ++p) acc ^= v[d][p].x ^ v[d][p].y ^ v[d][p].z ^ v[d][p].w;
  }
  if (acc == 0x12345678u) out[blockIdx.x * kThreads + threadIdx.x] = acc;
}

template <int kThreads, int kD, bool kSync>
__device__ void ring(const uint4* __restrict__ w, uint32_t* out, int stages_per_block, int n_tiles) {
  constexpr int kPer = 256 / kThreads;
  constexpr int kSlots = kD + 1;
  extern __shared__ __align__(16) uint4 sm[];
  const int tile = blockIdx.x % n_tiles, split = blockIdx.x / n_tiles;
  const uint4* src = w + ((long long)split * stages_per_block * n_tiles + tile) * 256 + threadIdx.x;
  const long long step = (long long)n_tiles * 256;
  auto load = [&](int s, int slot) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) copy16_async(sm + slot * 256 + p * kThreads + threadIdx.x, src + s * step + p * kThreads, true);
  };
  uint32_t acc = 0;
#pragma unroll
  for (int s = 0; s < kD; ++s) {
    if (s < stages_per_block) load(s, s);
    cp_async_commit();
  }
  for (int s = 0; s < stages_per_block; ++s) {
    cp_async_wait<kD - 1>();
    if (kSync) __syncthreads();
    if (s + kD < stages_per_block) load(s + kD, (s + kD) % kSlots);
    cp_async_commit();
    const uint4* st = sm + (s % kSlots) * 256;
    // consume: the sync variant reads a neighbour's chunk (needs the barrier), the other its own
    const int idx = kSync ? ((threadIdx.x + 32) % kThreads) : threadIdx.x;
#pragma unroll
    for (int p = 0; p < kPer; ++p) { uint4 v = st[p * kThreads + idx]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  }
  if (acc == 0x12345678u) out[blockIdx.x * kThreads + threadIdx.x] = acc;
}
"""

CASES = []   # (name, kind, threads, depth)
for threads in (128, 256):
    for d in (2, 4, 8):
        CASES.append((f"ldg_t{threads}_d{d}", "ldg", threads, d))
    for d in (2, 3, 5, 8, 11):
        CASES.append((f"ring_t{threads}_d{d}", "ring", threads, d))
        CASES.append((f"ringns_t{threads}_d{d}", "ringns", threads, d))


def source(name, kind, t, d):
    call = {"ldg": f"ldg<{t}, {d}>", "ring": f"ring<{t}, {d}, true>", "ringns": f"ring<{t}, {d}, false>"}[kind]
    return SRC + (f'extern "C" __global__ void __launch_bounds__({t}) {name}(const uint4* w, uint32_t* out, '
                  f'int spb, int nt) {{ {call}(w, out, spb, nt); }}\n')


def main():
    arch = current_arch()
    fns = {}
    for name, kind, t, d in CASES:
        art = compile_kernel(KernelSpec(name=name, source=source(name, kind, t, d), arch=arch,
                                        config={"exp": "inflight"}))
        smem = 0 if kind == "ldg" else (d + 1) * 4096
        fns[name] = (Launcher(load_kernel(art), ("ptr", "ptr", "i32", "i32")), t, smem, d)
    out = torch.zeros(1 << 22, dtype=torch.int32, device="cuda")
    for n, k in ((28672, 4096), (6144, 4096)):
        nbytes = n * k // 2
        n_tiles = n // 128
        stages = k // 64
        copies = max(1, -(-(512 << 20) // nbytes))
        bufs = [torch.empty(nbytes // 4, dtype=torch.int32, device="cuda").random_() for _ in range(copies)]
        for splits in (4, 8) if n > 10000 else (8, 16):
            spb = stages // splits
            blocks = n_tiles * splits
            for name, (fn, t, smem, d) in fns.items():
                if name.startswith("ldg") and spb % d:
                    continue
                if smem and spb < d:
                    continue
                us = time_graph([lambda b=b: fn.launch(blocks, t, smem, None, b, out, spb, n_tiles) for b in bufs])
                print(f"{n}x{k} splits={splits:2d} blocks={blocks:5d} {name:16s} inflight/block={d * 4:3d}KB "
                      f"{us:6.1f}us {nbytes / us / 1e6:5.2f}TB/s", flush=True)
        del bufs


if __name__ == "__main__":
    main()
