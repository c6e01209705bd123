// humming/gemm_wna16_sm90.cuh -- the WnA16 GEMM on sm_90+ as a warp-specialized, bulk-copy pipeline with a
// persistent stream-K schedule (the sm_90a default from 65 tokens on narrow layers, tuning/heuristics.py
// _bulk_defaults: there a split-K grid of 128 x 128 tiles leaves the 132 SMs unbalanced).  Same math
// (wna16_math.cuh), same packed layout (layout.cuh) and the same kernel arguments as gemm_wna16.cuh; only the way
// stages reach shared memory and the way work is split differ.
//
// Why: the cp.async kernel (every thread copies 16-byte pieces, then waits on cp.async.wait_group + __syncthreads)
// streams int2 weights no faster than int4 ones at M = 1 -- it is bound by the per-stage round trip, not by bytes.
// Here one PRODUCER warp keeps kStages stages in flight with a handful of bulk copies per stage (one per atom column
// of W -- a column of the block's rows is one contiguous run in layout.cuh --, one per token row of x, one per group
// of scales / zero terms), and the MATH warps only wait on the stage's mbarrier (bulk.cuh).  No block-wide barrier
// in the main loop.
//
// Work decomposition
//   tile  = kBT tokens x kBN weight rows of the output; tiles ordered token tile fastest, then weight-row tile.
//   unit  = one stage (kAtomsK x 64 K columns) of one tile; a tile has S = K64 / kBK units.
//   grid  = G persistent blocks (at most the resident slots); block b owns the contiguous unit range
//           [b * U / G, (b + 1) * U / G) of the U = tiles * S units ("stream-K"): every block streams the same number
//           of weight bytes (+-1 stage), there is no wave tail, and the pipeline never drains between tiles.
//   block = kWarpsN x kWarpsK math warps (wna16_math.cuh) + 1 producer warp (the last one).
// A tile covered by one block's range is written directly.  A tile split between blocks is joined as in the cp.async
// kernel (streamk_join_partial, stream_k.cuh): the contributor that finds the others' fp32 partial tiles parked in the workspace
// (slot = block, first-or-last segment of the block) sums them into its registers in block order (deterministic) and
// writes y; the others park theirs and leave.  It resets the counter, so counters are zero between calls (CUDA-graph
// replays need no memset).
//
// Requirements (checked on the host, which otherwise picks gemm_wna16.cuh): K % 64 == 0 and (K / 64) % kAtomsK == 0
// (every stage is a whole stage -- no zero-fill needed), x rows 16-byte aligned, N16 a multiple of 16 (always).
//
// wgmma (Cfg::kWgmma, sm_90a): the same schedule with wgmma.mma_async math warps (whole warpgroups).  The tensor
// cores read the activation tile through a descriptor, so it must have the 128-byte swizzle layout (chunk c of token
// row r at chunk position c ^ (r % 8), 1 KB aligned, one 64-column atom per stage).  A bulk copy cannot swizzle, so
// the 128 threads of the producer warpgroup copy x in 16-byte cp.async pieces and each adds one hardware arrival to
// the stage's `full` barrier when its pieces have landed (cp.async.mbarrier.arrive.noinc; W and the scales stay bulk
// copies that settle the transaction count).  The pieces are generic-proxy writes read by wgmma through the async
// proxy: every math thread executes fence.proxy.async after its wait on `full` (the barrier orders the writes before
// the fence; the fence orders them before this thread's asynchronous reads).
//
// kTmaX (wgmma only, KernelChoice.tma_x, short name "_tma_bulk"): x comes through a tensor map instead (tma.cuh): the
// producer's one active warp issues one box copy of kBT token rows x 64 columns per atom onto the stage's `full`
// barrier, so the stage completes on a single expect_tx arrival + its byte count, the unit writes x already swizzled
// (and zero-fills token rows past M), and the math threads need no proxy fence -- the unit writes through the async
// proxy that wgmma reads.  The other three producer warps only hand their registers over and leave.  A stage may then
// hold two atoms (kAtomsK == 2: one kBT x 64 sub-tile each, XTileAtomSwizzled), which halves the per-stage barrier
// traffic of the math warps, as in the cp.async kernel (session 15) -- or four (session 52, an experiment: fewer,
// bigger ring slots; the stream probe found each slot hand-off costing the stream beyond its bytes).
#pragma once

