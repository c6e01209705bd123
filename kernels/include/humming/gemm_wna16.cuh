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

#include "humming/common.cuh"
#include "humming/copy.cuh"
#include "humming/dequant.cuh"
#include "humming/layout.cuh"
#include "humming/mma.cuh"

namespace humming {

enum ZeroMode : int { kNoZero = 0, kIntZero = 1, kFloatZero = 2 };

template <class T_, class Family_, int kGroup_, int kZeroMode_, int kOffset_, int kBT_, int kWarpsN_, int kTilesM_,
          int kWarpsK_, int kAtomsK_, int kStages_>
struct GemmConfig {
  using T = T_;
  using Family = Family_;
  using T2 = typename ComputeTraits<T>::T2;
  static constexpr int kBits = Family::kBits;
  static constexpr int kGroup = kGroup_;          // in-loop group scale size along K (0: none)
  static constexpr int kZeroMode = kZeroMode_;
  static constexpr int kOffset = kOffset_;        // integer families: code offset (value = code - offset)
  static constexpr int kBT = kBT_;                // tokens per block
  static constexpr int kWarpsN = kWarpsN_;
  static constexpr int kTilesM = kTilesM_;        // m16 tiles (16 weight rows each) per warp
  static constexpr int kWarpsK = kWarpsK_;
  static constexpr int kAtomsK = kAtomsK_;        // 64-column atom columns per stage
  static constexpr int kStages = kStages_;

  static constexpr int kThreads = 32 * kWarpsN * kWarpsK;
  static constexpr int kBN = 16 * kTilesM * kWarpsN;   // weight rows per block
  static constexpr int kBK = 64 * kAtomsK;             // K columns per stage
  static constexpr int kTokenGroups = kBT / 8;         // n8 MMA tiles per warp
  static constexpr int kAtomWords = PlaneSplit<kBits>::kAtomWords;
  static constexpr int kGroupsPerStage = kGroup == 0 ? 0 : (kGroup >= kBK ? 1 : kBK / kGroup);
  // Accumulator-side scaling (small token tiles, where dequant instructions are the bottleneck): the MMA consumes the
  // raw pairs R (int: kRawBias + code; float: code * 2^kExpAdjust restored) and the group's zero/scale are applied to
  // the fp32 partial sums every kFlushSteps k16 steps:
  //     sum_k x_k * (R_k - Z) * s  =  s * (sum_k x_k R_k  -  Z * sum_k x_k)
  // sum_k x_k comes from one extra MMA with an all-ones A fragment.  Saves the sub + mul per weight pair; costs a few
  // FMAs per flush, so it pays while the token tile is small (kTG <= 2).
  static constexpr bool kAccScale = (kBT <= 16) && (Family::kIsInt || kGroup != 0);
  static constexpr int kFlushSteps = kGroup == 0 ? 4 : (kGroup >= 64 ? 4 : kGroup / 16);

  static constexpr int kSmemW = kAtomsK * (kBN / 16) * kAtomWords * 4;
  static constexpr int kSmemX = kBT * kBK * 2;
  static constexpr int kSmemS = kGroupsPerStage * kBN * 2;
  static constexpr int kSmemZ = kZeroMode == kNoZero ? 0 : kSmemS;
  static constexpr int kSmemStage = kSmemW + kSmemX + kSmemS + kSmemZ;
  static constexpr int kSmemReduce = (kWarpsK - 1) * kWarpsN * 32 * kTilesM * kTokenGroups * 4 * 4;
  static constexpr int kSmemBytes = kSmemStage * kStages > kSmemReduce ? kSmemStage * kStages : kSmemReduce;

  static_assert(kBT % 8 == 0 && (kBT == 8 || kBT % 16 == 0), "tokens per block: 8 or a multiple of 16");
  static_assert(kAtomsK % kWarpsK == 0, "each K-warp takes the same number of atom columns per stage");
  static_assert(kStages >= 2, "the cp.async ring needs at least two stages");
  static_assert(kSmemW % 16 == 0 && kSmemX % 16 == 0 && kSmemS % 16 == 0, "16-byte aligned shared regions");
  static_assert(kGroup == 0 || kGroup % 16 == 0, "group sizes are multiples of 16 (one k16 step never straddles)");
  static_assert(kGroup == 0 || kGroup >= kBK || kBK % kGroup == 0, "groups tile the stage");
  static_assert(kZeroMode == kNoZero || kGroup != 0, "zero points come with group scales");
};

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
  constexpr int kTG = Cfg::kTokenGroups;
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kThreads = Cfg::kThreads;

  extern __shared__ __align__(16) uint8_t smem[];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int wn = warp % Cfg::kWarpsN;
  const int wk = warp / Cfg::kWarpsN;
  const int g = lane / 4;
  const int t = lane % 4;

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

