// JIT engine self-test kernel: a small, complete bf16 GEMM tile kernel that exercises what real kernels need from the
// JIT (templates, inline PTX, static or dynamic shared memory, arch guards).  Used by tests/test_jit*.py and by
// `vllm-humming compile-report` until the real GEMM kernels provide their own specs.
//
//   C[M, N] (fp32, row-major) = alpha * A[M, K] (bf16, row-major) x B[N, K]^T (bf16, K contiguous)
//
// One CTA computes a BM x BN tile with WARPS_M x WARPS_N warps; each warp owns a (BM/WARPS_M) x (BN/WARPS_N) sub-tile
// made of 16x8 MMA tiles.  K advances by BK through shared memory (rows padded by 8 elements).  On sm_80+ the inner
// product is mma.sync.m16n8k16 (bf16 in, fp32 accumulate); on sm_75 (no bf16 MMA) the same fragment ownership is
// computed with scalar FMAs, so every target gives the same result up to fp32 summation order.  Out-of-range rows /
// columns / K are zero-filled on load and masked on store: any M, N, K >= 1 works.
//
// The host side (vllm_humming/jit/selftest.py) generates the extern "C" entry point and the launch geometry.
#pragma once

namespace humming {
namespace selftest {

typedef unsigned short bf16_raw;  // raw bf16 bits: avoids <cuda_bf16.h> and keeps the self-test compile fast
typedef unsigned int u32;

__device__ __forceinline__ float bf16_to_f32(bf16_raw x) { return __uint_as_float(static_cast<u32>(x) << 16); }

__device__ __forceinline__ u32 ld_shared_u32(const bf16_raw* p) { return *reinterpret_cast<const u32*>(p); }

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N>
struct TileShape {
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kWarpM = BM / WARPS_M;
  static constexpr int kWarpN = BN / WARPS_N;
  static constexpr int kMmaM = kWarpM / 16;  // 16-row MMA tiles per warp
  static constexpr int kMmaN = kWarpN / 8;   // 8-column MMA tiles per warp
  static constexpr int kLds = BK + 8;        // padded shared-memory row stride (elements)
  static constexpr int kSmemBytes = (BM + BN) * kLds * 2;
  static_assert(BM % (16 * WARPS_M) == 0, "BM must be a multiple of 16 * WARPS_M");
  static_assert(BN % (8 * WARPS_N) == 0, "BN must be a multiple of 8 * WARPS_N");
  static_assert(BK % 16 == 0, "BK must be a multiple of 16");
};

// DYNAMIC_SMEM: take the A/B tiles from dynamic shared memory (the launch passes TileShape::kSmemBytes; above 48 KiB
// that needs the max-dynamic-shared-memory attribute) instead of static __shared__ arrays.
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, bool DYNAMIC_SMEM>
__device__ __forceinline__ void gemm_tile(const bf16_raw* __restrict__ A, const bf16_raw* __restrict__ B,
                                          float* __restrict__ C, int M, int N, int K, float alpha) {
  using S = TileShape<BM, BN, BK, WARPS_M, WARPS_N>;
  constexpr int LDS = S::kLds;
  bf16_raw* sA;
  bf16_raw* sB;
  if constexpr (DYNAMIC_SMEM) {
    extern __shared__ __align__(16) unsigned char humming_selftest_dyn_smem[];
    sA = reinterpret_cast<bf16_raw*>(humming_selftest_dyn_smem);
    sB = sA + BM * LDS;
  } else {
    __shared__ __align__(16) bf16_raw static_a[BM * LDS];
    __shared__ __align__(16) bf16_raw static_b[BN * LDS];
    sA = static_a;
    sB = static_b;
  }

  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int g = lane >> 2, t = lane & 3;  // MMA fragment coordinates: group (row) and thread-in-group (column pair)
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[S::kMmaM][S::kMmaN][4];
#pragma unroll
  for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < S::kMmaN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += S::kThreads) {
      const int r = i / BK, c = i % BK, gm = m0 + r, gk = k0 + c;
      sA[r * LDS + c] = (gm < M && gk < K) ? A[static_cast<long long>(gm) * K + gk] : bf16_raw(0);
    }
    for (int i = tid; i < BN * BK; i += S::kThreads) {
      const int r = i / BK, c = i % BK, gn = n0 + r, gk = k0 + c;
      sB[r * LDS + c] = (gn < N && gk < K) ? B[static_cast<long long>(gn) * K + gk] : bf16_raw(0);
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      u32 a[S::kMmaM][4], b[S::kMmaN][2];
#pragma unroll
      for (int i = 0; i < S::kMmaM; ++i) {
        const bf16_raw* p = sA + (wm * S::kWarpM + i * 16) * LDS + kk + 2 * t;
        a[i][0] = ld_shared_u32(p + g * LDS);
        a[i][1] = ld_shared_u32(p + (g + 8) * LDS);
        a[i][2] = ld_shared_u32(p + g * LDS + 8);
        a[i][3] = ld_shared_u32(p + (g + 8) * LDS + 8);
      }
#pragma unroll
      for (int j = 0; j < S::kMmaN; ++j) {
        const bf16_raw* p = sB + (wn * S::kWarpN + j * 8 + g) * LDS + kk + 2 * t;
        b[j][0] = ld_shared_u32(p);
        b[j][1] = ld_shared_u32(p + 8);
      }
#pragma unroll
      for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < S::kMmaN; ++j)
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
              "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
              : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
              : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
#else
      // sm_75: same ownership as the MMA accumulator fragment: acc[.][.][0..1] -> row g, columns 2t, 2t+1;
      // acc[.][.][2..3] -> row g + 8, same columns.
      // (Kept compact -- no full unroll of k -- so the sm_75 compile stays fast; this path is not tuned.)
#pragma unroll
      for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < S::kMmaN; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            const bf16_raw* pa = sA + (wm * S::kWarpM + i * 16 + g + (r >> 1) * 8) * LDS + kk;
            const bf16_raw* pb = sB + (wn * S::kWarpN + j * 8 + 2 * t + (r & 1)) * LDS + kk;
            float s = acc[i][j][r];
#pragma unroll 1
            for (int k = 0; k < 16; ++k) s = fmaf(bf16_to_f32(pa[k]), bf16_to_f32(pb[k]), s);
            acc[i][j][r] = s;
          }
#endif
    }
    __syncthreads();
  }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // sm_90a only: warpgroup-MMA ordering instructions, executed uniformly by every warpgroup of the CTA (no wgmma is
  // in flight, so they have no effect).  They exist only on the arch-specific target, so this proves that path is
  // compiled and assembled for sm_90a; compiling them for plain sm_90 would fail.
  // (Only when the CTA is made of whole warpgroups: the .aligned forms need all 128 threads of a warpgroup.)
  if constexpr (S::kThreads % 128 == 0) {
    asm volatile(
        "wgmma.fence.sync.aligned;\n"
        "wgmma.commit_group.sync.aligned;\n"
        "wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
#endif

#pragma unroll
  for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < S::kMmaN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = m0 + wm * S::kWarpM + i * 16 + g + (r >> 1) * 8;
        const int col = n0 + wn * S::kWarpN + j * 8 + 2 * t + (r & 1);
        if (row < M && col < N) C[static_cast<long long>(row) * N + col] = alpha * acc[i][j][r];
      }
}

}  // namespace selftest
}  // namespace humming
