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
// Split-K across blocks (gridDim.z > 1): every split writes fp32 partials to a workspace; the last block of a tile
// to arrive (atomic ticket) sums them in split order -- deterministic -- and runs the epilogue.  It also resets the
// ticket, so the counters stay zero between calls and CUDA-graph replays need no memset.
#pragma once

#include "humming/wna16_math.cuh"

namespace humming {

// Shared-memory plan of the cp.async ring (must equal KernelChoice.smem_bytes in vllm_humming/tuning/heuristics.py).
template <class Cfg> struct CpAsyncSmem {
  static constexpr int kX = Cfg::kBT * Cfg::kBK * 2;       // swizzled activation rows (XTileSwizzled)
  static constexpr int kStage = Cfg::kSmemW + kX + Cfg::kSmemS + Cfg::kSmemZ;
  static constexpr int kBytes = kStage * Cfg::kStages > Cfg::kSmemReduce ? kStage * Cfg::kStages : Cfg::kSmemReduce;
  static_assert(kX % 16 == 0, "16-byte aligned shared regions");
};

// The end of a (token tile, weight-row tile, K split) block of a grid = (token tiles, row tiles, splits), after the
// intra-block K reduction (math warps wk == 0 hold the block's sums).  One split: write y.  Several: every split
// writes fp32 partials to ws [splits][token tiles * kBT][N16]; the last block of the tile to arrive (atomic ticket)
// sums them in split order -- deterministic -- runs the epilogue and resets the ticket, so the counters stay zero
// between calls and CUDA-graph replays need no memset.  Called by every thread of the block.
template <class Cfg, class Math>
__device__ __forceinline__ void splitk_epilogue(const Math& math, typename Cfg::T* __restrict__ y,
                                                float* __restrict__ ws, int* __restrict__ tickets,
                                                const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                const typename Cfg::T* __restrict__ bias, int M, int N, int N16,
                                                int m0, int n0) {
  using T = typename Cfg::T;
  constexpr int kBT = Cfg::kBT;
  constexpr int kBN = Cfg::kBN;
  const int split = blockIdx.z;
  if (gridDim.z == 1) {
    if (math.wk != 0) return;
    math.for_each_output([&](int mr, int nr, float v) {
      const int n = n0 + nr, m = m0 + mr;
      if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(v, n, chscale, tscale, bias));
    });
    return;
  }
  const size_t ws_rows = (size_t)gridDim.x * kBT;
  if (math.wk == 0) {
    math.for_each_output([&](int mr, int nr, float v) {
      const int n = n0 + nr, m = m0 + mr;           // padding rows are never read back
      if (n < N16 && m < M) __stcg(ws + ((size_t)split * ws_rows + m) * N16 + n, v);
    });
  }
  // One gpu-scope fence per block, not one per thread: the barrier orders every thread's partial stores before
  // thread 0's fence (CTA scope), and the fence is cumulative, so they are visible GPU-wide before the ticket moves.
  // The last block's thread 0 fences again after the ticket (acquire side) before the barrier releases its readers.
  __syncthreads();
  __shared__ int is_last;
  const int ticket_id = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    __threadfence();
    const int prev = atomicAdd(tickets + ticket_id, 1);
    is_last = (prev == (int)gridDim.z - 1);
    if (is_last) __threadfence();
  }
  __syncthreads();
  if (!is_last) return;
  for (int i = threadIdx.x; i < kBT * kBN; i += blockDim.x) {
    const int mr = m0 + i / kBN;
    const int n = n0 + i % kBN;
    if (mr >= M || n >= N) continue;
    float sum = 0.f;
    for (int s = 0; s < (int)gridDim.z; ++s) sum += __ldcg(ws + ((size_t)s * ws_rows + mr) * N16 + n);
    y[(size_t)mr * N + n] = from_float<T>(epilogue_value(sum, n, chscale, tscale, bias));
  }
  if (threadIdx.x == 0) tickets[ticket_id] = 0;
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
//   ws       [splits][m_tiles*kBT][N16] float32 split-K partials (null when gridDim.z == 1)
//   tickets  [m_tiles * n_tiles] int32, zero between calls (null when gridDim.z == 1)
template <class Cfg>
__device__ __forceinline__ void gemm_wna16(const typename Cfg::T* __restrict__ x, const uint32_t* __restrict__ w,
                                           const typename Cfg::T* __restrict__ gscale,
                                           const typename Cfg::T* __restrict__ gzero,
                                           const float* __restrict__ chscale, const float* __restrict__ tscale,
                                           const typename Cfg::T* __restrict__ bias, typename Cfg::T* __restrict__ y,
                                           float* __restrict__ ws, int* __restrict__ tickets, int M, int N, int K,
                                           int N16, int K64, int atoms_per_split) {
  using T = typename Cfg::T;
  using T2 = typename Cfg::T2;
  using Family = typename Cfg::Family;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBK = Cfg::kBK;
  constexpr int kBT = Cfg::kBT;
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kThreads = Cfg::kThreads;

  extern __shared__ __align__(16) uint8_t smem[];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int wn = warp % Cfg::kWarpsN;
  const int wk = warp / Cfg::kWarpsN;

  const int m0 = blockIdx.x * kBT;             // first token of the block
  const int n_atom0 = blockIdx.y * (kBN / 16);  // first atom row of the block
  const int n0 = n_atom0 * 16;
  const int n_atoms = N16 / 16;
  const int k_atoms = K64 / 64;
  const int split = blockIdx.z;
  const int ka_begin = split * atoms_per_split;
  const int ka_end = min(k_atoms, ka_begin + atoms_per_split);
  const int num_stages_total = ka_end > ka_begin ? ceil_div(ka_end - ka_begin, Cfg::kAtomsK) : 0;
  const int num_groups = Cfg::kGroup ? ceil_div(K64, Cfg::kGroup) : 0;

  using Smem = CpAsyncSmem<Cfg>;
  auto stage_w = [&](int s) { return reinterpret_cast<uint32_t*>(smem + s * Smem::kStage); };
  auto stage_x = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Cfg::kSmemW); };
  auto stage_s = [&](int s) { return reinterpret_cast<T*>(smem + s * Smem::kStage + Cfg::kSmemW + Smem::kX); };
  auto stage_z = [&](int s) {
    return reinterpret_cast<T*>(smem + s * Smem::kStage + Cfg::kSmemW + Smem::kX + Cfg::kSmemS);
  };

  // ---------------------------------------------------------------------------------------- global -> shared
  // Copy plan, fixed per thread for the whole K loop: which 16-byte chunks of each stage this thread moves.  Every
  // per-stage address is then a base plus the stage's K offset, so the loads cost a few instructions per chunk.
  //   W : kAtomsK atom columns x (kBN/16) atoms, each atom column one contiguous run of kChunksPerCol chunks.
  //   x : kBT rows x kBK/8 chunks; kThreads is a multiple of the chunks per row, so a thread's chunk column is fixed
  //       and its rows step by kThreads / (kBK/8).  Chunks are XOR-swizzled by row (ldmatrix then hits 8 banks).
  constexpr int kWChunksPerCol = (kBN / 16) * kAtomWords / 4;
  constexpr int kWChunks = Cfg::kAtomsK * kWChunksPerCol;
  constexpr int kWIters = ceil_div(kWChunks, kThreads);
  constexpr int kXChunksPerRow = kBK / 8;
  static_assert(kThreads % kXChunksPerRow == 0, "x copy plan: threads cover whole chunk columns");
  constexpr int kXRowStep = kThreads / kXChunksPerRow;
  constexpr int kXIters = ceil_div(kBT, kXRowStep);
  const int tid = threadIdx.x;
  const size_t w_col_stride = (size_t)n_atoms * kAtomWords;          // words between atom columns
  // Loop-carried source pointers, advanced by one stage per load: the per-chunk work in the K loop is one 64-bit add,
  // a predicate and the cp.async.
  const uint32_t* w_src[kWIters];
  int w_col[kWIters];         // atom column inside the stage
  bool w_ok[kWIters];         // chunk exists and its atom row is inside N
