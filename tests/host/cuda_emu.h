// tests/host/cuda_emu.h -- a small CPU stand-in for the CUDA execution model, enough to run humming's elementwise /
// reduction kernels (act_quant.cuh) in CPU tests, bit for bit against the Python reference.
//
//   emu::launch(grid, block, [&] { humming::some_kernel_body<...>(args...); });
//
// Blocks run one after another; the threads of a block are std::threads.  __syncthreads() is a block-wide barrier.
// Warp shuffles and ballots go through an exchange array and two barriers of the thread's WARP, so all 32 lanes of
// a warp must reach each one -- what a full-mask *_sync call requires on the GPU too (a kernel that shuffles in a
// branch only some lanes take would deadlock here, not pass silently).  Shared-memory atomicAdd on int is a real
// atomic.  Not emulated: memory-ordering subtleties beyond barriers, warp-synchronous code without *_sync calls,
// async copies, inline PTX.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
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
inline std::unique_ptr<std::barrier<>> g_block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> g_warp_barriers;   // one per warp: the shuffles' rendezvous
inline std::vector<unsigned> g_exchange;                                // one 32-bit slot per thread
inline void warp_sync() { g_warp_barriers[threadIdx.x / 32]->arrive_and_wait(); }
template <class V> inline unsigned bits_of(V v) {
  static_assert(sizeof(V) == 4, "32-bit shuffles");
  unsigned u;
  memcpy(&u, &v, 4);
  return u;
}
template <class V> inline V from_bits(unsigned u) {
  V v;
  memcpy(&v, &u, 4);
  return v;
}
// every lane of the warp publishes a word, all read lane `src(lane)`'s word, then wait until all have read
template <class V, class Src> inline V warp_exchange(V v, Src src) {
  const unsigned lane = threadIdx.x % 32, base = threadIdx.x - lane;
  g_exchange[threadIdx.x] = bits_of(v);
  warp_sync();
  const V r = from_bits<V>(g_exchange[base + src(lane)]);
  warp_sync();
  return r;
}
}  // namespace emu

inline void __syncthreads() { emu::g_block_barrier->arrive_and_wait(); }

template <class V> inline V __shfl_xor_sync(unsigned /*mask*/, V v, int lane_mask) {
  return emu::warp_exchange(v, [&](unsigned lane) { return (lane ^ (unsigned)lane_mask) & 31u; });
}
template <class V> inline V __shfl_up_sync(unsigned /*mask*/, V v, unsigned delta) {
  return emu::warp_exchange(v, [&](unsigned lane) { return lane >= delta ? lane - delta : lane; });
}
template <class V> inline V __shfl_sync(unsigned /*mask*/, V v, int src_lane) {
  return emu::warp_exchange(v, [&](unsigned) { return (unsigned)src_lane & 31u; });
}
inline unsigned __ballot_sync(unsigned /*mask*/, int pred) {
  const unsigned lane = threadIdx.x % 32, base = threadIdx.x - lane;
  emu::g_exchange[threadIdx.x] = pred ? 1u : 0u;
  emu::warp_sync();
  unsigned m = 0;
  for (unsigned i = 0; i < 32; ++i) m |= emu::g_exchange[base + i] << i;
  emu::warp_sync();
  return m;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline float __fmul_rn(float a, float b) { return a * b; }   // (the tests build with -ffp-contract=off)
inline float __fadd_rn(float a, float b) { return a + b; }

namespace emu {
inline std::vector<unsigned char> g_dynamic_smem;      // the block's dynamic shared memory (HUMMING_DYNAMIC_SMEM)
inline void* dynamic_smem() { return g_dynamic_smem.data(); }

// Run `body` as a grid of `grid` blocks of `block` threads (block a multiple of 32: whole warps), with `smem` bytes
// of dynamic shared memory per block (filled with 0xA5 bytes, not zeros: a GPU promises nothing either).
inline void launch(unsigned grid, unsigned block, const std::function<void()>& body, unsigned smem = 0) {
  g_dynamic_smem.assign(smem + 16, 0xA5);
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    g_block_barrier = std::make_unique<std::barrier<>>(block);
    g_warp_barriers.clear();
    for (unsigned w = 0; w < (block + 31) / 32; ++w)
      g_warp_barriers.push_back(std::make_unique<std::barrier<>>(block - 32 * w < 32 ? block - 32 * w : 32));
    g_exchange.assign(block, 0u);
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

// Calling a kernel entry from a cuLaunchKernel-style argument array (each a[i] points at the i-th argument's value),
// as tests/host/emu_launch.py does through ctypes: the parameter types come from the entry's own signature.
#include <type_traits>
#include <utility>
namespace emu {
template <class... P, size_t... I> inline void call_entry(void (*f)(P...), void** a, std::index_sequence<I...>) {
  f(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(a[I])...);
}
template <class... P> inline void launch_entry(void (*f)(P...), unsigned grid, unsigned block, unsigned smem, void** a) {
  launch(grid, block, [&] { call_entry(f, a, std::index_sequence_for<P...>{}); }, smem);
}
}  // namespace emu
