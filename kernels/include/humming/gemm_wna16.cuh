// humming/gemm_wna16.cuh -- y[M, N] = x[M, K] * dequant(W[N, K])^T with 16-bit activations (WnA16).
//
// One template for every weight format: the element family (dequant.cuh) and the scale/zero mode are template
// parameters; the execution choice (tile shape, warps, stages, split-K) is another set.  Neither knows the other.
//
// Work decomposition
//   grid  = (token tiles, weight-row tiles, K splits).  Token tiles vary fastest, so the blocks that share a tile of W
//           run together and re-read it from L2 rather than HBM.
//   block = kWarpsN x kWarpsK warps.  Warp (wn, wk) owns kTilesM x 16 weight rows and, in every pipeline stage, the
//           atom columns wk, wk + kWarpsK, ... of the stage (intra-block split-K, reduced through shared memory at the
//           end); it covers all kBT tokens of the block.
//   MMA   = m16n8k16 with W as A (rows = output channels) and x as B (columns = tokens).
// Pipeline: kStages-deep cp.async ring of (W atoms, x tile, group scales [, zero points]) per kAtomsK x 64 columns.
// With kTmaX (wgmma only, KernelChoice.tma_x) the x tile of a stage comes instead as one TMA box copy per atom, issued
// by thread 0 and completing on the slot's mbarrier (tma.cuh); W and the scales stay cp.async pieces.
// Split-K across blocks (gridDim.z > 1): every split writes fp32 partials to a workspace; the last block of a tile
// to arrive (atomic ticket) sums them in split order -- deterministic -- and runs the epilogue.  It also resets the
// ticket, so the counters stay zero between calls and CUDA-graph replays need no memset.
// Stream-K (template flag kStreamK, KernelChoice.stream_k): a persistent 1-D grid instead, block b walks its range of
// (tile, stage) units (stream_k.cuh) one tile segment at a time -- the same pipeline per segment (run_segment), a
// split tile finished by the contributor that finds the others' partials parked (streamk_join_partial).  Slower than split-K for the 128-row tiles at the bench shapes
// (session 8, NOTES.md); the 256-row wgmma tiles take it from 257 tokens on sm_90a, where split-K grids of whole
// tiles fall into 1-2 wave cliffs (session 12).
#pragma once

#include "humming/cluster.cuh"
#include "humming/stream_k.cuh"
#include "humming/tma.cuh"
#include "humming/wna16_math.cuh"

