// humming/gemm_wna16_direct.cuh -- the WnA16 GEMM for decode (M <= 16): packed weights go from global memory
// straight into registers; only the activations and scales are staged in shared memory.
//
// Why: layout.cuh stores each lane's words of an atom contiguously and consecutive lanes contiguously, so one warp
// reads an atom (16 rows x 64 columns) with one coalesced 16-byte load per lane (int4) and the words land exactly
// where the m16n8k16 A fragment wants them.  Staging W through shared memory (cp.async ring or bulk copies) capped
// both earlier mainloops at ~2.5 TB/s even with the math removed; a plain register-streaming kernel over the same
// layout and access pattern reads 3.6-3.9 TB/s on the H200 (scripts/exp_stream.py, NOTES.md).
//
// Work decomposition
//   grid  = (token tiles, weight-row tiles, K splits); a K split is at most kAtomsK atom columns (the "range").
//   block = kWarpsN warps; warp wn owns kTilesM atom rows (16 weight rows each) over the whole range.
//   1. the block copies its x tile [kBT][range] (padded rows, XTilePadded) and the range's group scales / zero terms
//      into shared memory with cp.async -- meanwhile every warp already has its first kStages atoms' loads in flight;
//   2. each warp walks the range's atom columns with a kStages-deep ring of atoms in REGISTERS: it issues the load of
//      atom a + kStages before doing the math of atom a (Wna16Math::atom);
//   3. split-K epilogue shared with gemm_wna16.cuh (deterministic ticket reduction).
// No block-wide barrier after step 1.  kWarpsK must be 1 (each warp's K is the whole range).
#pragma once

#include "humming/gemm_wna16.cuh"

namespace humming {

// Shared-memory plan (must equal KernelChoice.smem_bytes for pipeline "direct" in vllm_humming/tuning/heuristics.py).
template <class Cfg> struct DirectSmem {
  static constexpr int kXRowElems = XTilePadded<Cfg::kBK>::kRowElems;
  static constexpr int kX = Cfg::kBT * kXRowElems * 2;
  static constexpr int kBytes = kX + Cfg::kSmemS + Cfg::kSmemZ;
  static_assert(kX % 16 == 0, "16-byte aligned shared regions");
};

template <class Cfg>
__device__ __forceinline__ void gemm_wna16_direct(const typename Cfg::T* __restrict__ x,
                                                  const uint32_t* __restrict__ w,
                                                  const typename Cfg::T* __restrict__ gscale,
                                                  const typename Cfg::T* __restrict__ gzero,
                                                  const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                  const typename Cfg::T* __restrict__ bias,
                                                  typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                  int* __restrict__ tickets, int M, int N, int K, int N16, int K64,
                                                  int atoms_per_split) {
  static_assert(Cfg::kWarpsK == 1, "direct loads: each warp covers the whole K range of its block");
  static_assert(!Cfg::kWgmma, "the direct mainloop issues mma.sync only (wgmma runs in gemm_wna16.cuh)");
  using T = typename Cfg::T;
  using Smem = DirectSmem<Cfg>;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBK = Cfg::kBK;          // the longest K range a block takes
  constexpr int kBT = Cfg::kBT;
  constexpr int kDepth = Cfg::kStages;   // atoms in flight per warp (register ring)
  constexpr int kTilesM = Cfg::kTilesM;
  constexpr int kAtomWords = Cfg::kAtomWords;

  extern __shared__ __align__(16) uint8_t smem[];
  T* sx = reinterpret_cast<T*>(smem);
  T* ss = reinterpret_cast<T*>(smem + Smem::kX);
  T* sz = reinterpret_cast<T*>(smem + Smem::kX + Cfg::kSmemS);

  const int lane = threadIdx.x % 32;
  const int wn = threadIdx.x / 32;
  const int m0 = blockIdx.x * kBT;
  const int n_atom0 = blockIdx.y * (kBN / 16);
  const int n0 = n_atom0 * 16;
  const int n_atoms = N16 / 16;
  const int ka_begin = blockIdx.z * atoms_per_split;
  const int n_at = min(atoms_per_split, K64 / 64 - ka_begin);   // atom columns of this block (<= kAtomsK)

  // ---- 2 (issued first): the first kDepth atoms of this warp, global -> registers
  uint32_t ring[kDepth][kTilesM][kBits];
  auto load_atom = [&](int a, uint32_t (&dst)[kTilesM][kBits]) {
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm) {
      const int atom_row = n_atom0 + wn * kTilesM + tm;
      if (a < n_at && atom_row < n_atoms) {
        load_atom_words<kBits>(dst[tm], w + ((size_t)(ka_begin + a) * n_atoms + atom_row) * kAtomWords, lane);
      } else {
#pragma unroll
        for (int i = 0; i < kBits; ++i) dst[tm][i] = 0u;   // rows past N: never written out
      }
    }
  };
#pragma unroll
  for (int d = 0; d < kDepth; ++d) load_atom(d, ring[d]);

  // ---- 1: x tile and the range's scales / zero terms -> shared memory
  {
    constexpr int kChunksPerRow = kBK / 8;
    for (int c = threadIdx.x; c < kBT * kChunksPerRow; c += blockDim.x) {
      const int r = c / kChunksPerRow;
      const int ch = c % kChunksPerRow;
      const int col = ka_begin * 64 + ch * 8;
      const bool valid = (m0 + r < M) && (ch < n_at * 8) && (col < K);   // zero-filled: K tail and padding rows
      copy16_async(sx + r * Smem::kXRowElems + ch * 8, valid ? x + (size_t)(m0 + r) * K + col : x, valid);
    }
    if constexpr (Cfg::kGroup != 0) {
      constexpr int kChunksPerGroup = kBN / 8;
      const int grp0 = (ka_begin * 64) / Cfg::kGroup;
      const int num_groups = ceil_div(K64, Cfg::kGroup);
      for (int c = threadIdx.x; c < Cfg::kGroupsPerStage * kChunksPerGroup; c += blockDim.x) {
        const int gi = c / kChunksPerGroup;
        const int ch = c % kChunksPerGroup;
        const bool valid = (grp0 + gi < num_groups) && (n0 + ch * 8 < N16);
        const size_t off = (size_t)(grp0 + gi) * N16 + n0 + ch * 8;
        copy16_async(ss + gi * kBN + ch * 8, valid ? gscale + off : gscale, valid);
        if constexpr (Cfg::kZeroMode != kNoZero) {
          copy16_async(sz + gi * kBN + ch * 8, valid ? gzero + off : gzero, valid);
        }
      }
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
  }

  // ---- 2: the register ring
  Wna16Math<Cfg, XTilePadded<kBK>> math(wn, 0, lane);
#pragma unroll 1
  for (int a0 = 0; a0 < n_at; a0 += kDepth) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int a = a0 + d;
      if (a < n_at) {
        uint32_t cur[kTilesM][kBits];
#pragma unroll
        for (int tm = 0; tm < kTilesM; ++tm)
#pragma unroll
          for (int i = 0; i < kBits; ++i) cur[tm][i] = ring[d][tm][i];
        load_atom(a + kDepth, ring[d]);   // refill the slot before the math: kDepth atoms stay in flight
        math.atom(cur, sx, ss, sz, a);
      }
    }
  }

  // ---- 3
  splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n0);
}

}  // namespace humming
