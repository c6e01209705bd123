// tests/host/cuda_emu.h -- a small CPU stand-in for the CUDA execution model, enough to run humming's kernels in CPU
// tests: the elementwise / reduction kernels (act_quant.cuh, moe_route.cuh) bit for bit against the Python reference,
// and the mma.sync GEMM kernels (gemm_wna16.cuh cp.async mainloop, gemm_wna16_direct.cuh) against the fp32 reference.
//
//   emu::launch(grid, block, [&] { humming::some_kernel_body<...>(args...); });      (or emu_launch.py from Python)
//
// Blocks run one after another, x fastest; the threads of a block are std::threads.  __syncthreads() is a block-wide
// barrier.  Warp shuffles, ballots, ldmatrix and mma.sync go through a per-warp exchange and two barriers of the
// thread's WARP, so all 32 lanes of a warp must reach each one -- what a full-mask *_sync call or a warp-collective
// instruction requires on the GPU too (a kernel that diverges there would deadlock here, not pass silently).
// Compiled with -DHUMMING_EMULATE, the headers' inline-PTX sites take host branches that call the emu:: versions
// below (lop3, ldmatrix, mma.sync m16n8k16 at the fragment level, wgmma with register A as per-warp m16n8k16
// products, the ticket atomics and fences); device code never sees those branches.  Not modelled: the asynchrony of
// wgmma, TMA, bulk copies, mbarriers, clusters (the kernels using the last four stay GPU-only),
// memory-ordering subtleties beyond barriers, and blocks that wait for later blocks (split-K plans run with one
// reducer here).  mma sums are taken in double: results match to the bf16 / fp16 rounding, not bit for bit.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) { emu::warp_sync(); }

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

// Device intrinsics the GEMM headers name, on the host.
[[noreturn]] inline void __trap() { abort(); }
inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)(uintptr_t)p; }   // (only asm used it)
template <class V> inline void __stcg(V* p, V v) { *p = v; }
template <class V> inline V __ldcg(const V* p) { return *p; }
inline void __nanosleep(unsigned) { std::this_thread::yield(); }
inline int atomicExch(int* p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline unsigned __vmaxu2(unsigned a, unsigned b) {   // per 16-bit half, unsigned max
  const unsigned lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
  const unsigned hi = (a >> 16) > (b >> 16) ? (a >> 16) : (b >> 16);
  return lo | (hi << 16);
}
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }

namespace emu {
inline std::vector<unsigned long long> g_wide;   // 8 64-bit slots per thread: ldmatrix rows, mma fragments

// lop3.b32: bit i of the result is bit (a_i << 2 | b_i << 1 | c_i) of the truth table
inline uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, int lut) {
  uint32_t r = 0;
  for (int i = 0; i < 8; ++i)
    if ((lut >> i) & 1) r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
  return r;
}

// ldmatrix.sync.aligned.m8n8.xN.shared.b16: lane i gives the address of row i % 8 of matrix i / 8; thread
// (g = lane / 4, t = lane % 4) receives, per matrix j, the 32-bit pair at row g, columns 2t, 2t + 1.
template <int N> inline void ldmatrix(uint32_t (&r)[N], const void* row) {
  const unsigned lane = threadIdx.x % 32, base = threadIdx.x - lane;
  g_wide[8 * threadIdx.x] = (unsigned long long)(uintptr_t)row;
  warp_sync();
  const unsigned g = lane / 4, t = lane % 4;
  for (int j = 0; j < N; ++j) {
    const char* p = (const char*)(uintptr_t)g_wide[8 * (base + 8 * j + g)];
    memcpy(&r[j], p + 4 * t, 4);
  }
  warp_sync();
}