namespace humming {









// wgmma kernels stage their fp32 output tile in shared memory for the epilogue (see splitk_epilogue); it reuses
// the ring.
template <class Cfg> struct EpilogueTile {
  static constexpr int kLd = Cfg::kBN + 4;
  static constexpr int kBytes = Cfg::kWgmma ? Cfg::kBT * kLd * 4 : 0;
};

// Shared-memory plan of the cp.async ring (must equal KernelChoice.smem_bytes in vllm_humming/tuning/heuristics.py).
// A stage is [W atoms][x tile][group scales][zero terms].  Under wgmma the x tile comes first and every stage starts
// on a 1024-byte boundary (the 128-byte swizzle the tensor cores apply is anchored to absolute address bits), and the
// kernel aligns the dynamic shared-memory base itself, hence the 1 KB of slack.  With the x tile through the TMA
// unit (kTmaX) one mbarrier and one release counter per ring slot follow the ring (never aliased: the epilogue reuses
// only the ring).
template <class Cfg, bool kTmaX = false> struct CpAsyncSmem {
  static constexpr int kX = Cfg::kBT * Cfg::kBK * 2;   // x: swizzled rows (mma.sync), one sub-tile per atom (wgmma)
  static constexpr int kOffX = Cfg::kWgmma ? 0 : Cfg::kSmemW;
  static constexpr int kOffW = Cfg::kWgmma ? kX : 0;
  static constexpr int kOffS = Cfg::kSmemW + kX;
  static constexpr int kOffZ = kOffS + Cfg::kSmemS;
  static constexpr int kUsed = kOffZ + Cfg::kSmemZ;
  static constexpr int kAlign = Cfg::kWgmma ? 1024 : 16;
  static constexpr int kStage = (kUsed + kAlign - 1) / kAlign * kAlign;
  static constexpr int kRingOnly = kStage * Cfg::kStages > Cfg::kSmemReduce ? kStage * Cfg::kStages : Cfg::kSmemReduce;
  static constexpr int kRing = kRingOnly > EpilogueTile<Cfg>::kBytes ? kRingOnly : EpilogueTile<Cfg>::kBytes;
  static constexpr int kOffBars = kRing;
  // (kTmaX: after the mbarriers, one 32-bit release counter per ring slot for decoupled warpgroups -- see kDecoupled)
  static constexpr int kOffCounters = kOffBars + 8 * Cfg::kStages;
  static constexpr int kBytes = kRing + (kTmaX ? 12 * Cfg::kStages : 0) + (Cfg::kWgmma ? 1024 : 0);
  static_assert(!kTmaX || Cfg::kWgmma, "the TMA x tile is a wgmma-kernel layout");
  static_assert(kX % 16 == 0, "16-byte aligned shared regions");
  static_assert(!Cfg::kWgmma || kX % 1024 == 0, "wgmma: the x tile (8-row swizzle blocks of 1 KB) stays 1 KB aligned");
};

// Kernel `flags` bits (set by the host, GemmLayer._plan in vllm_humming/ops/gemm.py):
//   kFlagPdlEarlyRelease: release the next PDL launch right after griddepcontrol.wait instead of after the main loop
//                         (the host sets it when this grid fills the resident block slots)
//   bits kFlagReducersShift..+3: how many blocks of a split-K tile share its final reduction (splitk_epilogue;
//                         0 or 1: the last block alone)
//   kFlagSplitkPoll:     the split-K end polls the partials themselves (splitk_poll_end) -- set by the host only for
//                         wgmma kernels whose whole grid is resident at once, with a workspace kept at kPollEmpty
constexpr int kFlagPdlEarlyRelease = 1;
constexpr int kFlagSplitkPoll = 2;
HUMMING_DEVICE bool splitk_poll_from_flags(int flags) { return (flags & kFlagSplitkPoll) != 0; }
constexpr int kFlagReducersShift = 4;
constexpr int kMaxReducers = 4;
HUMMING_DEVICE int reducers_from_flags(int flags) { return (flags >> kFlagReducersShift) & 15; }
//   bits kFlagRowTileShift..31: the first weight-row tile of this launch (kRowTiles kernels: the 256-token split-K
//                         tiles): the grid's blockIdx.y counts row tiles from there.  A layer's plan may cover a grid
//                         whose last wave would be mostly idle with two launches -- whole waves of tiles, then the
//                         remaining row tiles split along K (heuristics.dp_tail_split) -- and the second one starts
//                         past row 0.
constexpr int kFlagRowTileShift = 8;
HUMMING_DEVICE int row_tile0_from_flags(int flags) { return flags >> kFlagRowTileShift; }

// The end of a (token tile, weight-row tile, K split) block of a grid = (token tiles, row tiles, splits), after the
// intra-block K reduction (math warps wk == 0 hold the block's sums).  One split: write y.  Several: every split
// writes fp32 partials to ws [splits][token tiles * kBT][ws_cols] -- ws_cols = N16 (the layer's columns), or for
// kernels that may launch over part of the rows (kRowTiles below) the launch's own: column n of y is column n - ws_nb
// of the workspace, ws_nb = the launch's first row tile * kBN, so a launch over the last row tiles of a layer needs
// no workspace for the others; the last block(s) of the tile to arrive (atomic ticket;
// up to kMaxReducers share the sum, see below) sum them in split order -- deterministic -- run the epilogue and reset
// the ticket, so the counters stay zero between calls and CUDA-graph replays need no memset.  Called by every thread
// of the block.
//
// wgmma kernels (wide tiles: 32-64 accumulators per thread) stage the block's fp32 tile in shared memory first
// (`tile`, kBT rows of kBN + 4 floats: the 4-float pad puts the 8 channels x 4 token pairs of one accumulator store
// in 32 distinct banks) and then write y / the partials as float4 runs along N with rolled loops: coalesced stores and
// a small kernel (per-accumulator bounds checks and epilogue math unrolled over 64 values made NVRTC slow).

// y rows m0 .. min(M, m0 + kBT) - 1, channels n0 .. n0 + kBN - 1 (clipped to N) from a staged fp32 tile: float4
// reads along N, the fp32 epilogue, 16-bit stores -- one rolled loop for the whole block.  The share variant writes
// float4s [v_lo, v_hi) of the tile's valid rows only (float4 v: row v / (kBN / 4)), one split-K reducer's share.
template <class Cfg>
__device__ __forceinline__ void write_y_share_from_tile(const float* tile, typename Cfg::T* __restrict__ y,
                                                        const float* __restrict__ chscale,
                                                        const float* __restrict__ tscale,
                                                        const typename Cfg::T* __restrict__ bias, int N, int m0, int n0,
                                                        int v_lo, int v_hi) {
  using T = typename Cfg::T;
  constexpr int kLd = EpilogueTile<Cfg>::kLd;
  constexpr int kVecsPerRow = Cfg::kBN / 4;
#pragma unroll 1
  for (int v = v_lo + (int)threadIdx.x; v < v_hi; v += Cfg::kThreads) {
    const int r = v / kVecsPerRow, c = (v % kVecsPerRow) * 4, n = n0 + c;
    const float4 a = *reinterpret_cast<const float4*>(tile + r * kLd + c);
    const float vals[4] = {a.x, a.y, a.z, a.w};
    T* dst = y + (size_t)(m0 + r) * N + n;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (n + e < N) dst[e] = from_float<T>(epilogue_value(vals[e], n + e, chscale, tscale, bias));
  }
}

template <class Cfg>
__device__ __forceinline__ void write_y_from_tile(const float* tile, typename Cfg::T* __restrict__ y,
                                                  const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                  const typename Cfg::T* __restrict__ bias, int M, int N, int m0,
                                                  int n0) {
  write_y_share_from_tile<Cfg>(tile, y, chscale, tscale, bias, N, m0, n0, 0, min(Cfg::kBT, M - m0) * (Cfg::kBN / 4));
}

// The 8-token split-K sum (M <= 8), run by the tile's last block: one output per thread, the S partials of `ws` in
// split order, then the epilogue into y.
template <class Cfg>
__device__ __forceinline__ void splitk_sum8_into_y(const float* __restrict__ ws,
                                                   size_t ws_rows, int ws_ld, int ws_nb,
                                                   typename Cfg::T* __restrict__ y,
                                                   const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                   const typename Cfg::T* __restrict__ bias, int M, int N, int m0,
                                                   int n0) {
  constexpr int kBN = Cfg::kBN;
  for (int i = threadIdx.x; i < Cfg::kBT * kBN; i += blockDim.x) {
    const int mr = m0 + i / kBN;
    const int n = n0 + i % kBN;
    if (mr >= M || n >= N) continue;
    float sum = 0.f;
    for (int s = 0; s < (int)gridDim.z; ++s) sum += __ldcg(ws + ((size_t)s * ws_rows + mr) * ws_ld + (n - ws_nb));
    y[(size_t)mr * N + n] = from_float<typename Cfg::T>(epilogue_value(sum, n, chscale, tscale, bias));
  }
}

// The polled split-K end (kFlagSplitkPoll; wgmma kernels, after the block's fp32 tile is staged in shared memory).
// The ticket path above costs a chain of L2 round trips after the slowest split: partial stores, a fence that waits
// for them, the ticket atomic, the last blocks' reads -- 3.3-4.6 us of 9.6-21.6 on the narrow layers at 16 / 64
// tokens (H100, results/2026-12-07-s53/b), of which more loads in flight won back only 0.3 (s54/a).  Here the
// partials are their own ready flags: the workspace holds kPollEmpty (an fp32 NaN bit pattern no arithmetic yields --
// GPU NaNs are 0x7FFFFFFF, and the producer canonicalizes any bit copy) in every word between calls, a producer
// stores its partial with relaxed gpu-scope stores and leaves -- no fence, no ticket --, and the reducer polls the
// words until none is empty.  The chain is one store and the load that sees it.
//   Reducers are static: the blocks of splits S - R .. S - 1 (launched last, so they wait least), block S - R + j
// summing float4s [j, j + 1) * vecs / R of the tile's valid rows in split order from 0 (its own split from its
// shared tile, never stored) -- the same expressions in the same order as the ticket path: bit-identical results.
// A reducer writes kPollEmpty back over every word it read, so the workspace is empty again when the grid ends; the
// next launch stores partials only after its griddepcontrol.wait, i.e. after this grid's writes are visible.
//   Reducers wait for blocks that may not have started: the host sets the flag only where the whole grid is resident
// at once (GemmLayer._plan, plan.splitk_poll_applies), and gives the grid a workspace that only polled ends use
// (ops.gemm._workspace(poll=True), filled with kPollEmpty at allocation).
//   Measured (H100, session 54, results/2026-12-07-s54/b): no faster than the ticket path on the plans' own grids
// (6144x4096 M=16 10.6 vs 9.8 us, M=64 14.6 vs 14.9; 4096x14336 M=64 22.4 vs 21.9), so it is opt-in
// ($HUMMING_SPLITK_POLL=1): what the split-K end costs is not its fence and ticket.
//   A wait that outlives kPollSpinLimit polls (~seconds) traps: a launch error, never a silent hang.
// (Tiles of up to kPollMaxBT tokens: the 256-token kernels -- where the end is a small part of a long block -- keep
// their code and registers; plan.splitk_poll_applies mirrors the bound.)
constexpr int kPollMaxBT = 128;
constexpr uint32_t kPollEmpty = 0xFFFFFFFFu;
constexpr int kPollSpinLimit = 1 << 22;
// Between polls a thread sleeps kPollSleepNs: up to 96 reducer blocks x 256 threads x 8 float4s re-read per round
// trip is L2 traffic of the order of the weight stream itself, while the other splits still stream their last atoms.
// (HUMMING_SPLITK_POLL_SLEEP=N through HUMMING_DEBUG_DEFINES: experiments)
#ifdef HUMMING_SPLITK_POLL_SLEEP
constexpr int kPollSleepNs = HUMMING_SPLITK_POLL_SLEEP;
#else
constexpr int kPollSleepNs = 64;
#endif

HUMMING_DEVICE float poll_canonical(float v) {   // a partial never equals kPollEmpty (a NaN stays a NaN)
  return __float_as_uint(v) == kPollEmpty ? __uint_as_float(0x7FFFFFFFu) : v;
}
HUMMING_DEVICE bool poll_ready(const float4& v) {
  return __float_as_uint(v.x) != kPollEmpty && __float_as_uint(v.y) != kPollEmpty &&
         __float_as_uint(v.z) != kPollEmpty && __float_as_uint(v.w) != kPollEmpty;
}

template <class Cfg>
__device__ __forceinline__ void splitk_poll_end(float* tile, typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                const typename Cfg::T* __restrict__ bias, int M, int N, int N16,
                                                int m0, int n0, size_t ws_rows, int ws_ld, int ws_nb, int reducers) {
  static_assert(Cfg::kWgmma, "the polled split-K end reads the staged fp32 tile of the wgmma kernels");
  constexpr int kLd = EpilogueTile<Cfg>::kLd;
  constexpr int kVecsPerRow = Cfg::kBN / 4;
  constexpr int kThreads = Cfg::kThreads;
  // float4 loads per thread per poll (8: the kernels keep their register budgets -- 16 took the 32- / 128-token
  // tiles from 96 / 128 to 146 / 152 registers; the batches after the first are loaded once it is complete, mostly
  // long after its splits arrived, so the chain after the last arrival stays about one round trip)
  constexpr int kInFlight = 8;
  const int split = (int)blockIdx.z, splits = (int)gridDim.z;
  const int nred = max(1, min(min(reducers, kMaxReducers), splits));
  const int all_vecs = min(Cfg::kBT, M - m0) * kVecsPerRow;
  const int j = split - (splits - nred);   // this block's share of the sum, or < 0: a producer only
  const int own_lo = j >= 0 ? (int)((long long)all_vecs * j / nred) : 0;
  const int own_hi = j >= 0 ? (int)((long long)all_vecs * (j + 1) / nred) : 0;
  float* my_ws = ws + (size_t)split * ws_rows * ws_ld;
  // publish the partial (all of it but the own share): rows m0 + r < M, columns n0 + c < N16 -- exactly the float4s
  // the reducers poll
#pragma unroll 1
  for (int v = threadIdx.x; v < all_vecs; v += kThreads) {
    if (v >= own_lo && v < own_hi) continue;
    const int r = v / kVecsPerRow, c = (v % kVecsPerRow) * 4;
    if (n0 + c >= N16) continue;
    float4 a = *reinterpret_cast<const float4*>(tile + r * kLd + c);
    a.x = poll_canonical(a.x); a.y = poll_canonical(a.y); a.z = poll_canonical(a.z); a.w = poll_canonical(a.w);
    st_relaxed_gpu_f32x4(my_ws + (size_t)(m0 + r) * ws_ld + (n0 - ws_nb) + c, a);
  }
  if (j < 0) return;
  const float4 empty = make_float4(__uint_as_float(kPollEmpty), __uint_as_float(kPollEmpty),
                                   __uint_as_float(kPollEmpty), __uint_as_float(kPollEmpty));
#pragma unroll 1
  for (int v = own_lo + (int)threadIdx.x; v < own_hi; v += kThreads) {
    const int r = v / kVecsPerRow, c = (v % kVecsPerRow) * 4;
    if (n0 + c >= N16) continue;   // columns past N16: nothing stored, nothing written to y
    float* own = tile + r * kLd + c;
    const size_t off = (size_t)(m0 + r) * ws_ld + (n0 - ws_nb) + c;
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 1
    for (int sp = 0; sp < splits; sp += kInFlight) {
      float4 part[kInFlight];
      // one L2 round trip for the batch; a split of this block reads its own partial from shared memory
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        const int s = sp + u;
        if (s == split) {
          const float4 a = *reinterpret_cast<const float4*>(own);
          part[u] = make_float4(poll_canonical(a.x), poll_canonical(a.y), poll_canonical(a.z), poll_canonical(a.w));
          continue;
        }
        part[u] = s >= splits ? make_float4(0.f, 0.f, 0.f, 0.f)
                               : ld_relaxed_gpu_f32x4(ws + (size_t)s * ws_rows * ws_ld + off);
      }
      // the splits not yet arrived: poll again (the batch's loads stay in flight together)
      for (int spins = 0;; ++spins) {
        bool all = true;
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) all = all && poll_ready(part[u]);
        if (all) break;
        if (spins >= kPollSpinLimit) __trap();   // a producer that never came: fail the launch, never hang
        __nanosleep(kPollSleepNs);
#pragma unroll
        for (int u = 0; u < kInFlight; ++u)
          if (!poll_ready(part[u])) part[u] = ld_relaxed_gpu_f32x4(ws + (size_t)(sp + u) * ws_rows * ws_ld + off);
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {   // split order is fixed: the sum is deterministic
        sum.x += part[u].x; sum.y += part[u].y; sum.z += part[u].z; sum.w += part[u].w;
        const int s = sp + u;
        if (s < splits && s != split) __stcg(reinterpret_cast<float4*>(ws + (size_t)s * ws_rows * ws_ld + off), empty);
      }
    }
    *reinterpret_cast<float4*>(own) = sum;
  }
  __syncthreads();
  write_y_share_from_tile<Cfg>(tile, y, chscale, tscale, bias, N, m0, n0, own_lo, own_hi);
}