#include "humming/bulk.cuh"
#include "humming/stream_k.cuh"
#include "humming/tma.cuh"
#include "humming/wna16_math.cuh"

namespace humming {

// Shared-memory plan (must equal KernelChoice.smem_bytes for pipeline "bulk" in vllm_humming/tuning/heuristics.py).
// A stage is [W atoms][x tile][group scales][zero terms]; under wgmma [x tile][W][scales][zeros] on 1 KB boundaries
// (the swizzle is anchored to absolute address bits), with 1 KB of slack to align the dynamic shared-memory base.
template <class Cfg> struct BulkSmem {
  static constexpr int kXRowElems = Cfg::kWgmma ? Cfg::kBK : XTilePadded<Cfg::kBK>::kRowElems;
  static constexpr int kX = Cfg::kBT * kXRowElems * 2;
  static constexpr int kOffX = Cfg::kWgmma ? 0 : Cfg::kSmemW;
  static constexpr int kOffW = Cfg::kWgmma ? kX : 0;
  static constexpr int kOffS = Cfg::kWgmma ? kX + Cfg::kSmemW : Cfg::kSmemW + kX;
  static constexpr int kOffZ = kOffS + Cfg::kSmemS;
  static constexpr int kUsed = kOffZ + Cfg::kSmemZ;
  static constexpr int kAlign = Cfg::kWgmma ? 1024 : 16;
  static constexpr int kStage = (kUsed + kAlign - 1) / kAlign * kAlign;
  static constexpr int kRing = kStage * Cfg::kStages;
  static constexpr int kReduce = Cfg::kSmemReduce;   // not aliased with the ring: the producer streams on meanwhile
  static constexpr int kBars = 2 * Cfg::kStages * 8;
  static constexpr int kBytes = kRing + kReduce + kBars + 16 + (Cfg::kWgmma ? 1024 : 0);
  static_assert(kX % 16 == 0 && kStage % 16 == 0 && kReduce % 16 == 0, "bulk copies need 16-byte aligned targets");
  static_assert(!Cfg::kWgmma || kX % 1024 == 0, "wgmma: the x tile (8-row swizzle blocks of 1 KB) stays 1 KB aligned");
};

template <class Cfg, bool kTmaX = false>
__device__ __forceinline__ void gemm_wna16_sm90(const typename Cfg::T* __restrict__ x, const uint32_t* __restrict__ w,
                                                const typename Cfg::T* __restrict__ gscale,
                                                const typename Cfg::T* __restrict__ gzero,
                                                const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                const typename Cfg::T* __restrict__ bias,
                                                typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                int* __restrict__ tickets, int M, int N, int K, int N16, int K64,
                                                const TmaMap* x_map = nullptr) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!Cfg::kWgmma, "wgmma kernels are sm_90a only");
