// humming/stream_k.cuh -- the stream-K schedule shared by the persistent GEMM grids: the cp.async kernel with
// KernelChoice.stream_k (gemm_wna16.cuh) and the warp-specialized bulk kernel (gemm_wna16_sm90.cuh).
//
// Units are (tile, stage) pairs, tile-major with the token tile fastest; block b of a G-block grid owns the contiguous
// units [range_start(b), range_start(b + 1)).  Every block streams the same weight bytes (+-1 stage), so a tile count
// that does not divide into the resident slots leaves no SM idle.  A tile whose units belong to several blocks
// ("contributors" b_lo .. b_hi) is finished by one of them, which sums the fp32 partial tiles the others parked in
// the workspace, in block order (deterministic), and writes y (streamk_join_partial below, shared by both kernels).
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

// Stream-K partial tiles are parked in fragment order: float4 i (= accumulators acc[i / kTG][i % kTG][0..3]) of
// holder thread h (warps wk == 0: h = wn * 32 + lane) at float offset (i * kHolders + h) * 4 of the block's slot, so
// parking and reading back are both one coalesced float4 per thread and step, straight from / into the registers.
template <class Cfg> struct StreamKPartial {
  static constexpr int kVecs = Cfg::kTilesM * Cfg::kTokenGroups;   // float4s per holder thread
  static constexpr int kHolders = 32 * Cfg::kWarpsN;
  static constexpr int kFloats = kVecs * kHolders * 4;
  static_assert(kFloats == Cfg::kBT * Cfg::kBN, "a parked partial fills the kBT x kBN slot of the workspace");
  HUMMING_DEVICE static float* at(float* slot, int i, int h) { return slot + ((size_t)i * kHolders + h) * 4; }
};

// Join a partial segment of `tile` (the accumulators hold this block's units of it, after the K reduction) with the
// tile's other contributors b_lo .. b_hi (above).  Exactly one contributor finishes the tile: the one that
// finds every other partial parked (the counter at nb - 1 before it parks its own -- the usual case: the head of a
// tile is the last segment of b_lo's range, its tail the first of b_lo + 1's, done long before) or, failing that, the
// one whose own parking brings the counter to nb.  Every other one parks its partial, bumps the counter and leaves
// (returns false).  The finisher returns true with the tile's sum in its accumulators, summed in block order -- the
// same additions in the same order whoever finishes, so the result is deterministic -- and resets the counter (zero
// between calls: CUDA-graph replays need no memset).  The usual finisher, b_lo, parks nothing and reads only the
// others' parts: one L2 round trip per 16 float4s per thread (the last-arrival sum it replaces wrote its own part,
// fenced, and read every part back through shared memory).  Called by every math thread; `sync` is a barrier over
// them (__syncthreads in the cp.async kernel, a named barrier in the bulk kernel, whose producer warps stream on) and
// `role` a shared int.
template <class Cfg, class Math, class Sync>
__device__ __forceinline__ bool streamk_join_partial(Math& math, const StreamKSchedule& sched, float* __restrict__ ws,
                                                     int* __restrict__ tickets, int tile, int slot, Sync&& sync,
                                                     int* role) {
  using P = StreamKPartial<Cfg>;
  constexpr int kTG = Cfg::kTokenGroups;
  const long long tile_first = (long long)tile * sched.units_per_tile;
  const long long b_lo = sched.block_of(tile_first);
  const int nb = (int)(sched.block_of(tile_first + sched.units_per_tile - 1) - b_lo) + 1;
  const int me = (int)((long long)blockIdx.x - b_lo);
  const bool holder = math.wk == 0;
  const int h = math.wn * 32 + math.lane;
  // contributor c's slot: b_lo's segment of the tile is its first (slot 0) only when its range starts at the tile;
  // every later contributor's range starts inside the tile (slot 0)
  auto slot_of = [&](int c) {
    const int sl = (c == 0 && sched.range_start(b_lo) < tile_first) ? 1 : 0;
    return ws + ((size_t)(b_lo + c) * 2 + sl) * P::kFloats;
  };
  // *role: 0 = park and leave; 1 = finish (all others parked); 2 = finish after parking
  if (threadIdx.x == 0) {
    const int seen = ld_acquire_gpu(tickets + tile);
    *role = seen == nb - 1 ? 1 : 0;
    if (seen == nb - 1) fence_acq_rel_gpu();
  }
  sync();
  const bool finish = *role == 1;
  // Park unless finishing as b_lo.  A later contributor that finishes (a middle one, or the rare race) parks too:
  // it then sums every part from the workspace (its loads see its own stores), in the same order as b_lo would.
  if (holder && (!finish || me != 0)) {
    float* mine = ws + ((size_t)blockIdx.x * 2 + slot) * P::kFloats;
    static_for<P::kVecs>([&](auto i_) {
      constexpr int i = decltype(i_)::value;
      const float* a = math.acc[i / kTG][i % kTG];
      __stcg(reinterpret_cast<float4*>(P::at(mine, i, h)), make_float4(a[0], a[1], a[2], a[3]));
    });
  }
  if (!finish) {
    sync();
    if (threadIdx.x == 0) {
      fence_acq_rel_gpu();
      const int prev = atomicAdd(tickets + tile, 1);
      *role = prev == nb - 1 ? 2 : 0;
      if (prev == nb - 1) fence_acq_rel_gpu();
    }
    sync();
    if (*role == 0) return false;
  }
  if (threadIdx.x == 0) tickets[tile] = 0;   // every other contributor has bumped it already
  if (!holder) return true;
  // Sum in block order, kBatch float4 loads in flight per thread: b_lo (me == 0) adds parts 1.. straight into its
  // registers; a later finisher starts its registers at -0 (-0 + x == x for every x, signed zeros included) and
  // adds parts 0.. -- the same additions in the same order either way.
  constexpr int kBatch = P::kVecs < 16 ? P::kVecs : 16;
  if (me != 0) {
    static_for<P::kVecs>([&](auto i_) {
      constexpr int i = decltype(i_)::value;
      float* a = math.acc[i / kTG][i % kTG];
      a[0] = a[1] = a[2] = a[3] = -0.f;
    });
  }
#pragma unroll 1
  for (int c = me == 0 ? 1 : 0; c < nb; ++c) {
    float* part = slot_of(c);
    static_for<ceil_div(P::kVecs, kBatch)>([&](auto b_) {
      constexpr int i0 = decltype(b_)::value * kBatch;
      float4 v[kBatch];
      static_for<kBatch>([&](auto j_) {
        constexpr int i = i0 + decltype(j_)::value;
        if constexpr (i < P::kVecs) v[decltype(j_)::value] = __ldcg(reinterpret_cast<const float4*>(P::at(part, i, h)));
      });
      static_for<kBatch>([&](auto j_) {
        constexpr int i = i0 + decltype(j_)::value;
        if constexpr (i < P::kVecs) {
          float* a = math.acc[i / kTG][i % kTG];
          const float4 t = v[decltype(j_)::value];
          a[0] += t.x; a[1] += t.y; a[2] += t.z; a[3] += t.w;
        }
      });
    });
  }
  return true;
}

}  // namespace humming