#pragma unroll
  for (int i = 0; i < kWIters; ++i) {
    const int c = i * kThreads + tid;
    const int a = c / kWChunksPerCol;
    const int rem = c % kWChunksPerCol;
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
  constexpr int kSChunks = Cfg::kGroupsPerStage * kSChunksPerGroup;
  const int s_tid = kThreads - 1 - tid;

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
        if (kWChunks % kThreads == 0 || i * kThreads + tid < kWChunks) {
          if constexpr (Cfg::kAtomsK == 1) {
            copy16_async_stream(dst + (i * kThreads + tid) * 4, w_src[i], w_ok[i]);   // ka0 < ka_end here
          } else {
            // a stage may run past the end of the split (or of K): those atom columns are zero-filled
            const bool valid = w_ok[i] && (ka0 + w_col[i] < ka_end);
            copy16_async_stream(dst + (i * kThreads + tid) * 4, valid ? w_src[i] : w, valid);
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
      for (int i = 0; i < ceil_div(kSChunks, kThreads); ++i) {
        const int c = i * kThreads + s_tid;
        if (kSChunks % kThreads == 0 || c < kSChunks) {
          const int gi = c / kSChunksPerGroup;
          const int ch = c % kSChunksPerGroup;
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
  auto load_stage_x = [&](int it, int slot) {
    const int ka0 = ka_begin + it * Cfg::kAtomsK;
    {
      // token rows past M are never copied: they were zeroed once before the pipeline started and stay zero
      T* dst = stage_x(slot);
      const int k0 = ka0 * 64;
      const bool col_ok = (k0 + x_ch * 8 < K) && (Cfg::kAtomsK == 1 || ka0 + x_ch / 8 < ka_end);
#pragma unroll
      for (int i = 0; i < kXIters; ++i) {
        const int r = x_r0 + i * kXRowStep;
        if ((kBT % kXRowStep == 0 || r < kBT) && m0 + r < M) {
          copy16_async(dst + r * kBK + ((x_ch ^ (r % 8)) * 8), col_ok ? x_src + (size_t)i * kXRowStep * K : x, col_ok);
        }
      }
      x_src += kBK;
    }
  };

  Wna16Math<Cfg, XTileSwizzled<kBK>> math(wn, wk, lane);

  // ---------------------------------------------------------------------------------------- the pipeline
  // Zero the activation tiles of every slot once: rows past M are never copied (see load_stage_x).
  for (int i = tid; i < Cfg::kStages * Smem::kX / 16; i += kThreads) {
    const int st = i / (Smem::kX / 16), c = i % (Smem::kX / 16);
    reinterpret_cast<uint4*>(smem + st * Smem::kStage + Cfg::kSmemW)[c] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();   // the zeros land before any cp.async of another thread writes a valid row
  // Prologue.  Weights and scales of the first kStages-1 stages go out before grid_dependency_wait(): under
  // programmatic dependent launch they stream while the previous kernel is still finishing.  The activations follow
  // once it has.  All of them form ONE cp.async group, then kStages-2 empty groups keep the count the main loop's
  // cp_async_wait<kStages-2> expects (its first wait therefore waits for the first kStages-1 stages at once).
  static_for<Cfg::kStages - 1>([&](auto s_) {
    constexpr int s = decltype(s_)::value;
    if (s < num_stages_total) load_stage_w(s, s);
  });
  grid_dependency_wait();
  static_for<Cfg::kStages - 1>([&](auto s_) {
    constexpr int s = decltype(s_)::value;
    if (s < num_stages_total) load_stage_x(s, s);
  });
  static_for<Cfg::kStages - 1>([&](auto) { cp_async_commit(); });
  // One pipeline step: wait for stage `it` (ring slot `slot`), refill the slot freed by the previous step, compute.
  auto step = [&](int it, int slot) {
    cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();
    if (it + Cfg::kStages - 1 < num_stages_total) {
      const int refill = slot == 0 ? Cfg::kStages - 1 : slot - 1;
      load_stage_w(it + Cfg::kStages - 1, refill);
      load_stage_x(it + Cfg::kStages - 1, refill);
    }
    cp_async_commit();
    math.stage(stage_w(slot), stage_x(slot), stage_s(slot), stage_z(slot));
  };
  if constexpr (Cfg::kBT <= 16) {
    // Decode tiles: the per-stage math is short, so ring arithmetic would be a visible share of it.  Unroll the loop
    // by the ring depth (every slot a constant); the tail runs the < kStages remaining steps the same way.  (Wide
    // token tiles keep the rolled loop: their stage math dwarfs the ring arithmetic, and unrolling it kStages times
    // made NVRTC take seconds.)
    int it = 0;
#pragma unroll 1
    for (; it + Cfg::kStages <= num_stages_total; it += Cfg::kStages) {
      static_for<Cfg::kStages>([&](auto s_) { step(it + decltype(s_)::value, decltype(s_)::value); });
    }
    static_for<Cfg::kStages - 1>([&](auto s_) {
      if (it + decltype(s_)::value < num_stages_total) step(it + decltype(s_)::value, decltype(s_)::value);
    });
  } else {
    int slot = 0;
#pragma unroll 1
    for (int it = 0; it < num_stages_total; ++it) {
      step(it, slot);
      slot = slot == Cfg::kStages - 1 ? 0 : slot + 1;
    }
  }
  cp_async_wait<0>();
  __syncthreads();
  // every weight byte of this block is read: the next PDL launch may start prefetching its own
  grid_dependents_launch();

  // ---------------------------------------------------------------------------------------- intra-block K reduction
  math.reduce_k(reinterpret_cast<float*>(smem), [] { __syncthreads(); });

  splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n0);
}

}  // namespace humming