inline float to_f32(float v) { return v; }
inline float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
inline float to_f32(__half v) { return __half2float(v); }
template <class T> inline T from_f32(float v);      // round to nearest even, as the kernels' conversions do
template <> inline float from_f32<float>(float v) { return v; }
template <> inline __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> inline __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <class T> inline float half_at(uint32_t reg, int hi) {
  T v;
  const uint16_t bits = (uint16_t)(hi ? reg >> 16 : reg & 0xFFFFu);
  memcpy(&v, &bits, 2);
  return to_f32(v);
}

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: D = A B + D with the fragment layout of humming/mma.cuh.  The
// 16 products are exact in fp32; they are summed in double and rounded once (the tensor core's internal order and
// precision are unspecified: close, not bit-equal).
template <class T> inline void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  const unsigned lane = threadIdx.x % 32, base = threadIdx.x - lane;
  unsigned long long* me = &g_wide[8 * threadIdx.x];
  for (int i = 0; i < 4; ++i) me[i] = a[i];
  for (int i = 0; i < 2; ++i) me[4 + i] = b[i];
  warp_sync();
  const unsigned g = lane / 4, t = lane % 4;
  auto A = [&](int row, int k) {
    const unsigned owner = base + (row % 8) * 4 + (k % 8) / 2;
    const int reg = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
    return half_at<T>((uint32_t)g_wide[8 * owner + reg], k % 2);
  };
  auto B = [&](int k, int col) {
    const unsigned owner = base + col * 4 + (k % 8) / 2;
    return half_at<T>((uint32_t)g_wide[8 * owner + 4 + (k >= 8 ? 1 : 0)], k % 2);
  };
  float out[4];
  for (int q = 0; q < 4; ++q) {
    const int row = g + 8 * (q >> 1), col = 2 * t + (q & 1);
    double acc = d[q];
    for (int k = 0; k < 16; ++k) acc += (double)A(row, k) * (double)B(k, col);
    out[q] = (float)acc;
  }
  warp_sync();
  for (int q = 0; q < 4; ++q) d[q] = out[q];
}

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16} with A from registers and B from shared memory (humming/
// wgmma.cuh), synchronously: warp i of the warpgroup supplies rows 16i..16i+15 of A in the m16n8k16 A-fragment layout
// and receives those rows of D in the m16n8 accumulator layout repeated over the N / 8 token groups, so each warp's
// share is N / 8 independent mma.sync m16n8k16 products with the same B -- which is how it is emulated.  B (N tokens x
// 16 K, K-major) is read from the tile the emulated descriptor names (host address >> 4; wgmma_desc_sw128 under
// HUMMING_EMULATE): token row n's 128-byte row at start + 128 n, its 16-byte chunks swizzled on the absolute address
// bits (bits 4-6 ^= bits 7-9) as the hardware does, so a tile off its 1024-byte alignment or a wrong swizzle reads
// wrong values here too.  The B fragment of mma.sync: b[0] = x[n = g][k = 2t, 2t + 1], b[1] = x[g][2t + 8, 2t + 9].
// The asynchrony (fence / commit / wait) is not modelled: every wgmma has landed when it returns.
template <class T, int N, bool kAccumulate>
inline void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], unsigned long long desc) {
  const unsigned lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const uintptr_t start = (uintptr_t)(desc << 4);
  auto word = [&](unsigned n, unsigned kbyte) {
    uintptr_t addr = start + 128 * n + kbyte;
    addr ^= ((addr >> 7) & 7) << 4;
    uint32_t v;
    memcpy(&v, (const void*)addr, 4);
    return v;
  };
  for (int j = 0; j < N / 8; ++j) {
    const uint32_t b[2] = {word(8 * j + g, 4 * t), word(8 * j + g, 16 + 4 * t)};
    float dj[4];
    for (int q = 0; q < 4; ++q) dj[q] = kAccumulate ? d[4 * j + q] : 0.f;
    mma_16816<T>(dj, a, b);
    for (int q = 0; q < 4; ++q) d[4 * j + q] = dj[q];
  }
}
}  // namespace emu

namespace emu {
// cp.async as the hardware promises it, no more: the 16 source bytes are read at issue, but they land in shared
// memory only when a cp.async.wait_group of the issuing thread retires their commit group (wait_group N: every group
// but the N newest); copies never committed never land.  A read of the destination before that sees the old bytes --
// the block's shared memory starts as 0xA5 bytes -- so a missing wait shows up in CPU tests as wrong results instead
// of passing because the emulated copy happened to be synchronous.
struct PendingCopy {
  void* dst;
  unsigned char bytes[16];
};
inline thread_local std::vector<PendingCopy> t_cp_open;                  // issued since the last commit
inline thread_local std::vector<std::vector<PendingCopy>> t_cp_groups;   // committed, not yet retired; oldest first
inline void cp_async16(void* dst, const void* src, bool valid) {
  PendingCopy p{dst, {}};
  if (valid) std::memcpy(p.bytes, src, 16);
  else std::memset(p.bytes, 0, 16);
  t_cp_open.push_back(p);
}
inline void cp_async_commit() {
  t_cp_groups.push_back(std::move(t_cp_open));
  t_cp_open.clear();
}
inline void cp_async_wait(int pending) {
  while ((int)t_cp_groups.size() > pending) {
    for (const PendingCopy& p : t_cp_groups.front()) std::memcpy(p.dst, p.bytes, 16);
    t_cp_groups.erase(t_cp_groups.begin());
  }
}

inline std::vector<unsigned char> g_dynamic_smem;      // the block's dynamic shared memory (HUMMING_DYNAMIC_SMEM)
inline void* dynamic_smem() { return g_dynamic_smem.data(); }

// Run `body` as a grid of blocks of `block` threads (block a multiple of 32: whole warps), with `smem` bytes of
// dynamic shared memory per block (filled with 0xA5 bytes before every block, not zeros and not the previous block's
// bytes: a GPU promises nothing either).  Blocks run one after another, x fastest: a kernel whose blocks wait for later
// blocks (a spin on a ticket) would hang here.
inline void launch3(EmuDim3 grid, unsigned block, const std::function<void()>& body, unsigned smem = 0) {
  gridDim = grid;
  blockDim = {block, 1, 1};
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        g_dynamic_smem.assign(smem + 16, 0xA5);
        g_block_barrier = std::make_unique<std::barrier<>>(block);
        g_warp_barriers.clear();
        for (unsigned w = 0; w < (block + 31) / 32; ++w)
          g_warp_barriers.push_back(std::make_unique<std::barrier<>>(block - 32 * w < 32 ? block - 32 * w : 32));
        g_exchange.assign(block, 0u);
        g_wide.assign(8 * block, 0ull);
        std::vector<std::thread> threads;
        threads.reserve(block);
        for (unsigned t = 0; t < block; ++t)
          threads.emplace_back([&, t, bx, by, bz] {
            threadIdx = {t, 0, 0};
            blockIdx = {bx, by, bz};
            body();
          });
        for (auto& th : threads) th.join();
      }
}
inline void launch(unsigned grid, unsigned block, const std::function<void()>& body, unsigned smem = 0) {
  launch3({grid, 1, 1}, block, body, smem);
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
template <class... P>
inline void launch_entry(void (*f)(P...), const unsigned* grid, unsigned block, unsigned smem, void** a) {
  launch3({grid[0], grid[1], grid[2]}, block, [&] { call_entry(f, a, std::index_sequence_for<P...>{}); }, smem);
}
}  // namespace emu
