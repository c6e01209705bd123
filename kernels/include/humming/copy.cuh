// humming/copy.cuh -- global -> shared copies and shared -> register fragment loads.
//
// sm80+: cp.async (16-byte, L2-only ".cg", with zero-fill when the source is out of range), committed in groups that
// form the software pipeline.  sm75 has no cp.async: the same calls become a synchronous 16-byte load + store, which
// keeps the kernels correct there (the pipeline degenerates to one outstanding stage).
#pragma once

#include "humming/common.cuh"

namespace humming {

HUMMING_DEVICE uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// Copy 16 bytes global -> shared; when !valid the destination is zero-filled and the source is not read.
HUMMING_DEVICE void copy16_async(void* smem_dst, const void* gmem_src, bool valid) {
#if defined(HUMMING_EMULATE)
  emu::cp_async16(smem_dst, gmem_src, valid);   // lands at the cp_async_wait that retires its group
#elif __CUDA_ARCH__ >= 800
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem_dst)), "l"(gmem_src),
               "r"(src_size));
#else
  uint4 v = valid ? *reinterpret_cast<const uint4*>(gmem_src) : make_uint4(0, 0, 0, 0);
  *reinterpret_cast<uint4*>(smem_dst) = v;
#endif
}

// Weights are read exactly once.  (An L2 "evict_first" cache-hint variant was tried and dropped: with high register
// pressure ptxas 13.x assigned the cp.async memory descriptor to an odd uniform register pair, an illegal instruction
// on sm_90.)
HUMMING_DEVICE void copy16_async_stream(void* smem_dst, const void* gmem_src, bool valid) {
  copy16_async(smem_dst, gmem_src, valid);
}

HUMMING_DEVICE void cp_async_commit() {
#if defined(HUMMING_EMULATE)
  emu::cp_async_commit();
#elif __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int kPending> HUMMING_DEVICE void cp_async_wait() {
#if defined(HUMMING_EMULATE)
  emu::cp_async_wait(kPending);
#elif __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

// ldmatrix: four 8x8 b16 matrices; lane i supplies the row address of row (i % 8) of matrix (i / 8).  Thread (g, t)
// (g = lane / 4, t = lane % 4) receives, per matrix, the pair at row g, columns 2t and 2t+1.
HUMMING_DEVICE void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
#ifdef HUMMING_EMULATE
  emu::ldmatrix<4>(r, smem_row);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
#endif
}

HUMMING_DEVICE void ldmatrix_x2(uint32_t (&r)[2], const void* smem_row) {
#ifdef HUMMING_EMULATE
  emu::ldmatrix<2>(r, smem_row);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem_row)));
#endif
}

// Vector shared-memory loads of a thread's own packed weight words.
template <int kWords> HUMMING_DEVICE void load_words(uint32_t (&dst)[kWords], const uint32_t* src) {
  static_assert(kWords == 1 || kWords == 2 || kWords % 4 == 0, "plane words per lane: 1, 2, 4 or 8");
  if constexpr (kWords == 1) {
    dst[0] = src[0];
  } else if constexpr (kWords == 2) {
    uint2 v = *reinterpret_cast<const uint2*>(src);
    dst[0] = v.x; dst[1] = v.y;
  } else {
#pragma unroll
    for (int i = 0; i < kWords / 4; ++i) {
      uint4 v = reinterpret_cast<const uint4*>(src)[i];
      dst[4 * i] = v.x; dst[4 * i + 1] = v.y; dst[4 * i + 2] = v.z; dst[4 * i + 3] = v.w;
    }
  }
}

// 16 bytes of activations straight from global memory into registers, through L2 only (".cg", like cp.async.cg):
// the direct decode kernel's pass over x (gemm_wna16_direct.cuh, direct_window_pass) reads x this way after
// griddepcontrol.wait -- x was written by the previous kernel, so no non-coherent / L1 path.  The address must be
// 16-byte aligned (the host clones a misaligned x: GemmLayer.__call__).
HUMMING_DEVICE uint4 ldg16_cg(const void* src) {
#ifdef HUMMING_EMULATE
  return *reinterpret_cast<const uint4*>(src);
#else
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src));
  return v;
#endif
}

// The same words straight from global memory (gemm_wna16_direct.cuh): vector loads through the non-coherent path that
// do not allocate in L1 -- every packed weight byte is read exactly once.
template <int kWords> HUMMING_DEVICE void ldg_stream_words(uint32_t (&dst)[kWords], const uint32_t* src) {
#ifdef HUMMING_EMULATE
  for (int i = 0; i < kWords; ++i) dst[i] = src[i];
#else
  static_assert(kWords == 1 || kWords == 2 || kWords % 4 == 0, "plane words per lane: 1, 2, 4 or 8");
  if constexpr (kWords == 1) {
    asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(dst[0]) : "l"(src));
  } else if constexpr (kWords == 2) {
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n" : "=r"(dst[0]), "=r"(dst[1]) : "l"(src));
  } else {
#pragma unroll
    for (int i = 0; i < kWords / 4; ++i)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(dst[4 * i]), "=r"(dst[4 * i + 1]), "=r"(dst[4 * i + 2]), "=r"(dst[4 * i + 3])
                   : "l"(src + 4 * i));
  }
#endif
}

}  // namespace humming