#endif
  static_assert(!Cfg::kWgmma || Cfg::kAtomsK == 1 || kTmaX,
                "bulk wgmma kernel: one atom per stage with the cp.async x copy plan (two or four with the tensor map)");
  static_assert(!kTmaX || Cfg::kWgmma, "the TMA x tile is the wgmma layout");
  using T = typename Cfg::T;
  using Smem = BulkSmem<Cfg>;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBK = Cfg::kBK;
  constexpr int kBT = Cfg::kBT;
  constexpr int kStages = Cfg::kStages;
  constexpr int kMathWarps = Cfg::kMathWarps;
  constexpr int kMathThreads = 32 * kMathWarps;
  constexpr int kProducerThreads = Cfg::kWgmma ? 128 : 32;   // wgmma: a producer warpgroup, every thread copies x
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kScaleCopies = Cfg::kGroupsPerStage * (Cfg::kZeroMode == kNoZero ? 1 : 2);

  extern __shared__ __align__(128) uint8_t smem_raw[];
  uint8_t* smem = smem_raw;
  if constexpr (Cfg::kWgmma) {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    smem = smem_raw + (((base + 1023u) & ~1023u) - base);
  }
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + Smem::kRing + Smem::kReduce);
  uint64_t* empty = full + kStages;
  int* last_flag = reinterpret_cast<int*>(empty + kStages);
  auto stage_w = [&](int s) { return reinterpret_cast<uint32_t*>(smem + s * Smem::kStage + Smem::kOffW); };
  auto stage_x = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffX); };
  auto stage_s = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffS); };
  auto stage_z = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffZ); };

  // warp index through a shuffle: ptxas then knows it is warp-uniform, so the role branch below is not a divergent
  // path (under wgmma, ptxas serializes the asynchronous MMAs of code it considers divergent)
  const int warp = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 32), 0);
  const int lane = threadIdx.x % 32;
  const int m_tiles = ceil_div(M, kBT);
  const int n_atoms = N16 / 16;
  const int units_per_tile = (K64 / 64) / Cfg::kAtomsK;
  const StreamKSchedule sched(m_tiles, ceil_div(N16, kBN), units_per_tile);   // stream_k.cuh
  const long long u_begin = sched.range_start(blockIdx.x);
  const long long u_end = sched.range_start(blockIdx.x + 1);

  if (threadIdx.x == 0) {
#pragma unroll 1
    for (int s = 0; s < kStages; ++s) {
      // the producer's arrive.expect_tx (wgmma: + one cp.async arrival per producer thread)
      mbar_init(full + s, (Cfg::kWgmma && !kTmaX) ? 1 + kProducerThreads : 1);
      mbar_init(empty + s, kMathWarps);   // one arrival per math warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  // register split under wgmma with more than one math warpgroup (0: none; one math warpgroup + the producer already
  // get 255 registers each): the producer keeps kProducerRegs, the math threads share the rest of the 64K file
  constexpr int kProducerRegs = 40;
  constexpr int kMathRegsRaw = (65536 - 128 * kProducerRegs) / kMathThreads / 8 * 8;
  // (also with 64 accumulators and three or more math warpgroups: the launch bound then leaves each thread 128 or
  // fewer registers, under which ptxas serializes the MMAs of 64 accumulators + an atom-wide fragment double buffer;
  // with 32 accumulators 128 suffice, and ptxas ignores a setmaxnreg there -- C7508)
  constexpr int kAccs = Cfg::kTilesM * kBT / 2;
  constexpr int kMathRegs = (kMathWarps <= 4 || kAccs < 64 || (kAccs < 128 && kMathWarps <= 8)) ? 0   // no need
                           : (kMathRegsRaw > 240 ? 240 : kMathRegsRaw);

  // ------------------------------------------------------------------------------------------------ producer warp
  // Under wgmma the producer is a whole warpgroup (ptxas budgets registers per warpgroup for wgmma kernels; a lone
  // 9th warp costs a warpgroup's worth anyway): it hands its registers to the math warpgroups (setmaxnreg), all of
  // its threads copy x, and its first warp issues the bulk copies of W and the scales.
  if (warp >= kMathWarps) {
    if constexpr (Cfg::kWgmma && kMathRegs > 0) setmaxnreg_dec<kProducerRegs>();
    if ((!Cfg::kWgmma || kTmaX) && warp != kMathWarps) return;   // one producer warp issues every copy
    const int ptid = threadIdx.x - kMathThreads;   // producer thread 0 .. kProducerThreads - 1
    if constexpr (kTmaX) {
      if (ptid == 0) tma_prefetch_map(x_map);
    }
    const uint64_t policy = make_l2_evict_first();
    // x copy plan (wgmma), fixed per thread for the whole range: thread p moves 16-byte chunk p % 8 of token rows
    // p / 8 + 16 i.  Rows 16 apart have the same r % 8, so the swizzled chunk position is one per-thread constant and
    // a piece costs a predicate, two adds and the cp.async (session 10: the rolled loop with a division and the
    // swizzle per piece took 31 instructions a piece, and the math warps waited on this producer -- ncu).
    constexpr int kXRowsPerPass = kProducerThreads / 8;
    constexpr int kXPasses = ceil_div(kBT, kXRowsPerPass);
    const int x_row = ptid / 8;
    const int x_chunk = ptid % 8;
    const int x_soff = x_row * 64 + ((x_chunk ^ (x_row % 8)) * 8);   // elements into the stage's x tile
    const size_t x_pass_stride = (size_t)kXRowsPerPass * K;            // elements between passes
    // the unit's (tile, stage) position, advanced incrementally (no 64-bit division per unit)
    int st = (int)(u_begin % units_per_tile);
    int tile = (int)(u_begin / units_per_tile);
    int mt = tile % m_tiles, nt = tile / m_tiles;
    int i = 0;
#pragma unroll 1
    for (long long u = u_begin; u < u_end; ++u, ++i) {
      const int s = i % kStages;
      const uint32_t phase = (i / kStages) & 1;
      const int ka0 = st * Cfg::kAtomsK;
      const int m0 = mt * kBT;
      const int n_atom0 = nt * (kBN / 16);
      const uint32_t w_bytes = min(kBN / 16, n_atoms - n_atom0) * kAtomWords * 4;   // one atom column, valid rows
      const int rows = min(kBT, M - m0);
      const uint32_t s_bytes = min(kBN, N16 - n_atom0 * 16) * 2;
      // bytes the stage's `full` barrier waits for: W atoms, x (bulk rows; or whole TMA boxes, zero-filled rows count
      // too; or nothing: the cp.async pieces arrive by count), scales / zero terms
      constexpr uint32_t kTmaXBytes = kTmaX ? Cfg::kAtomsK * kBT * 128 : 0;
      const uint32_t total = Cfg::kAtomsK * w_bytes + (Cfg::kWgmma ? kTmaXBytes : rows * (kBK * 2)) +
                             kScaleCopies * s_bytes;
      if (++st == units_per_tile) {
        st = 0;
        if (++mt == m_tiles) mt = 0, ++nt;
      }
      mbar_wait(empty + s, phase ^ 1);   // the math warps are done with this slot's previous contents
      if (ptid == 0) mbar_arrive_expect_tx(full + s, total);
      __syncwarp();
      if constexpr (Cfg::kWgmma && !kTmaX) {
        // x rows m0 .. m0 + rows - 1, swizzled; rows past M keep stale values, which only reach output columns
        // (tokens) that are never stored
        const T* xsrc = x + (size_t)(m0 + x_row) * K + (size_t)ka0 * 64 + x_chunk * 8;
        T* xdst = stage_x(s) + x_soff;
#pragma unroll
        for (int p = 0; p < kXPasses; ++p, xsrc += x_pass_stride) {
          if (x_row + p * kXRowsPerPass < rows) copy16_async(xdst + p * kXRowsPerPass * 64, xsrc, true);
        }
        mbar_arrive_cp_async(full + s);
      }
      if (warp != kMathWarps) continue;   // (wgmma) the other producer warps copy x only
      // copy j: W atom columns [0, kAtomsK), then x (kTmaX: one box per atom; bulk mma.sync: one copy per token
      // row), then the scale / zero-term groups
      constexpr int kXCopiesTma = kTmaX ? Cfg::kAtomsK : 0;
      const int x_copies = Cfg::kWgmma ? kXCopiesTma : rows;
      const int copies = Cfg::kAtomsK + x_copies + kScaleCopies;
#pragma unroll 1
      for (int j = lane; j < copies; j += 32) {
        if (j < Cfg::kAtomsK) {
          // atom column ka0 + j, atom rows n_atom0 .. : contiguous in layout.cuh's memory order
          const uint32_t* src = w + ((size_t)(ka0 + j) * n_atoms + n_atom0) * kAtomWords;
#ifdef HUMMING_NO_L2_HINT
          bulk_copy_g2s(stage_w(s) + j * (kBN / 16) * kAtomWords, src, w_bytes, full + s);
#else
          bulk_copy_g2s_hint(stage_w(s) + j * (kBN / 16) * kAtomWords, src, w_bytes, full + s, policy);
#endif
        } else if (kTmaX && j < Cfg::kAtomsK + x_copies) {
          const int a = j - Cfg::kAtomsK;
          tma_copy_box(stage_x(s) + a * (kBT * 64), x_map, (ka0 + a) * 64, m0, full + s);
        } else if (!Cfg::kWgmma && j < Cfg::kAtomsK + rows) {
          const int r = j - Cfg::kAtomsK;
          const T* src = x + (size_t)(m0 + r) * K + (size_t)ka0 * 64;
          bulk_copy_g2s(stage_x(s) + r * Smem::kXRowElems, src, kBK * 2, full + s);
        } else {
          const int q = j - Cfg::kAtomsK - x_copies;
          const int gi = Cfg::kZeroMode == kNoZero ? q : q / 2;
          const bool zero = Cfg::kZeroMode != kNoZero && (q % 2) == 1;
          const size_t off = (size_t)((ka0 * 64) / Cfg::kGroup + gi) * N16 + n_atom0 * 16;
          bulk_copy_g2s((zero ? stage_z(s) : stage_s(s)) + gi * kBN, (zero ? gzero : gscale) + off, s_bytes,
                        full + s);
        }
      }
    }
    return;   // bulk copies in flight complete on their own; the math warps keep the block alive until they land
  }

  // ------------------------------------------------------------------------------------------------ math warps
  if constexpr (Cfg::kWgmma && kMathRegs > 0) setmaxnreg_inc<kMathRegs>();
  const int wn = warp % Cfg::kWarpsN;
  const int wk = warp / Cfg::kWarpsN;
  // (wgmma: one kBT x 64 swizzled sub-tile per atom; with one atom per stage that is XTileSwizzled<64>)
  using XTile = typename Select<Cfg::kWgmma, XTileAtomSwizzled<kBT>, XTilePadded<kBK>>::type;
  Wna16Math<Cfg, XTile> math(wn, wk, lane);
  float* red = reinterpret_cast<float*>(smem + Smem::kRing);
  auto sync_math = [] { named_barrier_sync(1, kMathThreads); };

  // ---- end of a tile segment: units [seg_first, u] of tile u / S are in the accumulators
  auto end_segment = [&](long long u, long long seg_first) {
    const int st = (int)(u % units_per_tile);
    const long long tile = u / units_per_tile;
    const int m0 = (int)(tile % m_tiles) * kBT;
    const int n0 = (int)(tile / m_tiles) * kBN;
    math.reduce_k(red, sync_math);
    // A whole tile is written straight from the accumulators; a split one is parked, or finished by the contributor
    // that finds the others' parts (streamk_join_partial, stream_k.cuh), which then writes y the same way.  One copy
    // of the (fully unrolled) write loop serves both: two copies doubled this kernel's SASS (NOTES.md, session 14).
    const bool whole = (seg_first % units_per_tile == 0) && st == units_per_tile - 1;
    const int slot = seg_first == u_begin ? 0 : 1;   // a split tile's part: the block's first segment, or its last
    const bool write = whole || streamk_join_partial<Cfg>(math, sched, ws, tickets, (int)tile, slot, sync_math, last_flag);
    if (write && (Cfg::kWarpsK == 1 || wk == 0)) {
      math.for_each_output([&](int mr, int nr, float v) {
        const int n = n0 + nr, m = m0 + mr;
        if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(v, n, chscale, tscale, bias));
      });
    }
    // `red` is rewritten by the next segment's reduction; a split tile's last_flag is reused too
    if (!whole || Cfg::kWarpsK > 1) sync_math();
    math.clear();
  };

  if constexpr (Cfg::kWgmma) {
    // One tile segment at a time.  Each stage's MMAs stay in flight while the next stage is dequantized (into the
    // other fragment buffer: the loop is unrolled by two so the buffer index is a constant), and a slot is released
    // one stage late, once the MMAs that read it are done.  A segment ends with every MMA complete.
    long long u = u_begin;
    int i = 0;
#pragma unroll 1
    while (u < u_end) {
      const long long seg_first = u;
      const long long seg_end = min(u_end, (u / units_per_tile + 1) * units_per_tile);
      auto step = [&](auto buf_) {
        const int s = i % kStages;
        mbar_wait(full + s, (i / kStages) & 1);
        if constexpr (!kTmaX) fence_proxy_async_shared();   // the producer's cp.async pieces of x, before wgmma reads them
        math.template stage<decltype(buf_)::value>(stage_w(s), stage_x(s), stage_s(s), stage_z(s));
        math.template wait_mma<1>();   // the previous stage's MMAs are done: release its slot
        if (u != seg_first) mbar_arrive_lane0(empty + (i + kStages - 1) % kStages, lane);
        ++i;
        ++u;
      };
#pragma unroll 1
      while (u + 2 <= seg_end) {
        step(Int<0>{});
        step(Int<1>{});
      }
      if (u < seg_end) step(Int<0>{});
      math.template wait_mma<0>();
      mbar_arrive_lane0(empty + (i + kStages - 1) % kStages, lane);
      end_segment(u - 1, seg_first);
    }
  } else {
    int i = 0;
    long long seg_first = u_begin;   // first unit of the current tile segment
#pragma unroll 1
    for (long long u = u_begin; u < u_end; ++u, ++i) {
      const int s = i % kStages;
      mbar_wait(full + s, (i / kStages) & 1);
      math.stage(stage_w(s), stage_x(s), stage_s(s), stage_z(s));
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + s);
      const int st = (int)(u % units_per_tile);
      if (st != units_per_tile - 1 && u != u_end - 1) continue;
      end_segment(u, seg_first);
      seg_first = u + 1;
    }
  }
}

}  // namespace humming