template <class Cfg, class Math>
__device__ __forceinline__ void splitk_epilogue(const Math& math, typename Cfg::T* __restrict__ y,
                                                float* __restrict__ ws, int* __restrict__ tickets,
                                                const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                const typename Cfg::T* __restrict__ bias, int M, int N, int N16,
                                                int m0, int n0, float* tile = nullptr, int reducers = 1,
                                                int ws_cols = 0, int ws_nb = 0, bool poll = false) {
  using T = typename Cfg::T;
  constexpr int kBT = Cfg::kBT;
  constexpr int kBN = Cfg::kBN;
  const int split = blockIdx.z;
  // the workspace's columns: ws_cols of them (0: N16, the whole layer), the first one column ws_nb of y
  const int ws_ld = ws_cols > 0 ? ws_cols : N16;
  if constexpr (Cfg::kWgmma) {
    constexpr int kLd = EpilogueTile<Cfg>::kLd;
    constexpr int kVecsPerRow = kBN / 4;
    // (K-warps: the warps wk == 0 hold the block's sums after reduce_k; the others write nothing)
    if (Cfg::kWarpsK == 1 || math.wk == 0)
      math.for_each_output([&](int mr, int nr, float v) { tile[mr * kLd + nr] = v; });
    __syncthreads();
    const int vecs = min(kBT, M - m0) * kVecsPerRow;
    if (gridDim.z == 1) {
      write_y_from_tile<Cfg>(tile, y, chscale, tscale, bias, M, N, m0, n0);
      return;
    }
    const size_t ws_rows = (size_t)gridDim.x * kBT;
#ifdef HUMMING_DEBUG_SPLITK_SKIP   // experiments only: no cross-block reduction at all (wrong results)
    return;
#endif
    if constexpr (kBT <= kPollMaxBT) {
      if (poll) {
        splitk_poll_end<Cfg>(tile, y, ws, chscale, tscale, bias, M, N, N16, m0, n0, ws_rows, ws_ld, ws_nb, reducers);
        return;
      }
    }
    auto store_partial = [&] {
#pragma unroll 1
      for (int v = threadIdx.x; v < vecs; v += Cfg::kThreads) {
        const int r = v / kVecsPerRow, c = (v % kVecsPerRow) * 4;
        if (n0 + c < N16)   // padding rows past M are never read back
          __stcg(reinterpret_cast<float4*>(ws + ((size_t)split * ws_rows + m0 + r) * ws_ld + (n0 - ws_nb) + c),
                 *reinterpret_cast<const float4*>(tile + r * kLd + c));
      }
    };
    store_partial();
  } else if (gridDim.z == 1) {
    if (math.wk != 0) return;
    math.for_each_output([&](int mr, int nr, float v) {
      const int n = n0 + nr, m = m0 + mr;
      if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(v, n, chscale, tscale, bias));
    });
    return;
  }
  const size_t ws_rows = (size_t)gridDim.x * kBT;
  if (!Cfg::kWgmma && math.wk == 0) {
    math.for_each_output([&](int mr, int nr, float v) {
      const int n = n0 + nr, m = m0 + mr;           // padding rows are never read back
      if (n < N16 && m < M) __stcg(ws + ((size_t)split * ws_rows + m) * ws_ld + (n - ws_nb), v);
    });
  }
  // One gpu-scope fence per block, not one per thread: the barrier orders every thread's partial stores before
  // thread 0's fence (CTA scope), and the fence is cumulative, so they are visible GPU-wide before the ticket moves.
  // The blocks that sum thread 0 fences again after the ticket (acquire side) before the barrier releases its readers.
  //
  // Who sums: the last block to arrive alone reads all S partials of the tile -- one SM pulling S x the tile from L2,
  // latency-bound: it was most of the split-K end at M = 16 / 64 (H200, 4096x14336 M=64: 27.6 us with it, 22.8 with
  // stores + ticket but no reads, 20.7 with no cross-block sum at all; NOTES.md, session 13).  So with `reducers`
  // R > 1 the last R blocks to arrive share it: the block with ticket S - R + j sums float4s [j, j + 1) * vecs / R of
  // the tile, each in split order from 0 -- the sum of every output is the same expression whoever computes it, so
  // the result is bit-identical to R = 1.  Reducers j < R - 1 wait for the last block's arrival: the last block
  // resets the ticket to 0 right after its own atomic (after a fence: a release), and a waiter leaves its spin when it
  // reads either S (every split arrived) or a value <= its own ticket (the reset, which only follows the last
  // arrival).  Nothing can touch the ticket again before this grid has finished: the next launch reads its tickets
  // only after its griddepcontrol.wait.
  // The wait needs the S blocks of a tile to be resident together, which the host guarantees by passing R > 1 only
  // for grids of at most one wave with (R - 1) x tiles waiting blocks at most half the slots (GemmLayer._plan):
  // under PDL a dependent grid launches only once every block of this one has started, so it cannot take their slots.
  __syncthreads();
  const int ticket_id = blockIdx.y * gridDim.x + blockIdx.x;
  const int splits = (int)gridDim.z;
  if constexpr (kBT <= 8) {
    __shared__ int is_last;
    // One acq_rel atomic instead of fence + atomic + fence: the release publishes the block's partial, the acquire
    // lets the last block read the others' -- 6144x4096 M=1 7.55 vs 7.67 us, 4096x14336 12.0-12.2 vs 12.2-12.3
    // (session 21, results/h200-2026-12-02-s21/b_bench_*.log; the SASS loses the last block's second MEMBAR).
    if (threadIdx.x == 0) is_last = atom_add_acq_rel_gpu(tickets + ticket_id, 1) == splits - 1;
    __syncthreads();
    if (!is_last) return;
    // 8-token tiles (M <= 8): a handful of valid rows, one float per thread and the compiler's own unrolling of the
    // split loop measured best (M=1 on 6144x4096: 9.1 us at d530966 vs 10.2 us at d5f3e7b with the float4 batches
    // below, which also cost the decode kernel registers -- and blocks per SM -- its main loop needs).
    splitk_sum8_into_y<Cfg>(ws, ws_rows, ws_ld, ws_nb, y, chscale, tscale, bias, M, N, m0, n0);
    if (threadIdx.x == 0) tickets[ticket_id] = 0;
    return;
  }
  __shared__ int share;   // the part of the tile this block sums, or -1
  const int nred = max(1, min(min(reducers, kMaxReducers), splits));
  if (threadIdx.x == 0) {
#ifdef HUMMING_SPLITK_ACQREL_TICKET
    // experiment (session 53): one acq_rel atomic instead of fence + relaxed atomic (+ fence for the last block), as
    // the 8-token path above does -- the release publishes this block's partial, the acquire orders the last
    // block's reads of the others'
    const int prev = atom_add_acq_rel_gpu(tickets + ticket_id, 1);
#else
    fence_acq_rel_gpu();
    const int prev = atomicAdd(tickets + ticket_id, 1);
#endif
    int j = -1;
    if (prev == splits - 1) {
#ifndef HUMMING_SPLITK_ACQREL_TICKET
      fence_acq_rel_gpu();
#endif
      atomicExch(tickets + ticket_id, 0);   // the reset, and the waiting reducers' signal
      j = nred - 1;
    } else if (prev >= splits - nred) {
      for (;;) {
        const int v = ld_acquire_gpu(tickets + ticket_id);
        if (v >= splits || v <= prev) break;
        __nanosleep(32);
      }
      fence_acq_rel_gpu();
      j = prev - (splits - nred);
    }
    share = j;
  }
  __syncthreads();
  if (share < 0) return;
  // The reduction is latency-bound (one L2 round trip per load), so it reads float4s (4 channels; ws_ld rows keep them
  // aligned), spreads only the share's float4s of the tile's valid rows (M - m0 may be 1) over the threads, and keeps
  // kInFlight float4 loads per thread in flight: kChunk float4s of kSplitBatch splits at a time (kChunk sized for a
  // share of kMaxReducers).  (int offsets: splits only happen while the tiles do not fill the GPU, so M * N16 stays
  // far below 2^31.)
  constexpr int kVecsPerRow = kBN / 4;
  constexpr int kThreads = Cfg::kThreads;