  auto stage_w = [&](int s) { return reinterpret_cast<uint32_t*>(smem + s * Cfg::kSmemStage); };
  auto stage_x = [&](int s) { return reinterpret_cast<T*>(smem + s * Cfg::kSmemStage + Cfg::kSmemW); };
  auto stage_s = [&](int s) { return reinterpret_cast<T*>(smem + s * Cfg::kSmemStage + Cfg::kSmemW + Cfg::kSmemX); };
  auto stage_z = [&](int s) {
    return reinterpret_cast<T*>(smem + s * Cfg::kSmemStage + Cfg::kSmemW + Cfg::kSmemX + Cfg::kSmemS);
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
    w_col[i] = a;
    w_ok[i] = (c < kWChunks) && (n_atom0 + rem / (kAtomWords / 4) < n_atoms);
    w_src[i] = w + (size_t)(ka_begin + a) * w_col_stride + (size_t)n_atom0 * kAtomWords + rem * 4;
  }
  const int x_ch = tid % kXChunksPerRow;
  const int x_r0 = tid / kXChunksPerRow;
  const T* x_src = x + (size_t)(m0 + x_r0) * K + (size_t)ka_begin * 64 + x_ch * 8;
  const size_t w_stage_stride = Cfg::kAtomsK * w_col_stride;

