// humming/gemm_wna16_warp.cuh -- the cp.async WnA16 GEMM with WARP-PRIVATE pipelines: every warp copies the
// weights, activations and scales it consumes into its own shared-memory ring and waits only for its own copies
// (cp.async.wait_group + __syncwarp).  No block-wide barrier in the main loop.
//
// Why: with the math removed, gemm_wna16.cuh streams at ~2.45 TB/s on the H200 while a plain register-streaming
// kernel over the same layout reaches ~3.85 TB/s (NOTES.md).  The difference is the per-stage block barrier: no
// warp can refill its ring until the slowest warp of the block has consumed the stage.  Here each warp is its own
// pipeline; the price is that each warp copies its own x tile (x is small and L2-resident).
//
// Work decomposition: as gemm_wna16.cuh with kWarpsK == 1 -- grid = (token tiles, weight-row tiles, K splits),
// warp wn owns kTilesM m16 tiles (rows (wn * kTilesM + tm) * 16 ...) over the block's K range; split-K epilogue
// shared.  Per-warp ring slot: W [kAtomsK][kTilesM][atom] words, x [kBT][kBK] (XTileSwizzled), scales / zero terms
// [kGroupsPerStage][kTilesM * 16].
#pragma once

#include "humming/gemm_wna16.cuh"