#ifdef HUMMING_SPLITK_INFLIGHT
  // experiment (session 53): more float4 loads in flight per thread, so that up to kInFlight splits of a one-float4
  // share come back in one L2 round trip instead of ceil(splits / 8) (the narrow layers' split-K end costs ~4 us of
  // 10-22 at 16 / 64 tokens on an H100: results/2026-12-07-s53/b)
  constexpr int kInFlight = HUMMING_SPLITK_INFLIGHT;
  static_assert(kInFlight >= 1 && kInFlight <= 32, "HUMMING_SPLITK_INFLIGHT: 1..32 float4 loads per thread");
#else
  constexpr int kInFlight = 8;
#endif
  constexpr int kShareVecs = ceil_div(kBT * kVecsPerRow, kMaxReducers);
  constexpr int kChunk = ceil_div(kShareVecs, kThreads) < kInFlight ? ceil_div(kShareVecs, kThreads) : kInFlight;
  constexpr int kSplitBatch = kInFlight / kChunk;
  const int all_vecs = min(kBT, M - m0) * kVecsPerRow;
  const int v_lo = (int)((long long)all_vecs * share / nred);
  const int vecs = (int)((long long)all_vecs * (share + 1) / nred);
#pragma unroll 1
  for (int base = v_lo; base < vecs; base += kChunk * kThreads) {
    float4 sum[kChunk];
    int off[kChunk];          // workspace float offset of the float4 in split 0, or -1 (past the share / N16)
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const int v = base + j * kThreads + (int)threadIdx.x;
      const int mr = m0 + v / kVecsPerRow;
      const int n = n0 + (v % kVecsPerRow) * 4;
      off[j] = (v < vecs && n < N16) ? (int)(mr * ws_ld + (n - ws_nb)) : -1;
      sum[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll 1
    for (int sp = 0; sp < splits; sp += kSplitBatch) {
      float4 part[kSplitBatch][kChunk];
#pragma unroll
      for (int u = 0; u < kSplitBatch; ++u) {
        const float* src = ws + (size_t)(sp + u) * ws_rows * ws_ld;
#pragma unroll
        for (int j = 0; j < kChunk; ++j)
          part[u][j] = (off[j] >= 0 && sp + u < splits) ? __ldcg(reinterpret_cast<const float4*>(src + off[j]))
                                                        : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int u = 0; u < kSplitBatch; ++u)   // split order is fixed: the sum is deterministic
#pragma unroll
        for (int j = 0; j < kChunk; ++j) {
          sum[j].x += part[u][j].x; sum[j].y += part[u][j].y; sum[j].z += part[u][j].z; sum[j].w += part[u][j].w;
        }
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      if (off[j] < 0) continue;
      const int mr = off[j] / ws_ld, n = off[j] % ws_ld + ws_nb;
      if constexpr (Cfg::kWgmma) {
        // back into the (now free) staged tile; one rolled loop below writes y
        *reinterpret_cast<float4*>(tile + (mr - m0) * EpilogueTile<Cfg>::kLd + (n - n0)) = sum[j];
      } else {
        const float vals[4] = {sum[j].x, sum[j].y, sum[j].z, sum[j].w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (n + e < N) y[(size_t)mr * N + n + e] = from_float<T>(epilogue_value(vals[e], n + e, chscale, tscale, bias));
      }
    }
  }
  if constexpr (Cfg::kWgmma) {
    __syncthreads();
    write_y_share_from_tile<Cfg>(tile, y, chscale, tscale, bias, N, m0, n0, v_lo, vecs);
  }
}

// The end of one stream-K segment (stream_k.cuh): the accumulators hold units of `tile` from this block's range, after
// the intra-block K reduction.  `whole`: the segment is the whole tile.  Otherwise streamk_join_partial parks the
// fp32 partial tile in the block's workspace slot `slot` (0: its first segment, 1: its last) or, for the contributor
// that finishes the tile, sums the others into the accumulators.  The block holding the whole tile's sum writes y.
// Called by every thread; returns with the shared memory free for the next segment's ring.
template <class Cfg, class Math>
__device__ __forceinline__ void streamk_end_segment(Math& math, const StreamKSchedule& sched,
                                                    typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                    int* __restrict__ tickets, const float* __restrict__ chscale,
                                                    const float* __restrict__ tscale,
                                                    const typename Cfg::T* __restrict__ bias, int M, int N, int m0,
                                                    int n0, int tile, bool whole, int slot, float* stile) {
  using T = typename Cfg::T;
  __shared__ int role;
  if (!whole && !streamk_join_partial<Cfg>(math, sched, ws, tickets, tile, slot, [] { __syncthreads(); }, &role)) return;
  if constexpr (Cfg::kWgmma) {
    // stage the tile in shared memory (see splitk_epilogue), then y as float4 runs along N
    constexpr int kLd = EpilogueTile<Cfg>::kLd;
    math.for_each_output([&](int mr, int nr, float v) { stile[mr * kLd + nr] = v; });
    __syncthreads();
    write_y_from_tile<Cfg>(stile, y, chscale, tscale, bias, M, N, m0, n0);
  } else if (math.wk == 0) {
    math.for_each_output([&](int mr, int nr, float v) {
      const int n = n0 + nr, m = m0 + mr;
      if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(v, n, chscale, tscale, bias));
    });
  }
  __syncthreads();   // the shared memory (staged tile, the K reduction's scratch) is the next segment's ring
}

