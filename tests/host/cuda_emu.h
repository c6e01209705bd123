// tests/host/cuda_emu.h -- a small CPU stand-in for the CUDA execution model, enough to run humming's elementwise /
// reduction kernels (act_quant.cuh) in CPU tests, bit for bit against the Python reference.
//
//   emu::launch(grid, block, [&] { humming::some_kernel_body<...>(args...); });
//
// Blocks run one after another; the threads of a block are std::threads.  __syncthreads() is a block-wide barrier.
// __shfl_xor_sync is emulated through a per-block exchange array and two barriers, so EVERY thread of the block must
// reach every shuffle in the same order -- true for kernels whose shuffles sit in block-uniform control flow (what
// act_quant.cuh does; a kernel that shuffles inside a divergent branch would deadlock here, not pass silently).
// Not emulated: memory ordering subtleties, warp-synchronous code without shuffles, atomics, async copies.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct EmuDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local EmuDim3 threadIdx;
inline thread_local EmuDim3 blockIdx;
inline EmuDim3 blockDim;
inline EmuDim3 gridDim;

// Device-only pair intrinsics that humming/common.cuh names in non-template helpers: host versions in fp32 (the
// emulated kernels do not call them; they only have to exist).
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __floats2bfloat162_rn(__low2float(a) * __low2float(b) + __low2float(c),
                               __high2float(a) * __high2float(b) + __high2float(c));
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __floats2half2_rn(__low2float(a) * __low2float(b) + __low2float(c),
                           __high2float(a) * __high2float(b) + __high2float(c));
}

namespace emu {
inline std::unique_ptr<std::barrier<>> g_barrier;
inline std::vector<float> g_exchange;
}  // namespace emu

inline void __syncthreads() { emu::g_barrier->arrive_and_wait(); }

inline float __shfl_xor_sync(unsigned /*mask*/, float v, int lane_mask) {
  emu::g_exchange[threadIdx.x] = v;
  __syncthreads();
  const unsigned src = threadIdx.x ^ (unsigned)lane_mask;   // lane_mask < 32: stays in the warp
  const float r = emu::g_exchange[src];
  __syncthreads();
  return r;
}

namespace emu {
inline void launch(unsigned grid, unsigned block, const std::function<void()>& body) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    g_barrier = std::make_unique<std::barrier<>>(block);
    g_exchange.assign(block, 0.f);
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, t, b] {
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        body();
      });
    for (auto& th : threads) th.join();
  }
}
}  // namespace emu
