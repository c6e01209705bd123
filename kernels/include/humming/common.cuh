// humming/common.cuh -- basic types and helpers shared by every kernel.
//
// Kernels are compiled by NVRTC (no host compiler), so this tree only includes CUDA's own device headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
// NVRTC has no C library headers: fixed-width integer types come from CUDA (cuda_fp16.h pulls in the builtins).

#define HUMMING_DEVICE __device__ __forceinline__

// HUMMING_EMULATE: the headers compiled as host C++ for the CPU emulation of the CUDA thread model
// (tests/host/cuda_emu.h); each inline-PTX site below has a host branch there.  Device compilation never defines it.
#ifdef HUMMING_EMULATE
#define HUMMING_DYNAMIC_SMEM(type, name) type* name = reinterpret_cast<type*>(emu::dynamic_smem())
#else
// Dynamic shared memory of a kernel.
#define HUMMING_DYNAMIC_SMEM(type, name) extern __shared__ __align__(16) type name[]
#endif

#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned char uint8_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
typedef unsigned long size_t;
#else
#include <stdint.h>
#endif

namespace humming {

// Compute-type traits: the 16-bit type activations, dequantized weights and outputs use, with the constants the
// dequant "magic number" tricks need.
template <class T> struct ComputeTraits;

template <> struct ComputeTraits<__nv_bfloat16> {
  using T2 = __nv_bfloat162;
  // bf16 with exponent field 134 and an empty mantissa is 128.0.  OR-ing a code c < 128 into the 7 mantissa bits
  // gives exactly 128 + c: the int -> float conversion costs one logic op.
  static constexpr uint32_t kMagicBits = 0x4300;   // 128.0
  static constexpr int kMagicValue = 128;
  static constexpr int kMantBits = 7;
  static constexpr int kExpBias = 127;
  static constexpr int kExpBits = 8;
  static constexpr bool kIsBF16 = true;
};

template <> struct ComputeTraits<__half> {
  using T2 = __half2;
  static constexpr uint32_t kMagicBits = 0x6400;   // 1024.0: codes < 1024 fit the 10 mantissa bits
  static constexpr int kMagicValue = 1024;
  static constexpr int kMantBits = 10;
  static constexpr int kExpBias = 15;
  static constexpr int kExpBits = 5;
  static constexpr bool kIsBF16 = false;
};

// Reinterpret helpers (no conversion).
template <class T2> HUMMING_DEVICE T2 as_t2(uint32_t u) { return *reinterpret_cast<T2*>(&u); }
template <class T2> HUMMING_DEVICE uint32_t as_u32(T2 v) { return *reinterpret_cast<uint32_t*>(&v); }

// Packed 16-bit pair arithmetic, spelled once for both compute types.
// bf16 pair arithmetic exists from sm_80; on sm_75 (fp16 kernels only -- the host refuses bf16 there) the bf16
// overloads are still compiled, so they fall back to fp32 math.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
HUMMING_DEVICE __nv_bfloat162 sub2(__nv_bfloat162 a, __nv_bfloat162 b) { return __hsub2(a, b); }
HUMMING_DEVICE __nv_bfloat162 mul2(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }
HUMMING_DEVICE __nv_bfloat162 fma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) { return __hfma2(a, b, c); }
#else
HUMMING_DEVICE __nv_bfloat162 sub2(__nv_bfloat162 a, __nv_bfloat162 b) {
  const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b);
  return __floats2bfloat162_rn(x.x - y.x, x.y - y.y);
}
HUMMING_DEVICE __nv_bfloat162 mul2(__nv_bfloat162 a, __nv_bfloat162 b) {
  const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b);
  return __floats2bfloat162_rn(x.x * y.x, x.y * y.y);
}
HUMMING_DEVICE __nv_bfloat162 fma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b), z = __bfloat1622float2(c);
  return __floats2bfloat162_rn(fmaf(x.x, y.x, z.x), fmaf(x.y, y.y, z.y));
}
#endif
HUMMING_DEVICE __half2 sub2(__half2 a, __half2 b) { return __hsub2(a, b); }
HUMMING_DEVICE __half2 mul2(__half2 a, __half2 b) { return __hmul2(a, b); }
HUMMING_DEVICE __half2 fma2(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }

template <class T> HUMMING_DEVICE T from_float(float f);
template <> HUMMING_DEVICE __nv_bfloat16 from_float<__nv_bfloat16>(float f) { return __float2bfloat16_rn(f); }
template <> HUMMING_DEVICE __half from_float<__half>(float f) { return __float2half_rn(f); }
HUMMING_DEVICE float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
HUMMING_DEVICE float to_float(__half v) { return __half2float(v); }

template <class T2> HUMMING_DEVICE T2 pack2_from_float(float lo, float hi);
template <> HUMMING_DEVICE __nv_bfloat162 pack2_from_float<__nv_bfloat162>(float lo, float hi) {
  return __floats2bfloat162_rn(lo, hi);
}
template <> HUMMING_DEVICE __half2 pack2_from_float<__half2>(float lo, float hi) { return __floats2half2_rn(lo, hi); }

template <class T2, class T> HUMMING_DEVICE T2 broadcast2(T v);
template <> HUMMING_DEVICE __nv_bfloat162 broadcast2<__nv_bfloat162, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162bfloat162(v);
}
template <> HUMMING_DEVICE __half2 broadcast2<__half2, __half>(__half v) { return __half2half2(v); }

// lop3.b32: any 3-input bitwise function in one instruction; kLut is the truth table over (a, b, c) = (0xF0, 0xCC, 0xAA).
// Not volatile: a pure function of its inputs, so the compiler may common it up or drop it like any other expression.
template <int kLut> HUMMING_DEVICE uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
#ifdef HUMMING_EMULATE
  return emu::lop3(a, b, c, kLut);
#else
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(r) : "r"(a), "r"(b), "r"(c), "n"(kLut));
  return r;
#endif
}
// (a & b) | c
HUMMING_DEVICE uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) { return lop3<(0xF0 & 0xCC) | 0xAA>(a, b, c); }
// a ^ (b & c)
HUMMING_DEVICE uint32_t xor_and(uint32_t a, uint32_t b, uint32_t c) { return lop3<0xF0 ^ (0xCC & 0xAA)>(a, b, c); }
// (a & b) ^ c
HUMMING_DEVICE uint32_t and_xor(uint32_t a, uint32_t b, uint32_t c) { return lop3<(0xF0 & 0xCC) ^ 0xAA>(a, b, c); }

// Shift by a compile-time signed amount (left for positive).
template <int kShift> HUMMING_DEVICE uint32_t shift_left_signed(uint32_t v) {
  if constexpr (kShift > 0) return v << kShift;
  else if constexpr (kShift < 0) return v >> (-kShift);
  else return v;
}

template <class T> constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }
// std::conditional_t without the standard library (NVRTC compiles without it)
template <bool kCond, class A, class B> struct Conditional { using type = A; };
template <class A, class B> struct Conditional<false, A, B> { using type = B; };
template <bool kCond, class A, class B> using conditional_t = typename Conditional<kCond, A, B>::type;

// Programmatic dependent launch (sm_90+; no-ops below, and when the kernel was not launched with the PDL attribute).
// wait: block until the previous kernel in the stream has completed and its writes are visible -- everything before
// it may only touch memory no earlier kernel writes (the GEMMs prefetch their weights there).  launch_dependents:
// let the next PDL launch start its own prologue once every block of this grid has passed this point.
HUMMING_DEVICE void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
HUMMING_DEVICE void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Compile-time loop: static_for<N>(f) calls f(Int<0>{}), ..., f(Int<N-1>{}); the body sees the index as a constant
// expression (decltype(i)::value), which the dequant code needs for its shifts and register indices.
template <int V> struct Int { static constexpr int value = V; };
template <int I, int N> struct StaticFor {
  template <class F> HUMMING_DEVICE static void run(F&& f) {
    f(Int<I>{});
    StaticFor<I + 1, N>::run(f);
  }
};
template <int N> struct StaticFor<N, N> {
  template <class F> HUMMING_DEVICE static void run(F&&) {}
};
template <int N, class F> HUMMING_DEVICE void static_for(F&& f) { StaticFor<0, N>::run(f); }

