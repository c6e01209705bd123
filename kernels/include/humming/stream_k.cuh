// humming/stream_k.cuh -- the stream-K schedule shared by the persistent GEMM grids: the cp.async kernel with
// KernelChoice.stream_k (gemm_wna16.cuh) and the warp-specialized bulk kernel (gemm_wna16_sm90.cuh).
//
// Units are (tile, stage) pairs, tile-major with the token tile fastest; block b of a G-block grid owns the contiguous
// units [range_start(b), range_start(b + 1)).  Every block streams the same weight bytes (+-1 stage), so a tile count
// that does not divide into the resident slots leaves no SM idle.  A tile whose units belong to several blocks
// ("contributors" b_lo .. b_hi) is finished by one of them, which sums the fp32 partial tiles the others parked in
// the workspace, in block order (deterministic), and writes y: in the bulk kernel the last to arrive
// (streamk_sum_partials below, every partial read back); in the cp.async kernel the one that finds the others parked,
// its own part from its registers (streamk_join_partial, gemm_wna16.cuh).
//
// Workspace: ws [G][2][kBT * kBN] fp32, slot 0 = the block's first segment, slot 1 = its last (a middle segment always
// covers a whole tile and writes y directly).  Every contributor but b_lo starts inside the tile (slot 0); b_lo's
// partial is in slot 1 when its range began in an earlier tile.
#pragma once

#include "humming/wna16_math.cuh"

namespace humming {

struct StreamKSchedule {
  int m_tiles, units_per_tile;
  long long units, blocks;
  __device__ __forceinline__ StreamKSchedule(int m_tiles_, int n_tiles, int units_per_tile_)
      : m_tiles(m_tiles_), units_per_tile(units_per_tile_), units((long long)m_tiles_ * n_tiles * units_per_tile_),
        blocks(gridDim.x) {}
  __device__ __forceinline__ long long range_start(long long b) const { return b * units / blocks; }
  // the block whose range holds unit u: the largest b with range_start(b) <= u, i.e. b * U < (u + 1) * G
  __device__ __forceinline__ long long block_of(long long u) const { return ((u + 1) * blocks - 1) / units; }
};

// The last contributor's fixup: y[m0 .. min(M, m0 + kBT) - 1][n0 .. n0 + kBN - 1] (clipped to N) = epilogue(sum over
// the nb contributors' partials, in block order).  `part` = contributor b_lo's two slots, contributor b_lo + j's slot 0
// at part + 2 * j * kTile; `first` = b_lo's slot holding this tile.  Threads tid = 0 .. kThreads - 1 of the block.
//
// The sum is latency-bound (one L2 round trip per load): each thread takes kV float4 runs along N at a time and loads
// kJ contributors of each at once (kInFlight loads in flight), then adds them in block order.  (A rolled loop with one
// dependent load per contributor made this fixup cost more than the main loop at 128-token tiles: four contributors
// x 32 float4 per thread = 128 L2 round trips in a row.)
template <int kBT, int kBN, int kThreads, class T>
__device__ __forceinline__ void streamk_sum_partials(const float* part, const float* first, int nb, int tid,
                                                     T* __restrict__ y, const float* __restrict__ chscale,
                                                     const float* __restrict__ tscale, const T* __restrict__ bias,
                                                     int M, int N, int m0, int n0) {
  constexpr int kTile = kBT * kBN;
  constexpr int kVecsPerRow = kBN / 4;
  constexpr int kInFlight = 8;
  constexpr int kV = ceil_div(kTile / 4, kThreads) < 4 ? ceil_div(kTile / 4, kThreads) : 4;
  constexpr int kJ = kInFlight / kV;
  static_assert(kBN % 4 == 0 && kV >= 1 && kJ >= 1, "float4 runs along N");
  const int vecs = min(kBT, M - m0) * kVecsPerRow;   // valid token rows only
#pragma unroll 1
  for (int base = tid; base < vecs; base += kV * kThreads) {
    int e[kV];          // float offset of the run inside a partial tile, -1 past the valid rows
    float4 sum[kV];
#pragma unroll
    for (int i = 0; i < kV; ++i) {
      const int v = base + i * kThreads;
      e[i] = v < vecs ? (v / kVecsPerRow) * kBN + (v % kVecsPerRow) * 4 : -1;
      sum[i] = e[i] >= 0 ? __ldcg(reinterpret_cast<const float4*>(first + e[i])) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll 1
    for (int j = 1; j < nb; j += kJ) {
      float4 t[kJ][kV];
#pragma unroll
      for (int jj = 0; jj < kJ; ++jj)
#pragma unroll
        for (int i = 0; i < kV; ++i)
          t[jj][i] = (j + jj < nb && e[i] >= 0)
                         ? __ldcg(reinterpret_cast<const float4*>(part + (size_t)2 * (j + jj) * kTile + e[i]))
                         : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int jj = 0; jj < kJ; ++jj)   // block order; an absent contributor adds zeros (x + 0 == x)
#pragma unroll
        for (int i = 0; i < kV; ++i) {
          sum[i].x += t[jj][i].x; sum[i].y += t[jj][i].y; sum[i].z += t[jj][i].z; sum[i].w += t[jj][i].w;
        }
    }
#pragma unroll
    for (int i = 0; i < kV; ++i) {
      if (e[i] < 0) continue;
      const int m = m0 + e[i] / kBN, n = n0 + e[i] % kBN;
      const float vals[4] = {sum[i].x, sum[i].y, sum[i].z, sum[i].w};
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (n + q < N) y[(size_t)m * N + n + q] = from_float<T>(epilogue_value(vals[q], n + q, chscale, tscale, bias));
    }
  }
}

}  // namespace humming
