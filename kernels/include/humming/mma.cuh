// humming/mma.cuh -- warp-level tensor-core MMA wrappers.
//
// D[16x8] += A[16x16] * B[16x8], fp32 accumulators.  Fragment ownership for thread (g = lane/4, t = lane%4):
//   A: a[0] = {A[g][2t],   A[g][2t+1]}     a[1] = {A[g+8][2t],   A[g+8][2t+1]}
//      a[2] = {A[g][2t+8], A[g][2t+9]}     a[3] = {A[g+8][2t+8], A[g+8][2t+9]}
//   B: b[0] = {B[2t][g],   B[2t+1][g]}     b[1] = {B[2t+8][g],   B[2t+9][g]}
//   D: d[0] = D[g][2t]  d[1] = D[g][2t+1]  d[2] = D[g+8][2t]  d[3] = D[g+8][2t+1]
// The GEMM kernels put the (dequantized) weight in A -- rows are output channels -- and the activations in B -- columns
// are tokens ("swap AB"), so a decode step with one token wastes 7/8 of an n8 tile instead of 15/16 of an m16 tile.
//
// sm80+ : one mma.sync.m16n8k16 (bf16 or f16).
// sm75  : f16 only, as two mma.sync.m16n8k8 (k 0..7 uses a[0], a[1], b[0]; k 8..15 uses a[2], a[3], b[1]).
#pragma once

#include "humming/common.cuh"

namespace humming {

template <class T> HUMMING_DEVICE void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <> HUMMING_DEVICE void mma_16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(HUMMING_EMULATE)
  emu::mma_16816<__nv_bfloat16>(d, a, b);
#elif __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  // bf16 tensor-core MMA does not exist before sm80; the host-side selection refuses bf16 on sm75.
  __trap();
#endif
}

template <> HUMMING_DEVICE void mma_16816<__half>(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(HUMMING_EMULATE)
  emu::mma_16816<__half>(d, a, b);
#elif __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#endif
}

// d = a * b (no accumulator input): starts a fresh partial sum without zeroing registers first.
template <class T> HUMMING_DEVICE void mma_16816_first(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  d[0] = d[1] = d[2] = d[3] = 0.f;
  mma_16816<T>(d, a, b);   // ptxas folds the zero accumulator into the instruction (RZ operand)
}

}  // namespace humming