// Compile-time type choice (NVRTC builds without the C++ standard library headers).
template <bool kCond, class A, class B> struct Select { using type = A; };
template <class A, class B> struct Select<false, A, B> { using type = B; };

// A gpu-scope acquire load (the split-K reducers' wait on a ticket, the stream-K join's
// look at one).
HUMMING_DEVICE int ld_acquire_gpu(const int* p) {
#ifdef HUMMING_EMULATE
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#else
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
#endif
}

// The split-K / stream-K tickets' gpu-scope fences: the release before a block bumps a ticket (its partial stores,
// ordered before thread 0 by a block barrier, become visible GPU-wide first: the fence is cumulative) and the acquire
// after the last block reads it.  fence.acq_rel is all the pattern needs; __threadfence() is fence.sc (MEMBAR.SC.GPU
// in SASS, a sequentially consistent fence); the two measured the same (session 21, b_bench_acqrel* vs b_bench_sc*).
HUMMING_DEVICE void fence_acq_rel_gpu() {
#ifdef HUMMING_EMULATE
  __atomic_thread_fence(__ATOMIC_ACQ_REL);
#else
  asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
#endif
}

// One acq_rel gpu-scope atomic add: a release of the block's earlier writes (cumulative: a block barrier before it
// orders the other threads' stores) and an acquire of what the earlier adders released -- the 8-token split-K ticket.
HUMMING_DEVICE int atom_add_acq_rel_gpu(int* p, int v) {
#ifdef HUMMING_EMULATE
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
#else
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
#endif
}

// gpu-scope relaxed 16-byte store / load: the polled split-K end (gemm_wna16.cuh, splitk_poll_end), where the fp32
// partials are their own ready flags -- a reader polls the very words a writer stores, so both sides are strong
// (relaxed, gpu scope) operations and the reader sees the value once it reaches L2.  Each of the 4 words is its own
// single-copy-atomic access (the memory model promises nothing for the 16 bytes as a whole): a reader checks every
// word.  ld.relaxed.gpu is served from L2, never a stale L1 line.
HUMMING_DEVICE void st_relaxed_gpu_f32x4(float* p, float4 v) {
#ifdef HUMMING_EMULATE
  __atomic_store_n(reinterpret_cast<uint32_t*>(p) + 0, __float_as_uint(v.x), __ATOMIC_RELAXED);
  __atomic_store_n(reinterpret_cast<uint32_t*>(p) + 1, __float_as_uint(v.y), __ATOMIC_RELAXED);
  __atomic_store_n(reinterpret_cast<uint32_t*>(p) + 2, __float_as_uint(v.z), __ATOMIC_RELAXED);
  __atomic_store_n(reinterpret_cast<uint32_t*>(p) + 3, __float_as_uint(v.w), __ATOMIC_RELAXED);
#else
  asm volatile("st.relaxed.gpu.global.v4.f32 [%0], {%1, %2, %3, %4};\n"
               :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
#endif
}

HUMMING_DEVICE float4 ld_relaxed_gpu_f32x4(const float* p) {
#ifdef HUMMING_EMULATE
  const uint32_t* q = reinterpret_cast<const uint32_t*>(p);
  return make_float4(__uint_as_float(__atomic_load_n(q + 0, __ATOMIC_RELAXED)),
                     __uint_as_float(__atomic_load_n(q + 1, __ATOMIC_RELAXED)),
                     __uint_as_float(__atomic_load_n(q + 2, __ATOMIC_RELAXED)),
                     __uint_as_float(__atomic_load_n(q + 3, __ATOMIC_RELAXED)));
#else
  float4 v;
  asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
  return v;
#endif
}

}  // namespace humming