// The split-K end of a grid launched as clusters of kCluster blocks along z (grid z = kCluster: the K splits of one
// output tile form one cluster; cluster.cuh) -- the direct kernels and the cp.async wgmma kernel.  Each block stages
// its fp32 partial tile in its own shared memory (`tile`: kBT rows of kBN + 4 floats, 16-byte aligned), one cluster
// barrier publishes the tiles, and block r then finishes float4 columns r, r + kCluster, ... of the tile's valid
// rows: the kCluster peers' partials summed in rank (= split) order from 0 -- the order of splitk_epilogue's ticket
// path -- the epilogue math, the 16-bit stores.  A second barrier keeps every block's tile alive until its peers have
// read it.  No workspace, no tickets.
// Called by every thread of the block after the main loop (mma.sync: after reduce_k; warps wk == 0 hold the sums);
// `tile` may overlay any shared memory the main loop used (the first barrier below waits for every warp).
template <class Cfg, int kCluster, class Math>
__device__ __forceinline__ void cluster_splitk_epilogue(const Math& math, typename Cfg::T* __restrict__ y,
                                                        const float* __restrict__ chscale,
                                                        const float* __restrict__ tscale,
                                                        const typename Cfg::T* __restrict__ bias, int M, int N,
                                                        int m0, int n0, float* tile) {
  static_assert(kCluster >= 2 && kCluster <= 8, "clusters of 2..8 blocks (the portable cluster size)");
#if defined(__CUDA_ARCH__) && !HUMMING_HAS_CLUSTER
  static_assert(kCluster == 0, "thread block clusters need sm_90+");
#endif
  using T = typename Cfg::T;
  constexpr int kLd = Cfg::kBN + 4;   // the 4-float pad: one accumulator store's 8 channels x 4 token pairs hit 32 banks
  constexpr int kVecsPerRow = Cfg::kBN / 4;
  static_assert(kLd % 4 == 0, "float4 rows");
  __syncthreads();   // every warp is past the main loop / the K-warp reduction: the region may be overwritten
  if (Cfg::kWgmma || math.wk == 0) math.for_each_output([&](int mr, int nr, float v) { tile[mr * kLd + nr] = v; });
  cluster_barrier();
  const uint32_t rank = cluster_block_rank();
  uint32_t peer[kCluster];
#pragma unroll
  for (int s = 0; s < kCluster; ++s) peer[s] = cluster_map_shared(tile, s);
  const int vecs = min(Cfg::kBT, M - m0) * kVecsPerRow;
#pragma unroll 1
  for (int v = threadIdx.x * kCluster + rank; v < vecs; v += Cfg::kThreads * kCluster) {
    const int r = v / kVecsPerRow, c = (v % kVecsPerRow) * 4;
    const uint32_t off = (r * kLd + c) * 4;
    float4 part[kCluster];
#pragma unroll
    for (int s = 0; s < kCluster; ++s) part[s] = cluster_load_f32x4(peer[s] + off);   // all in flight at once
    float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int s = 0; s < kCluster; ++s) {
      sum[0] += part[s].x; sum[1] += part[s].y; sum[2] += part[s].z; sum[3] += part[s].w;
    }
    const int n = n0 + c;
    T* dst = y + (size_t)(m0 + r) * N + n;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (n + e < N) dst[e] = from_float<T>(epilogue_value(sum[e], n + e, chscale, tscale, bias));
  }
  cluster_barrier_relaxed();
}


// Kernel arguments (raw pointers; all tensors contiguous).
//   x        [M, K]                 activations (T)
//   w        [K64/64][N16/16][atom] packed weight (layout.cuh)
//   gscale   [ceil(K64/G)][N16]     group scales (T), G = kGroup                      (kGroup != 0)
//   gzero    [ceil(K64/G)][N16]     int: kRawBias + offset + zero (T); float: -zero*scale (T)   (kZeroMode != 0)
//   chscale  [N16] float32          per-output-channel scale applied in the epilogue (or null)
//   tscale   [1]   float32          per-tensor scale applied in the epilogue (or null)
//   bias     [N]   T                (or null)
//   y        [M, N]                 output (T)
//   ws       [splits][m_tiles*kBT][gridDim.y*kBN] float32 split-K partials (null when gridDim.z == 1)
//   tickets  [m_tiles * n_tiles] int32, zero between calls (null when gridDim.z == 1)
//   flags    kFlagPdlEarlyRelease, the split-K reducers (see the flag bits above write_y_from_tile)

// kCluster (split-K grids of wgmma kernels only): 0 = splits reduced through the workspace + tickets
// (splitk_epilogue); 2..8 = launched as clusters of that many blocks along z, reduced in distributed shared memory.
template <class Cfg, bool kStreamK = false, int kCluster = 0, bool kTmaX = false>
__device__ __forceinline__ void gemm_wna16(const typename Cfg::T* __restrict__ x, const uint32_t* __restrict__ w,
                                           const typename Cfg::T* __restrict__ gscale,
                                           const typename Cfg::T* __restrict__ gzero,
                                           const float* __restrict__ chscale, const float* __restrict__ tscale,
                                           const typename Cfg::T* __restrict__ bias, typename Cfg::T* __restrict__ y,
                                           float* __restrict__ ws, int* __restrict__ tickets, int M, int N, int K,
                                           int N16, int K64, int atoms_per_split, int flags,
                                           const TmaMap* x_map = nullptr) {
#if defined(__CUDA_ARCH__) && !HUMMING_HAS_WGMMA
  static_assert(!Cfg::kWgmma, "wgmma kernels compile for sm_90a only (wgmma.cuh); the heuristics never pick one elsewhere");
#endif
  using T = typename Cfg::T;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBK = Cfg::kBK;
  constexpr int kBT = Cfg::kBT;
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kThreads = Cfg::kThreads;

  HUMMING_DYNAMIC_SMEM(uint8_t, smem_raw);
  using Smem = CpAsyncSmem<Cfg, kTmaX>;
  static_assert(!kTmaX || kCluster == 0, "TMA x tiles: not in cluster launches (the host never asks for it)");
  // wgmma: the swizzled x tiles must sit on 1024-byte boundaries (Smem::kBytes includes the slack)
  uint8_t* smem = smem_raw;
  if constexpr (Cfg::kWgmma) {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    smem = smem_raw + (((base + 1023u) & ~1023u) - base);
  }

  const int lane = threadIdx.x % 32;
  // (wgmma K-warpgroups: the warp index through a shuffle, which ptxas knows is warp-uniform, so each warpgroup row's
  // atom offset -- and the shared-memory descriptors built from it -- stay in uniform registers)
  const int warp = (Cfg::kWgmma && Cfg::kWarpsK > 1) ? __shfl_sync(0xffffffffu, (int)(threadIdx.x / 32), 0)
                                                      : (int)(threadIdx.x / 32);
  const int wn = warp % Cfg::kWarpsN;
  const int wk = warp / Cfg::kWarpsN;

  const int n_atoms = N16 / 16;
  const int k_atoms = K64 / 64;
  const int num_groups = Cfg::kGroup ? ceil_div(K64, Cfg::kGroup) : 0;
  const int tid = threadIdx.x;
  const bool release_early = (flags & kFlagPdlEarlyRelease) != 0;

  auto stage_w = [&](int s) { return reinterpret_cast<uint32_t*>(smem + s * Smem::kStage + Smem::kOffW); };
  auto stage_x = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffX); };
  auto stage_s = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffS); };
  auto stage_z = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Smem::kOffZ); };

  // the x tile: rows of kBK elements for mma.sync (ldmatrix), one swizzled kBT x 64 sub-tile per atom for wgmma
  using XTile = typename Select<Cfg::kWgmma, XTileAtomSwizzled<kBT>, XTileSwizzled<kBK>>::type;
  Wna16Math<Cfg, XTile> math(wn, wk, lane);

  // ---------------------------------------------------------------------------------------- the pipeline
  // kTmaX: x_bar[s] completes when slot s's x tile has landed (one arrival: thread 0's expect_tx, + the bytes);
  // x_phase bit s = the parity of slot s's next completion (the ring's waits on a slot happen in order).
  uint64_t* x_bar = reinterpret_cast<uint64_t*>(smem + Smem::kOffBars);
  uint32_t x_phase = 0;
  // Decoupled warpgroups (split-K TMA-x wgmma tiles of two or more warpgroups): no block barrier in the main loop.
  // Each warpgroup copies its own weight rows and scales and meets only its own warps (named barrier 1 + wg); a ring
  // slot's x tile is refilled by whichever warpgroup releases the slot last (a per-slot release counter in the stage's
  // alignment padding, atomically incremented by one thread per warpgroup: the increment that makes it a multiple of
  // the warpgroup count issues the TMA).  Under ncu the 256-token tile's two warpgroups drained the tensor pipe at
  // every stage barrier (NOTES.md, session 19).  Same outputs bit for bit (the MMAs and the epilogue are unchanged).
  // Default for the 256-token tiles since session 20: int4, us, coupled vs decoupled in one run
  // (results/h200-2026-12-02-s20/a_sweep_m*_{coupled,HUMMING_WG_DECOUPLED}.txt), 6144x4096 / 28672x4096 /
  // 4096x14336, M=1024 128-row tile 99.9 / 387.5 / 174.0 vs 95.2 / 362.7 / 172.4, 192-row tile 74.9 / 386.9 / 237.7 vs
  // 72.8 / 373.0 / 226.9; M=256 35.2 / 99.9 / 53.6 vs 34.6 / 97.1 / 53.2.  The 128-token tiles lose (M=256, 128-row:
  // 28.7 / 114.2 / 52.7 vs 31.1 / 123.8 / 56.3) and the 64-token ones tie: they keep the block barrier.
  // Experiment switches (HUMMING_DEBUG_DEFINES): HUMMING_WG_DECOUPLED decouples every eligible tile,
  // HUMMING_WG_COUPLED none.
  constexpr bool kDecouplable = kTmaX && Cfg::kWgmma && !kStreamK && kCluster == 0 && Cfg::kWarpsN >= 8 &&
                                Cfg::kWarpsK == 1;