namespace humming {

template <class Cfg> struct WarpRingSmem {
  static constexpr int kRows = Cfg::kTilesM * 16;                               // weight rows of one warp
  static constexpr int kW = Cfg::kAtomsK * Cfg::kTilesM * Cfg::kAtomWords * 4;
  static constexpr int kX = Cfg::kBT * Cfg::kBK * 2;
  static constexpr int kS = Cfg::kGroupsPerStage * kRows * 2;
  static constexpr int kZ = Cfg::kZeroMode == kNoZero ? 0 : kS;
  static constexpr int kSlot = kW + kX + kS + kZ;
  static constexpr int kWarp = kSlot * Cfg::kStages;
  static constexpr int kBytes = kWarp * Cfg::kWarpsN;
  static_assert(kW % 16 == 0 && kX % 16 == 0 && kS % 16 == 0, "16-byte aligned shared regions");
};

// Scale source over a warp's own [kGroupsPerStage][kTilesM * 16] slice.
template <class Cfg> struct WarpScales {
  using T = typename Cfg::T;
  const T* ss;
  const T* sz;
  int g;
  HUMMING_DEVICE T s(int gi, int tm, int h) const { return ss[gi * WarpRingSmem<Cfg>::kRows + tm * 16 + g + 8 * h]; }
  HUMMING_DEVICE T z(int gi, int tm, int h) const { return sz[gi * WarpRingSmem<Cfg>::kRows + tm * 16 + g + 8 * h]; }
};

template <class Cfg>
__device__ __forceinline__ void gemm_wna16_warp(const typename Cfg::T* __restrict__ x, const uint32_t* __restrict__ w,
                                                const typename Cfg::T* __restrict__ gscale,
                                                const typename Cfg::T* __restrict__ gzero,
                                                const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                const typename Cfg::T* __restrict__ bias,
                                                typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                int* __restrict__ tickets, int M, int N, int K, int N16, int K64,
                                                int atoms_per_split) {
  static_assert(Cfg::kWarpsK == 1, "warp-private rings: each warp covers the whole stage");
  using T = typename Cfg::T;
  using Smem = WarpRingSmem<Cfg>;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBK = Cfg::kBK;
  constexpr int kBT = Cfg::kBT;
  constexpr int kTG = Cfg::kTokenGroups;
  constexpr int kTilesM = Cfg::kTilesM;
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kStages = Cfg::kStages;

  extern __shared__ __align__(16) uint8_t smem[];
  const int lane = threadIdx.x % 32;
  const int wn = threadIdx.x / 32;
  uint8_t* ring = smem + wn * Smem::kWarp;
  auto slot_w = [&](int s) { return reinterpret_cast<uint32_t*>(ring + s * Smem::kSlot); };
  auto slot_x = [&](int s) { return reinterpret_cast<T*>(ring + s * Smem::kSlot + Smem::kW); };
  auto slot_s = [&](int s) { return reinterpret_cast<T*>(ring + s * Smem::kSlot + Smem::kW + Smem::kX); };
  auto slot_z = [&](int s) { return reinterpret_cast<T*>(ring + s * Smem::kSlot + Smem::kW + Smem::kX + Smem::kS); };

  const int m0 = blockIdx.x * kBT;
  const int n0 = blockIdx.y * Cfg::kBN;
  const int atom_row0 = n0 / 16 + wn * kTilesM;     // this warp's first atom row
  const int n_atoms = N16 / 16;
  const int k_atoms = K64 / 64;
  const int ka_begin = blockIdx.z * atoms_per_split;
  const int ka_end = min(k_atoms, ka_begin + atoms_per_split);
  const int num_stages = ka_end > ka_begin ? ceil_div(ka_end - ka_begin, Cfg::kAtomsK) : 0;
  const int num_groups = Cfg::kGroup ? ceil_div(K64, Cfg::kGroup) : 0;

  // One stage of this warp's data: global -> its ring slot (zero-filled where out of range).
  auto load_stage = [&](int it, int s) {
    const int ka0 = ka_begin + it * Cfg::kAtomsK;
    // W: kAtomsK x kTilesM atoms, each one contiguous run of kAtomWords words = kBits * 8 chunks of 16 bytes
    constexpr int kChunksPerAtom = kAtomWords / 4;
    constexpr int kWChunks = Cfg::kAtomsK * kTilesM * kChunksPerAtom;
#pragma unroll
    for (int c0 = 0; c0 < kWChunks; c0 += 32) {
      const int c = c0 + lane;
      if (kWChunks % 32 == 0 || c < kWChunks) {
        const int at = c / kChunksPerAtom;          // a * kTilesM + tm
        const int a = at / kTilesM, tm = at % kTilesM;
        const int ka = ka0 + a, row = atom_row0 + tm;
        const bool valid = ka < ka_end && row < n_atoms;
        const uint32_t* src = w + ((size_t)ka * n_atoms + row) * kAtomWords + (c % kChunksPerAtom) * 4;
        copy16_async(slot_w(s) + c * 4, valid ? src : w, valid);
      }
    }
    // x: kBT rows x kBK / 8 chunks, swizzled (XTileSwizzled)
    constexpr int kXChunksPerRow = kBK / 8;
#pragma unroll
    for (int c0 = 0; c0 < kBT * kXChunksPerRow; c0 += 32) {
      const int c = c0 + lane;
      if ((kBT * kXChunksPerRow) % 32 == 0 || c < kBT * kXChunksPerRow) {
        const int r = c / kXChunksPerRow, ch = c % kXChunksPerRow;
        const int col = ka0 * 64 + ch * 8;
        const bool valid = (m0 + r < M) && (col < K) && (ka0 + ch / 8 < ka_end);
        copy16_async(slot_x(s) + r * kBK + ((ch ^ (r % 8)) * 8), valid ? x + (size_t)(m0 + r) * K + col : x, valid);
      }
    }
    // group scales (and zero terms) of this warp's rows, kRows consecutive values per group
    if constexpr (Cfg::kGroup != 0) {
      constexpr int kChunksPerGroup = Smem::kRows / 8;
      constexpr int kChunks = Cfg::kGroupsPerStage * kChunksPerGroup;
      const int grp0 = (ka0 * 64) / Cfg::kGroup;
#pragma unroll
      for (int c0 = 0; c0 < kChunks; c0 += 32) {
        const int c = c0 + lane;
        if (kChunks % 32 == 0 || c < kChunks) {
          const int gi = c / kChunksPerGroup, ch = c % kChunksPerGroup;
          const int n = atom_row0 * 16 + ch * 8;
          const bool valid = (grp0 + gi < num_groups) && (n < N16);
          const size_t off = (size_t)(grp0 + gi) * N16 + n;
          copy16_async(slot_s(s) + gi * Smem::kRows + ch * 8, valid ? gscale + off : gscale, valid);
          if constexpr (Cfg::kZeroMode != kNoZero) {
            copy16_async(slot_z(s) + gi * Smem::kRows + ch * 8, valid ? gzero + off : gzero, valid);
          }
        }
      }
    }
  };

  Wna16Math<Cfg, XTileSwizzled<kBK>> math(wn, 0, lane);
  auto compute_stage = [&](int s) {
    const uint32_t* sw = slot_w(s);
    const T* sx = slot_x(s);
    const WarpScales<Cfg> scales{slot_s(s), slot_z(s), lane / 4};
#pragma unroll 1
    for (int a = 0; a < Cfg::kAtomsK; ++a) {
      uint32_t words[kTilesM][kBits];
#pragma unroll
      for (int tm = 0; tm < kTilesM; ++tm) load_atom_words<kBits>(words[tm], sw + (a * kTilesM + tm) * kAtomWords, lane);
      math.atom_with(words, [&](uint32_t (&b)[kTG][2], int f) { math.load_b(b, sx, a, f); }, scales, a);
    }
  };

  // The ring: the same schedule as gemm_wna16.cuh, with __syncwarp in place of __syncthreads.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_stages) load_stage(s, s);
    cp_async_commit();
  }
#pragma unroll 1
  for (int it = 0; it < num_stages; ++it) {
    cp_async_wait<kStages - 2>();
    __syncwarp();   // every lane's copies of stage `it` landed, and every lane is done with the slot refilled next
    const int nxt = it + kStages - 1;
    if (nxt < num_stages) load_stage(nxt, nxt % kStages);
    cp_async_commit();
    compute_stage(it % kStages);
  }
  cp_async_wait<0>();
  __syncthreads();   // the epilogue may reuse shared memory of other warps (ticket flag) -- once per block

  splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n0);
}

}  // namespace humming
