// humming/tma.cuh -- sm_90 tensor-map copies (the TMA unit's tiled mode) of the activation tile.
//
// A tensor map (CUtensorMap, 128 opaque bytes built on the host by cuTensorMapEncodeTiled: vllm_humming/jit/tma.py)
// describes x as a 2-D row-major matrix [M rows][K columns] of 16-bit elements and a box of kBT rows x 64 columns
// with the 128-byte swizzle.  ONE instruction from ONE thread then moves a whole kBT x 64 sub-tile of x into shared
// memory in exactly the layout wgmma's 128-byte-swizzle descriptor reads (XTileSwizzled<64>: 16-byte chunk c of row r
// at chunk position c ^ (r % 8), 1 KB per 8 rows -- the destination must be 1024-byte aligned, since the hardware
// applies the XOR to absolute address bits), and signals completion on an mbarrier by its byte count (bulk.cuh).
// Rows past M and columns past K are filled with zeros by the unit and still count toward the byte count, so every
// copy completes `kBT * 128` bytes.  This replaces the per-thread 16-byte cp.async pieces of the cp.async kernel,
// which cost the math warps ~8 copy instructions + addressing per thread per stage at 128 tokens (session 17: with
// those copies skipped the 256-token kernels ran 8-15 % faster).
//
// The map is a __grid_constant__ kernel parameter; its generic address is what the copy instruction takes.
//
// Two users: the cp.async wgmma kernel (gemm_wna16.cuh, tma_load_x: every thread executes the predicated copy, thread 0
// alone issues it) and the bulk wgmma kernel (gemm_wna16_sm90.cuh, tma_copy_box: its producer warp branches freely).
//
// Measured and not kept (session 17): the W atoms and group scales as bulk copies on the same slot barrier too, so
// that the math threads issue no copies at all -- slower everywhere on the H200 (int4, M=64: 15.0 / 40.1 / 22.6 vs
// 14.6 / 36.7 / 21.8 us; M=256: 30.5 / 110.8 / 56.8 vs 28.2 / 106.7 / 54.0; results/h200-2026-12-02-s17/
// d_sweep_tmaw_*.txt): the 16-byte cp.async pieces of W spread over every thread keep more requests in flight than
// one thread's bulk copies of a few KB.
#pragma once

#include "humming/bulk.cuh"

namespace humming {

struct alignas(64) TmaMap {
  uint64_t opaque[16];
};

// Thread 0 of the block (a predicated instruction in every thread, no branch: under wgmma ptxas serializes the
// asynchronous MMAs around code it considers divergent) expects `bytes` more on `bar` and issues kCopies box copies:
// copy a lands at smem_dst + a * dst_step_bytes from box origin (column col0 + 64 a, row row0); copies a >= valid
// read from column oob_col instead (outside the tensor: the unit fills the box with zeros).
template <int kCopies>
HUMMING_DEVICE void tma_load_x(void* smem_dst, int dst_step_bytes, const TmaMap* map, int col0, int valid,
                               int oob_col, int row0, uint64_t* bar, uint32_t bytes, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t dst = smem_u32(smem_dst);
  const uint32_t b = smem_u32(bar);
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.eq.s32 p, %1, 0;\n"
      "  @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %2;\n"
      "}\n" ::"r"(b),
      "r"(tid), "r"(bytes)
      : "memory");
#pragma unroll
  for (int a = 0; a < kCopies; ++a) {
    const int col = a < valid ? col0 + 64 * a : oob_col;
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  setp.eq.s32 p, %1, 0;\n"
        "  @p cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%2, {%3, %4}], "
        "[%5];\n"
        "}\n" ::"r"(dst + a * dst_step_bytes),
        "r"(tid), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row0), "r"(b)
        : "memory");
  }
#else
  __trap();
#endif
}

// One box copy (kBT rows x 64 columns from (col, row0)) into smem_dst, completing on `bar`, issued by the calling
// thread alone -- for a producer warp, whose code may branch (it issues no MMAs).  The caller has already declared
// the bytes on `bar` (arrive.expect_tx).
HUMMING_DEVICE void tma_copy_box(void* smem_dst, const TmaMap* map, int col, int row0, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
      ::"r"(smem_u32(smem_dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row0), "r"(smem_u32(bar))
      : "memory");
#else
  __trap();
#endif
}

// Bring the map into the TMA unit's descriptor cache ahead of the first copy.
HUMMING_DEVICE void tma_prefetch_map(const TmaMap* map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
#endif
}

}  // namespace humming