#if defined(HUMMING_WG_COUPLED)
  constexpr bool kDecoupled = false;
#elif defined(HUMMING_WG_DECOUPLED)
  constexpr bool kDecoupled = kDecouplable;
#else
  constexpr bool kDecoupled = kDecouplable && kBT == 256;
#endif
#ifdef HUMMING_DEBUG_REQUIRE_DECOUPLED
  static_assert(kDecoupled, "HUMMING_DEBUG_REQUIRE_DECOUPLED: this tile runs with the block barrier");
#endif
  constexpr int kGroups = kDecoupled ? Cfg::kWarpsN / 4 : 1;        // copy groups = warpgroups when decoupled
  auto release_count = [&](int s) { return reinterpret_cast<uint32_t*>(smem + Smem::kOffCounters) + s; };
  if constexpr (kTmaX) {
    // (the TMA unit zero-fills rows past M itself)
    if (tid == 0) {
#pragma unroll 1
      for (int s = 0; s < Cfg::kStages; ++s) mbar_init(x_bar + s, 1);
      if constexpr (kDecoupled) {
#pragma unroll 1
        for (int s = 0; s < Cfg::kStages; ++s) *release_count(s) = 0u;
      }
      mbar_fence_init();
      tma_prefetch_map(x_map);
    }
  } else {
    // Zero the activation tiles of every slot once: rows past M are never copied (see load_stage_x).
    for (int i = tid; i < Cfg::kStages * Smem::kX / 16; i += kThreads) {
      const int st = i / (Smem::kX / 16), c = i % (Smem::kX / 16);
      reinterpret_cast<uint4*>(smem + st * Smem::kStage + Smem::kOffX)[c] = make_uint4(0, 0, 0, 0);
    }
  }
  __syncthreads();   // the zeros land before any cp.async of another thread writes a valid row (kTmaX: the barriers)
  // ---------------------------------------------------------------------------------------- one segment
  // The main loop over atom columns [ka_begin, ka_end) of the tile at token m0 / atom row n_atom0, accumulating into
  // `math` (the caller clears it), ending with every copy landed and every MMA complete.  `first`: the block's first
  // segment (it waits for the previous PDL grid).  Split-K blocks run one segment, stream-K blocks one per tile their
  // unit range touches (each restarts the ring: at most a few per block).
  auto run_segment = [&](const int m0, const int n_atom0, const int ka_begin, const int ka_end,
                         const bool first) __attribute__((always_inline)) {
    const int n0 = n_atom0 * 16;
    const int num_stages_total = ka_end > ka_begin ? ceil_div(ka_end - ka_begin, Cfg::kAtomsK) : 0;
    // ---------------------------------------------------------------------------------------- global -> shared
    // Copy plan, fixed per thread for the whole K loop: which 16-byte chunks of each stage this thread moves.  Every
    // per-stage address is then a base plus the stage's K offset, so the loads cost a few instructions per chunk.
    //   W : kAtomsK atom columns x (kBN/16) atoms, each atom column one contiguous run of kChunksPerCol chunks.
    //   x : kBT rows x kBK/8 chunks; kThreads is a multiple of the chunks per row, so a thread's chunk column is fixed
    //       and its rows step by kThreads / (kBK/8).  Chunks are XOR-swizzled by row (ldmatrix then hits 8 banks).
    constexpr int kWChunksPerCol = (kBN / 16) * kAtomWords / 4;
    // decoupled (kGroups > 1): copy group cg = the warpgroup, its kCopyThreads threads move its own atom rows (a
    // contiguous 1/kGroups of every atom column) and its own rows' scales
    constexpr int kCopyThreads = kThreads / kGroups;
    constexpr int kWChunksPerColG = kWChunksPerCol / kGroups;
    static_assert(kWChunksPerCol % kGroups == 0, "whole atom rows per warpgroup");
    const int cg = kGroups > 1 ? tid / kCopyThreads : 0;
    const int ct = kGroups > 1 ? tid % kCopyThreads : tid;
    constexpr int kWChunks = Cfg::kAtomsK * kWChunksPerColG;
    constexpr int kWIters = ceil_div(kWChunks, kCopyThreads);
    constexpr int kXChunksPerRow = kBK / 8;
    static_assert(kThreads % kXChunksPerRow == 0, "x copy plan: threads cover whole chunk columns");
    constexpr int kXRowStep = kThreads / kXChunksPerRow;
    constexpr int kXIters = ceil_div(kBT, kXRowStep);
    const size_t w_col_stride = (size_t)n_atoms * kAtomWords;          // words between atom columns
    // Loop-carried source pointers, advanced by one stage per load: the per-chunk work in the K loop is one 64-bit add,
    // a predicate and the cp.async.
    const uint32_t* w_src[kWIters];
    int w_col[kWIters];         // atom column inside the stage
    bool w_ok[kWIters];         // chunk exists and its atom row is inside N
#pragma unroll
    for (int i = 0; i < kWIters; ++i) {
      const int c = i * kCopyThreads + ct;
      const int a = c / kWChunksPerColG;
      const int rem = kGroups > 1 ? cg * kWChunksPerColG + c % kWChunksPerColG : c % kWChunksPerCol;
      const int atom_row = n_atom0 + rem / (kAtomWords / 4);
      w_col[i] = a;
      w_ok[i] = (c < kWChunks) && (atom_row < n_atoms);
      // a chunk past N keeps an in-bounds source (its own atom column, last atom row) and copies 0 bytes (zero-fill),
      // so the K loop needs no pointer select
      w_src[i] = w + (size_t)(ka_begin + a) * w_col_stride + (size_t)min(atom_row, n_atoms - 1) * kAtomWords +
                 (rem % (kAtomWords / 4)) * 4;
    }
    const int x_ch = tid % kXChunksPerRow;
    const int x_r0 = tid / kXChunksPerRow;
    const T* x_src = x + (size_t)(m0 + x_r0) * K + (size_t)ka_begin * 64 + x_ch * 8;
    const size_t w_stage_stride = Cfg::kAtomsK * w_col_stride;
    // group-scale chunks go to the LAST threads of the block (the first ones copy the activation rows)
    constexpr int kSChunksPerGroup = kBN / 8;
    constexpr int kSChunksPerGroupG = kSChunksPerGroup / kGroups;   // a warpgroup's rows of one scale group
    static_assert(kSChunksPerGroup % kGroups == 0, "whole scale chunks per warpgroup");
    constexpr int kSChunks = Cfg::kGroupsPerStage * kSChunksPerGroupG;
    const int s_tid = kCopyThreads - 1 - ct;

    // `slot` is the ring index; in the unrolled decode loop below it is a constant after inlining, so every
    // shared-memory address is a per-thread base plus an immediate and the loop spends no instructions on the ring.
    // Weights and scales (read-only: safe to prefetch before the previous kernel has finished, see the prologue).
    auto load_stage_w = [&](int it, int slot) {
      const int ka0 = ka_begin + it * Cfg::kAtomsK;
      {
        uint32_t* dst = stage_w(slot);
#pragma unroll
        for (int i = 0; i < kWIters; ++i) {
          // chunks past the end of the W region do not exist (a zero-fill there would overwrite the x tile)
          if (kWChunks % kCopyThreads == 0 || i * kCopyThreads + ct < kWChunks) {
            // (decoupled: chunk c of group cg sits at atom column c / kWChunksPerColG, row chunk cg * kWChunksPerColG
            // + c % kWChunksPerColG of the stage's [column][row chunk] layout)
            const int d = kGroups > 1 ? w_col[i] * kWChunksPerCol + cg * kWChunksPerColG +
                                            (i * kCopyThreads + ct) % kWChunksPerColG
                                      : i * kThreads + tid;
            if constexpr (Cfg::kAtomsK == 1) {
              copy16_async_stream(dst + d * 4, w_src[i], w_ok[i]);   // ka0 < ka_end here
            } else {
              // a stage may run past the end of the split (or of K): those atom columns are zero-filled
              const bool valid = w_ok[i] && (ka0 + w_col[i] < ka_end);
              copy16_async_stream(dst + d * 4, valid ? w_src[i] : w, valid);
            }
          }
          w_src[i] += w_stage_stride;
        }
      }
      // group scales (and zero terms) of the groups this stage touches, BN consecutive rows each.
      if constexpr (Cfg::kGroup != 0) {
        const int grp0 = (unsigned)(ka0 * 64) / (unsigned)Cfg::kGroup;
        T* dst_s = stage_s(slot);
#pragma unroll
        for (int i = 0; i < ceil_div(kSChunks, kCopyThreads); ++i) {
          const int c = i * kCopyThreads + s_tid;
          if (kSChunks % kCopyThreads == 0 || c < kSChunks) {
            const int gi = c / kSChunksPerGroupG;
            const int ch = cg * kSChunksPerGroupG + c % kSChunksPerGroupG;
            const bool valid = (grp0 + gi < num_groups) && (n0 + ch * 8 < N16);
            const size_t off = (size_t)(grp0 + gi) * N16 + n0 + ch * 8;
            copy16_async(dst_s + gi * kBN + ch * 8, valid ? gscale + off : gscale, valid);
            if constexpr (Cfg::kZeroMode != kNoZero) {
              copy16_async(stage_z(slot) + gi * kBN + ch * 8, valid ? gzero + off : gzero, valid);
            }
          }
        }
      }
    };
    // Activations (written by the previous kernel: only after grid_dependency_wait()).
    // (kTmaX: the thread whose `issuer` is 0 issues the boxes -- thread 0, or when decoupled the last
    // warpgroup to release the slot)
    auto load_stage_x = [&](int it, int slot, int issuer) {
      const int ka0 = ka_begin + it * Cfg::kAtomsK;
      if constexpr (kTmaX) {
        // one box of kBT rows x 64 columns per atom, issued by thread 0; an atom past the split's end (a two-atom
        // stage that runs over it) is read from column K64 -- wholly outside x, so the unit fills it with zeros, as
        // the cp.async path does, and the byte count stays kAtomsK whole boxes
        tma_load_x<Cfg::kAtomsK>(stage_x(slot), kBT * 128, x_map, ka0 * 64, min(Cfg::kAtomsK, ka_end - ka0), K64, m0,
                                 x_bar + slot, Cfg::kAtomsK * kBT * 128, issuer);
        return;
      }
      {
        // token rows past M are never copied: they were zeroed once before the pipeline started and stay zero
        T* dst = stage_x(slot);
        const int k0 = ka0 * 64;
        const bool col_ok = (k0 + x_ch * 8 < K) && (Cfg::kAtomsK == 1 || ka0 + x_ch / 8 < ka_end);
#pragma unroll
        for (int i = 0; i < kXIters; ++i) {
          const int r = x_r0 + i * kXRowStep;
          if ((kBT % kXRowStep == 0 || r < kBT) && m0 + r < M) {
            copy16_async(const_cast<T*>(XTile::at(dst, r, x_ch)), col_ok ? x_src + (size_t)i * kXRowStep * K : x,
                         col_ok);
          }
        }
        x_src += kBK;
      }
    };

    // Prefetch distance: stage it + kDist is loaded while stage it is computed.  mma.sync: kStages - 1 (the slot
    // refilled is the one the previous step consumed).  wgmma: one stage's asynchronous MMAs stay in flight across the
    // next step (its dequant overlaps them), so the slot refilled is the one consumed two steps ago: kStages - 2.
    constexpr int kMmaInFlight = (Cfg::kWgmma && Cfg::kStages >= 3) ? 1 : 0;
    constexpr int kDist = Cfg::kStages - 1 - kMmaInFlight;
    static_assert(kDist >= 1, "at least one stage of prefetch");
    // Prologue.  Weights and scales of the first kDist stages go out before grid_dependency_wait(): under
    // programmatic dependent launch they stream while the previous kernel is still finishing.  The activations follow
    // once it has.  All of them form ONE cp.async group, then kDist-1 empty groups keep the count the main loop's
    // cp_async_wait<kDist-1> expects (its first wait therefore waits for the first kDist stages at once).
    static_for<kDist>([&](auto s_) {
      constexpr int s = decltype(s_)::value;
      if (s < num_stages_total) load_stage_w(s, s);
    });
    if (first) grid_dependency_wait();
    // When the next PDL launch may start: memory-safe either way (its own wait is for this grid's completion); it only
    // decides when its blocks may take SM slots and start their weight prefetch.  Early (right here) hides this grid's
    // tail -- the split-K reductions, the last blocks -- behind the next kernel's prologue: 28672x4096 M=1 25.4 ->
    // 22.9 us on the H200.  But blocks that arrive early sit in griddepcontrol.wait on free slots next to this grid's
    // warps, and where the grid leaves many slots free that cost more than it hid (4096x14336 M=1, 512 blocks for 924
    // slots: 14.2 -> 16.8 us).  So the host asks for it only when the grid fills the slots (flags).
    // (the host never sets it for wgmma kernels: no gain measured at M = 64 / 256)
    if (first && release_early) grid_dependents_launch();
    static_for<kDist>([&](auto s_) {
      constexpr int s = decltype(s_)::value;
      if (s < num_stages_total) load_stage_x(s, s, tid);
    });
    static_for<kDist>([&](auto) { cp_async_commit(); });
    // One pipeline step: wait for stage `it` (ring slot `slot`), refill the slot freed kMmaInFlight + 1 steps ago with
    // stage it + kDist, compute.
    auto step = [&](int it, int slot, auto buf_) {
      cp_async_wait<kDist - 1>();
      if constexpr (kTmaX) {
        // every thread waits: the mbarrier makes the unit's writes visible to the waiting thread's wgmma reads
        mbar_wait(x_bar + slot, (x_phase >> slot) & 1u);
        x_phase ^= 1u << slot;
      } else if constexpr (Cfg::kWgmma) {
        // wgmma reads the x tile through the async proxy: this thread's cp.async writes (and the one-time zero rows)
        // are fenced into it before the barrier publishes the stage (wgmma.cuh, fence_proxy_async_shared)
        fence_proxy_async_shared();
      }
      math.template wait_mma<kMmaInFlight>();   // wgmma: the MMAs that read the slot refilled below are done
      if constexpr (kDecoupled) named_barrier_sync(1 + cg, kCopyThreads);   // this warpgroup only
      else __syncthreads();
      if (it + kDist < num_stages_total) {
        const int refill = slot + kDist >= Cfg::kStages ? slot + kDist - Cfg::kStages : slot + kDist;
        // experiments only (wrong results): the main loop without the weight / activation copies -- what the math
        // warps' copy issue costs them (the prologue's stages are still copied)
#ifndef HUMMING_DEBUG_SKIP_W_COPY
        load_stage_w(it + kDist, refill);
#endif
#ifdef HUMMING_DEBUG_SKIP_X_COPY
        // (a TMA x tile's stage waits on its mbarrier, which only the skipped copy completes: the kernel would hang --
        // session 53's call B lost a 45 s sweep to it)
        static_assert(!kTmaX, "HUMMING_DEBUG_SKIP_X_COPY: cp.async x tiles only (a TMA x stage would never arrive)");
#else
        if constexpr (kDecoupled) {
          // this warpgroup is done with slot `refill` (its weight rows and scales were refilled just above); its x
          // tile is refilled by the warpgroup whose release completes the slot's count -- a predicated atomic, no
          // branch in the wgmma loop; acq_rel: the other warpgroup's completed reads of the slot happen before the
          // copy that overwrites it (the mbarrier arrive of a producer / consumer pipeline plays this role elsewhere)
          uint32_t before = 1u;
          asm volatile(
              "{\n"
              "  .reg .pred p;\n"
              "  setp.eq.s32 p, %2, 0;\n"
              "  @p atom.acq_rel.cta.shared::cta.add.u32 %0, [%1], 1;\n"
              "}\n"
              : "+r"(before)
              : "r"(smem_u32(release_count(refill))), "r"(ct)
              : "memory");
          load_stage_x(it + kDist, refill, (ct == 0 && before % kGroups == kGroups - 1) ? 0 : 1);
        } else {
          load_stage_x(it + kDist, refill, tid);
        }
#endif
      }
      cp_async_commit();
      math.template stage<decltype(buf_)::value>(stage_w(slot), stage_x(slot), stage_s(slot), stage_z(slot));
    };
    // The step-group kernels (128+ accumulators, Cfg::kWgStepGroups) alternate fragment buffers per k16 step inside
    // a stage, so they do not need the unroll by two below.  Experiment (HUMMING_DEBUG_WG_ROLLED, session 13): their
    // loop rolled -- one copy of the stage instead of three, NVRTC 1.34 -> 0.73-0.83 s for the 256-row M=256 kernel on
    // the CPU machine, 1.6 -> 0.97 s for its stream-K variant, ~20 more instructions per stage (ring arithmetic) --
    // runs 2-10 % slower on the H200 (session 14, results/h200-2026-12-01-s14/a_sweep_rolled.txt vs
    // a_sweep_unrolled.txt), so the default keeps the unrolled loop.
#ifdef HUMMING_DEBUG_WG_ROLLED
    // (also the two-atom stages: their fragment buffer is the atom, not the stage parity.  Session 16, int4 on the
    // H200, rolled vs unrolled: the 64-token 128-row tile ties (15.3 / 22.9 vs 15.4 / 22.9 us), the 64-token 256-row
    // tile loses 5 % (40.3 vs 38.2), the 128-token ones 1-3 % (256-row) and 21 % (128-row, 6144x4096 M=256 39.8 vs
    // 32.8): results/h200-2026-12-02-s16/b_sweep_rolled_m64_256.txt vs b_sweep_unrolled_m64_256.txt)
    constexpr bool kRolledWgmma = Cfg::kWgStepGroups || Cfg::kAtomsK > 1;
#else
    constexpr bool kRolledWgmma = false;
#endif
    if constexpr (Cfg::kWgmma && !kRolledWgmma) {
      // wgmma: consecutive stages dequantize into alternating fragment buffers (one stage's MMAs are still reading the
      // other), so the loop is unrolled by two to make the buffer index a constant.  (Experiment, session 16: the odd
      // tail folded into the loop as a guarded second step -- two copies of the stage instead of three, NVRTC on the CPU
      // machine 3.2 -> 1.9 s for the 256-row two-atom kernel -- ran 0.5-2 % slower, up to 9 % for the 128-row
      // one-atom tiles: results/h200-2026-12-02-s16/c_sweep_two_bodies.txt vs c_sweep_three_bodies.txt.)
      int it = 0, slot = 0;
      auto next = [](int s) { return s == Cfg::kStages - 1 ? 0 : s + 1; };
#pragma unroll 1
      for (; it + 2 <= num_stages_total; it += 2) {
        step(it, slot, Int<0>{});
        slot = next(slot);
        step(it + 1, slot, Int<1>{});
        slot = next(slot);
      }
      if (it < num_stages_total) step(it, slot, Int<0>{});
    } else if constexpr (Cfg::kBT <= 16 && !Cfg::kWgmma) {
      // Decode tiles: the per-stage math is short, so ring arithmetic would be a visible share of it.  Unroll the loop
      // by the ring depth (every slot a constant); the tail runs the < kStages remaining steps the same way.  (Wide
      // token tiles keep the rolled loop: their stage math dwarfs the ring arithmetic, and unrolling it kStages times
      // made NVRTC take seconds.)
      int it = 0;
#pragma unroll 1
      for (; it + Cfg::kStages <= num_stages_total; it += Cfg::kStages) {
        static_for<Cfg::kStages>([&](auto s_) { step(it + decltype(s_)::value, decltype(s_)::value, Int<0>{}); });
      }
      static_for<Cfg::kStages - 1>([&](auto s_) {
        if (it + decltype(s_)::value < num_stages_total) step(it + decltype(s_)::value, decltype(s_)::value, Int<0>{});
      });
    } else {
      int slot = 0;
#pragma unroll 1
      for (int it = 0; it < num_stages_total; ++it) {
        step(it, slot, Int<0>{});
        slot = slot == Cfg::kStages - 1 ? 0 : slot + 1;
      }
    }
    cp_async_wait<0>();
    math.template wait_mma<0>();
    __syncthreads();
  };

  static_assert(kCluster == 0 || !kStreamK, "stream-K grids are persistent: no clusters");
  static_assert(!(Cfg::kWgmma && Cfg::kWarpsK > 1) || (!kStreamK && kCluster == 0),
                "staged wgmma K-warpgroups: split-K grids with the workspace end (the host never asks for more)");
  if constexpr (!kStreamK) {
    // ------------------------------------------------------------------------------------ split-K: one segment
    // kRowTiles: the 256-token tiles, the kernels a layer's plan may launch as whole waves + a split tail (host:
    // heuristics.dp_tail_applies); the row-tile offset and the launch-local workspace cost every other kernel
    // registers it does not need (the 64-token wide tile's SASS changed with them), so they stay out of those.
    constexpr bool kRowTiles = Cfg::kWgmma && kBT == 256 && kCluster == 0;
    const int row_tile0 = kRowTiles ? row_tile0_from_flags(flags) : 0;
    const int m0 = blockIdx.x * kBT;              // first token of the block
    const int n_atom0 = (blockIdx.y + row_tile0) * (kBN / 16);  // first atom row of the block
    const int ka_begin = blockIdx.z * atoms_per_split;
    run_segment(m0, n_atom0, ka_begin, min(k_atoms, ka_begin + atoms_per_split), true);
    // every weight byte of this block is read: the next PDL launch may start prefetching its own
    if (!release_early) grid_dependents_launch();
    math.reduce_k(reinterpret_cast<float*>(smem), [] { __syncthreads(); });
    // wgmma K-warpgroups: the epilogue stages its fp32 tile over the region the K sum just read
    if constexpr (Cfg::kWgmma && Cfg::kWarpsK > 1) __syncthreads();
    if constexpr (kCluster != 0) {
      static_assert(Cfg::kWgmma, "cluster-reduced cp.async grids: wgmma tiles (their ring holds the fp32 tile)");
      cluster_splitk_epilogue<Cfg, kCluster>(math, y, chscale, tscale, bias, M, N, m0, n_atom0 * 16,
                                             reinterpret_cast<float*>(smem));
    } else {
      // (kRowTiles: the workspace holds this launch's row tiles only)
      splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n_atom0 * 16,
                           reinterpret_cast<float*>(smem), reducers_from_flags(flags),
                           kRowTiles ? (int)gridDim.y * kBN : 0, row_tile0 * kBN,
                           Cfg::kWgmma && splitk_poll_from_flags(flags));
    }
  } else {
    // ------------------------------------------------------------------------------------ stream-K
    // Units = stages (kAtomsK atom columns) of tiles, tile-major with the token tile fastest; block b owns units
    // [b * U / G, (b + 1) * U / G) of U (StreamKSchedule): every block streams the same weight bytes +-1 stage, so a
    // tile count that does not divide into the resident slots leaves no SM idle.
    const StreamKSchedule sched(ceil_div(M, kBT), ceil_div(N16, kBN), ceil_div(k_atoms, Cfg::kAtomsK));
    long long u = sched.range_start(blockIdx.x);
    const long long u_end = sched.range_start(blockIdx.x + 1);
    bool first = true;
#pragma unroll 1
    while (u < u_end) {
      const int tile = (int)(u / sched.units_per_tile);
      const int st0 = (int)(u % sched.units_per_tile);
      const long long seg_end = min(u_end, (long long)(tile + 1) * sched.units_per_tile);
      const int st1 = (int)(seg_end - (long long)tile * sched.units_per_tile);
      const int m0 = (tile % sched.m_tiles) * kBT;
      const int n_atom0 = (tile / sched.m_tiles) * (kBN / 16);
      math.clear();
      run_segment(m0, n_atom0, st0 * Cfg::kAtomsK, min(k_atoms, st1 * Cfg::kAtomsK), first);
      if (seg_end == u_end && !release_early) grid_dependents_launch();
      math.reduce_k(reinterpret_cast<float*>(smem), [] { __syncthreads(); });
      streamk_end_segment<Cfg>(math, sched, y, ws, tickets, chscale, tscale, bias, M, N, m0, n_atom0 * 16, tile,
                               st0 == 0 && st1 == sched.units_per_tile, first ? 0 : 1, reinterpret_cast<float*>(smem));
      first = false;
      u = seg_end;
    }
  }
}

}  // namespace humming