  auto load_stage = [&](int it, int slot) {
    const int ka0 = ka_begin + it * Cfg::kAtomsK;
    {
      uint32_t* dst = stage_w(slot);
#pragma unroll
      for (int i = 0; i < kWIters; ++i) {
        // chunks past the end of the W region do not exist (a zero-fill there would overwrite the x tile)
        if (kWChunks % kThreads == 0 || i * kThreads + tid < kWChunks) {
          const bool valid = w_ok[i] && (ka0 + w_col[i] < ka_end);
          copy16_async_stream(dst + (i * kThreads + tid) * 4, valid ? w_src[i] : w, valid);
        }
        w_src[i] += w_stage_stride;
      }
    }
    {
      T* dst = stage_x(slot);
      const int k0 = ka0 * 64;
      const bool col_ok = (k0 + x_ch * 8 < K) && (ka0 + x_ch / 8 < ka_end);
#pragma unroll
      for (int i = 0; i < kXIters; ++i) {
        const int r = x_r0 + i * kXRowStep;
        if (kBT % kXRowStep == 0 || r < kBT) {
          const bool valid = col_ok && (m0 + r < M);
          copy16_async(dst + r * kBK + ((x_ch ^ (r % 8)) * 8), valid ? x_src + (size_t)i * kXRowStep * K : x, valid);
        }
      }
      x_src += kBK;
    }
    // group scales (and zero terms) of the groups this stage touches, BN consecutive rows each.
    if constexpr (Cfg::kGroup != 0) {
      constexpr int kChunksPerGroup = kBN / 8;
      constexpr int kChunks = Cfg::kGroupsPerStage * kChunksPerGroup;
      const int grp0 = (ka0 * 64) / Cfg::kGroup;
      T* dst_s = stage_s(slot);
#pragma unroll
      for (int i = 0; i < ceil_div(kChunks, kThreads); ++i) {
        const int c = i * kThreads + tid;
        if (kChunks % kThreads == 0 || c < kChunks) {
          const int gi = c / kChunksPerGroup;
          const int ch = c % kChunksPerGroup;
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

  float acc[Cfg::kTilesM][kTG][4];
#pragma unroll
  for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTG; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;

  // Constant zero term of symmetric integer formats, and 2^kExpAdjust of float formats.
  const T2 const_zero = pack2_from_float<T2>((float)(Family::kRawBias + Cfg::kOffset),
                                              (float)(Family::kRawBias + Cfg::kOffset));
  const T2 raw_bias = pack2_from_float<T2>((float)Family::kRawBias, (float)Family::kRawBias);

  // accumulator-side scaling state (kAccScale): per-window raw partial sums and per-token sums of x
  float part[Cfg::kAccScale ? Cfg::kTilesM : 1][Cfg::kAccScale ? kTG : 1][4];
  float xsum[Cfg::kAccScale ? kTG : 1][4];
  constexpr uint32_t kOnes2 = ComputeTraits<T>::kIsBF16 ? 0x3F803F80u : 0x3C003C00u;   // {1.0, 1.0}
  (void)part; (void)xsum;

  // ---------------------------------------------------------------------------------------- compute one stage
  auto compute_stage = [&](int slot) {
    const uint32_t* sw = stage_w(slot);
    const T* sx = stage_x(slot);
    const T* ss = stage_s(slot);
    const T* sz = stage_z(slot);
#pragma unroll 1
    for (int ai = 0; ai < Cfg::kAtomsK / Cfg::kWarpsK; ++ai) {
      const int a = ai * Cfg::kWarpsK + wk;        // atom column inside the stage
      uint32_t words[Cfg::kTilesM][kBits];
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
        const int atom_row = wn * Cfg::kTilesM + tm;
        load_atom_words<kBits>(words[tm], sw + (a * (kBN / 16) + atom_row) * kAtomWords, lane);
      }
      static_for<4>([&](auto f_) {
        constexpr int f = decltype(f_)::value;
        // B fragments (activations) for all token groups of this k16 step.
        uint32_t b[kTG][2];
        const int kchunk = a * 8 + f * 2;          // 8-element chunk index of the step's first column
        if constexpr (kBT == 8) {
          const int r = lane % 8;
          const int ch = kchunk + ((lane / 8) % 2);
          uint32_t rr[2];
          ldmatrix_x2(rr, sx + r * kBK + ((ch ^ (r % 8)) * 8));
          b[0][0] = rr[0]; b[0][1] = rr[1];
        } else {
#pragma unroll
          for (int u = 0; u < kBT / 16; ++u) {
            const int mi = lane / 8;
            const int r = u * 16 + (mi / 2) * 8 + lane % 8;
            const int ch = kchunk + (mi % 2);
            uint32_t rr[4];
            ldmatrix_x4(rr, sx + r * kBK + ((ch ^ (r % 8)) * 8));
            b[2 * u][0] = rr[0]; b[2 * u][1] = rr[1];
            b[2 * u + 1][0] = rr[2]; b[2 * u + 1][1] = rr[3];
          }
        }
        if constexpr (Cfg::kAccScale) {
          // raw pairs straight into per-window partial sums; zero/scale applied at the flush below
          constexpr bool kFirst = (f % Cfg::kFlushSteps) == 0;
          if constexpr (Family::kIsInt) {
            const uint32_t ones[4] = {kOnes2, kOnes2, kOnes2, kOnes2};
#pragma unroll
            for (int tg = 0; tg < kTG; ++tg) {
              if constexpr (kFirst) mma_16816_first<T>(xsum[tg], ones, b[tg]);
              else mma_16816<T>(xsum[tg], ones, b[tg]);
            }
          }
#pragma unroll
          for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
            uint32_t af[4];
            static_for<4>([&](auto r_) {
              constexpr int r = decltype(r_)::value;
              uint32_t raw = Family::template raw<4 * f + r>(words[tm]);
              if constexpr (!Family::kIsInt) raw = as_u32(mul2(as_t2<T2>(raw), pow2_pair<T, Family::kExpAdjust>()));
              af[r] = raw;
            });
#pragma unroll
            for (int tg = 0; tg < kTG; ++tg) {
              if constexpr (kFirst) mma_16816_first<T>(part[tm][tg], af, b[tg]);
              else mma_16816<T>(part[tm][tg], af, b[tg]);
            }
          }
          if constexpr ((f + 1) % Cfg::kFlushSteps == 0) {
            const int gi = Cfg::kGroupsPerStage <= 1 ? 0 : (a * 64 + f * 16) / Cfg::kGroup;
#pragma unroll
            for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
              const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
              float sc[2], zc[2], nz[2];
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                sc[h] = Cfg::kGroup != 0 ? to_float(ss[gi * kBN + row + 8 * h]) : 1.f;
                zc[h] = Cfg::kZeroMode == kIntZero ? to_float(sz[gi * kBN + row + 8 * h])
                      : Cfg::kZeroMode == kFloatZero ? (float)Family::kRawBias
                                                     : (float)(Family::kRawBias + Cfg::kOffset);
                nz[h] = Cfg::kZeroMode == kFloatZero ? to_float(sz[gi * kBN + row + 8 * h]) : 0.f;
              }
#pragma unroll
              for (int tg = 0; tg < kTG; ++tg)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                  const int h = v >> 1;
                  float t = part[tm][tg][v];
                  if constexpr (Family::kIsInt) t = fmaf(-zc[h], xsum[tg][v], t);
                  acc[tm][tg][v] = fmaf(sc[h], t, acc[tm][tg][v]);
                  if constexpr (Cfg::kZeroMode == kFloatZero) acc[tm][tg][v] = fmaf(nz[h], xsum[tg][v], acc[tm][tg][v]);
                }
            }
          }
        } else {
#pragma unroll
        for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
          // Per-row scale / zero pairs for rows g and g+8 of this tile.
          T2 s_pair[2], z_pair[2];
          if constexpr (Cfg::kGroup != 0) {
            const int gi = Cfg::kGroupsPerStage == 1 ? 0 : (a * 64 + f * 16) / Cfg::kGroup;
            const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              s_pair[h] = broadcast2<T2, T>(ss[gi * kBN + row + 8 * h]);
              if constexpr (Cfg::kZeroMode != kNoZero) z_pair[h] = broadcast2<T2, T>(sz[gi * kBN + row + 8 * h]);
            }
          }
          uint32_t af[4];
          static_for<4>([&](auto r_) {
            constexpr int r = decltype(r_)::value;
            // pair q = 4f + r (layout.cuh)
            T2 v = as_t2<T2>(Family::template raw<4 * f + r>(words[tm]));
            constexpr int h = r & 1;                  // row g (h = 0) or g + 8 (h = 1)
            if constexpr (Family::kIsInt) {
              if constexpr (Cfg::kZeroMode == kIntZero) {
                v = mul2(sub2(v, z_pair[h]), s_pair[h]);
              } else if constexpr (Cfg::kZeroMode == kFloatZero) {
                v = fma2(sub2(v, raw_bias), s_pair[h], z_pair[h]);
              } else {
                v = sub2(v, const_zero);
                if constexpr (Cfg::kGroup != 0) v = mul2(v, s_pair[h]);
              }
            } else {
              v = mul2(v, pow2_pair<T, Family::kExpAdjust>());
              if constexpr (Cfg::kGroup != 0) v = mul2(v, s_pair[h]);
            }
            af[r] = as_u32(v);
          });
#pragma unroll
          for (int tg = 0; tg < kTG; ++tg) mma_16816<T>(acc[tm][tg], af, b[tg]);
        }
        }
      });
    }
  };

  // ---------------------------------------------------------------------------------------- the pipeline
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < num_stages_total) load_stage(s, s);
    cp_async_commit();
  }
  for (int it = 0; it < num_stages_total; ++it) {
    cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();
    const int nxt = it + Cfg::kStages - 1;
    if (nxt < num_stages_total) load_stage(nxt, nxt % Cfg::kStages);
    cp_async_commit();
    compute_stage(it % Cfg::kStages);
  }
  cp_async_wait<0>();
  __syncthreads();

  // ---------------------------------------------------------------------------------------- intra-block K reduction
  if constexpr (Cfg::kWarpsK > 1) {
    float* red = reinterpret_cast<float*>(smem);
    constexpr int kPer = Cfg::kTilesM * kTG * 4;
    if (wk > 0) {
      float* dst = red + (((wk - 1) * Cfg::kWarpsN + wn) * 32 + lane) * kPer;
#pragma unroll
      for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < kTG; ++j)
#pragma unroll
          for (int v = 0; v < 4; ++v) dst[(i * kTG + j) * 4 + v] = acc[i][j][v];
    }
    __syncthreads();
    if (wk == 0) {
#pragma unroll 1
      for (int o = 1; o < Cfg::kWarpsK; ++o) {
        const float* src = red + (((o - 1) * Cfg::kWarpsN + wn) * 32 + lane) * kPer;
#pragma unroll
        for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
          for (int j = 0; j < kTG; ++j)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[i][j][v] += src[(i * kTG + j) * 4 + v];
      }
    }
  }

  auto epilogue_value = [&](float v, int n) -> float {
    if (chscale != nullptr) v *= chscale[n];
    if (tscale != nullptr) v *= tscale[0];
    if (bias != nullptr) v += to_float(bias[n]);
    return v;
  };

  if (gridDim.z == 1) {
    if (wk != 0) return;
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg) {
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int n = n0 + (wn * Cfg::kTilesM + tm) * 16 + g + 8 * (v >> 1);
          const int m = m0 + tg * 8 + 2 * t + (v & 1);
          if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(acc[tm][tg][v], n));
        }
      }
    }
    return;
  }

  // ---------------------------------------------------------------------------------------- split-K across blocks
  const size_t ws_rows = (size_t)gridDim.x * kBT;
  if (wk == 0) {
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm)
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int n = n0 + (wn * Cfg::kTilesM + tm) * 16 + g + 8 * (v >> 1);
          const int mr = m0 + tg * 8 + 2 * t + (v & 1);   // token row; padding rows are never read back
          if (n < N16 && mr < M) __stcg(ws + ((size_t)split * ws_rows + mr) * N16 + n, acc[tm][tg][v]);
        }
  }
  __threadfence();
  __syncthreads();
  __shared__ int is_last;
  const int ticket_id = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    const int prev = atomicAdd(tickets + ticket_id, 1);
    is_last = (prev == (int)gridDim.z - 1);
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  for (int i = threadIdx.x; i < kBT * kBN; i += kThreads) {
    const int mr = m0 + i / kBN;
    const int n = n0 + i % kBN;
    if (mr >= M || n >= N) continue;
    float sum = 0.f;
    for (int s = 0; s < (int)gridDim.z; ++s) sum += __ldcg(ws + ((size_t)s * ws_rows + mr) * N16 + n);
    y[(size_t)mr * N + n] = from_float<T>(epilogue_value(sum, n));
  }
  if (threadIdx.x == 0) tickets[ticket_id] = 0;
}

}  // namespace humming
