// humming/wna16_math.cuh -- the per-stage math of the WnA16 GEMMs, shared by every mainloop (gemm_wna16.cuh's
// cp.async ring, gemm_wna16_sm90.cuh's bulk-copy pipeline).
//
// A "stage" in shared memory is kAtomsK atom columns (64 K columns each) of the block's kBN weight rows, the matching
// kBT x kBK activation tile and the group scales / zero terms of the groups it touches.  Wna16Math holds one warp's
// accumulators and consumes one stage at a time; it never knows how the stage got into shared memory.  Where the
// activation tile lives is a policy (XTile): the cp.async ring stores XOR-swizzled rows, the bulk-copy pipeline
// padded rows (bulk copies cannot swizzle).
//
// Warp (wn, wk) owns kTilesM m16 tiles (16 weight rows each) and, in every stage, the atom columns wk, wk + kWarpsK,
// ...; it covers all kBT tokens.  MMA = m16n8k16 with W as A (rows = output channels) and x as B (columns = tokens):
// acc[tm][tg][v] is output channel (wn*kTilesM + tm)*16 + g + 8*(v>>1), token tg*8 + 2t + (v&1) of the block tile.
#pragma once

#include "humming/common.cuh"
#include "humming/copy.cuh"
#include "humming/dequant.cuh"
#include "humming/layout.cuh"
#include "humming/mma.cuh"
#include "humming/wgmma.cuh"

namespace humming {

enum ZeroMode : int { kNoZero = 0, kIntZero = 1, kFloatZero = 2 };

// The tensor-core instruction of a GemmConfig (an execution choice, like the tile shape).
enum MmaKind : int { kMmaSync = 0, kMmaWgmma = 1 };

template <class T_, class Family_, int kGroup_, int kZeroMode_, int kOffset_, int kBT_, int kWarpsN_, int kTilesM_,
          int kWarpsK_, int kAtomsK_, int kStages_, int kMma_ = kMmaSync>
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
  // kMmaWgmma (sm_90a): every k16 step of a stage is one wgmma.mma_async m64 x kBT x 16 per m16-tile index tm across
  // a warpgroup (warps wn = 4q .. 4q+3 supply its 64 rows), the activations read by the tensor cores straight from
  // the swizzled shared-memory tile -- no ldmatrix, and the tile is read once per 64 weight rows instead of once per
  // 16 (the mma.sync kernels are bound by that shared-memory traffic from 64 tokens up, NOTES.md).
  static constexpr bool kWgmma = kMma_ == kMmaWgmma;
  // wgmma with 128+ accumulators per thread (kTilesM * kBT >= 256: 256 weight rows x 128 tokens per block, or 128 x
  // 256): one MMA group per k16 step instead of one per atom, over two single-step fragment buffers (8 * kTilesM
  // registers instead of 32 * kTilesM) -- the atom-wide double buffer plus 128 accumulators outgrows the register
  // file, and ptxas then serializes every wgmma (its C7512 warning).  The dequant of step f overlaps the MMAs of
  // step f - 1 only.
  static constexpr bool kWgStepGroups = kWgmma && kTilesM * kBT >= 256;

  static constexpr int kMathWarps = kWarpsN * kWarpsK;
  static constexpr int kThreads = 32 * kMathWarps;     // the cp.async kernel: every warp loads and computes
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
  // FMAs per flush, so it pays while the token tile is small (kTG <= 2).  Every atom ends with a flush, so a stage
  // boundary is always a clean point (acc holds everything).
  // (Not under wgmma: a flush would have to wait for the asynchronous MMAs every window.)
  static constexpr bool kAccScale = !kWgmma && (kBT <= 16) && (Family::kIsInt || kGroup != 0);
  static constexpr int kFlushSteps = kGroup == 0 ? 4 : (kGroup >= 64 ? 4 : kGroup / 16);
  // Where an integer format's zero Z goes under accumulator-side scaling: subtracted from each raw pair before the
  // MMA (R - Z is exact: both are small integers in T), so the flush only applies the scale.  The alternative --
  // one extra MMA per token group and k16 step computing sum(x), then s * (sum x*R - Z * sum x) at the flush -- costs
  // fewer instructions but doubles the tensor-pipe work, and measured slower on the H200: 16-token tiles 1.41x ->
  // 1.55x cuBLAS at M=16, and at M=1 24.1 vs 25.3 us on 28672x4096 (NOTES.md, session 3).  Float zero points keep the
  // sum(x) route (their term is -zero * scale * sum(x)).
  static constexpr bool kZeroInOperand = kAccScale && Family::kIsInt && kZeroMode != kFloatZero;
  static constexpr bool kSumX = kAccScale && (Family::kIsInt || kZeroMode == kFloatZero) && !kZeroInOperand;

  static constexpr int kSmemW = kAtomsK * (kBN / 16) * kAtomWords * 4;
  static constexpr int kSmemS = kGroupsPerStage * kBN * 2;
  static constexpr int kSmemZ = kZeroMode == kNoZero ? 0 : kSmemS;
  // intra-block K reduction: warps wk > 0 park their accumulators here
  static constexpr int kSmemReduce = (kWarpsK - 1) * kWarpsN * 32 * kTilesM * kTokenGroups * 4 * 4;

  static_assert(kBT % 8 == 0 && (kBT == 8 || kBT % 16 == 0), "tokens per block: 8 or a multiple of 16");
  static_assert(kWgmma || kBT <= 128, "mma.sync kernels take at most 128 tokens per block");
  static_assert(!kWgmma || (kBT == 8 || kBT == 16 || kBT == 32 || kBT == 64 || kBT == 128 || kBT == 256),
                "wgmma token tiles: 8, 16, 32, 64, 128 or 256 (the n of m64nNk16; wgmma.cuh spells out these)");
  // (K-warpgroups, kWarpsK > 1: the direct wgmma decode calls atom() per atom column; the staged cp.async wgmma
  // kernel gives each warpgroup row one atom of every stage, kAtomsK == kWarpsK -- Wna16Math::stage)
  static_assert(!kWgmma || kWarpsN % 4 == 0, "wgmma: whole warpgroups along N");
  static_assert(!kWgmma || kAtomsK == 1 || kAtomsK == 2 || kAtomsK == 4,
                "wgmma: one, two or four 64-column atoms per stage (four: the bulk kernel with a TMA x tile only), "
                "the activation tile stored as one 128-byte-swizzled kBT x 64 sub-tile per atom (XTileAtomSwizzled)");
  static_assert(kAtomsK % kWarpsK == 0, "each K-warp takes the same number of atom columns per stage");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSmemW % 16 == 0 && kSmemS % 16 == 0, "16-byte aligned shared regions");
  static_assert(kGroup == 0 || kGroup % 16 == 0, "group sizes are multiples of 16 (one k16 step never straddles)");
  static_assert(kGroup == 0 || kGroup >= kBK || kBK % kGroup == 0, "groups tile the stage");
  static_assert(kZeroMode == kNoZero || kGroup != 0, "zero points come with group scales");
  static_assert(kFlushSteps == 1 || kFlushSteps == 2 || kFlushSteps == 4, "a flush window divides an atom");
};

// Activation tile policies: the address of 8-element chunk `chunk` (K columns 8*chunk .. 8*chunk+7 of the stage) of
// token row `row`.
template <int kBK> struct XTileSwizzled {
  // rows of kBK elements, chunk c of row r stored at chunk position c ^ (r % 8): the 8 rows an ldmatrix phase reads
  // hit 8 distinct 16-byte bank groups.
  static constexpr int kRowElems = kBK;
  template <class T> HUMMING_DEVICE static const T* at(const T* sx, int row, int chunk) {
    return sx + row * kBK + ((chunk ^ (row % 8)) * 8);
  }
};

// wgmma stages of two atoms (cp.async kernel): one kBT x 64 sub-tile per atom column, each swizzled like
// XTileSwizzled<64> -- the layout wgmma's 128-byte-swizzle descriptor reads (rows of exactly 128 bytes, 1 KB per 8
// rows); sub-tile a starts kBT * 128 bytes after sub-tile a - 1 (a multiple of 1 KB for every token tile).  With one
// atom per stage it is XTileSwizzled<64>.
template <int kBT> struct XTileAtomSwizzled {
  template <class T> HUMMING_DEVICE static const T* at(const T* sx, int row, int chunk) {
    return sx + (chunk / 8) * kBT * 64 + row * 64 + (((chunk % 8) ^ (row % 8)) * 8);
  }
};

template <int kBK> struct XTilePadded {
  // rows of kBK + 8 elements (a row is 2*kBK + 16 bytes = 4 banks more than a multiple of 128 bytes): the 8 rows of
  // an ldmatrix phase start 4 banks apart, so a 16-byte read per row is conflict-free without any swizzle.
  static constexpr int kRowElems = kBK + 8;
  template <class T> HUMMING_DEVICE static const T* at(const T* sx, int row, int chunk) {
    return sx + row * (kBK + 8) + chunk * 8;
  }
};

// One warp's accumulators of a block tile -- kTilesM m16 tiles x kTG n8 token groups, mma.m16n8k16's D layout --
// and what every mainloop does with them at the end: the intra-block K reduction and the walk over the outputs that
// the epilogues (splitk_epilogue, streamk_end_segment) take.  Wna16Math (shared-memory stages) and DirectMath
// (gemm_wna16_direct.cuh, weights from registers) derive from it.
template <class Cfg> struct WarpAccumulators {
  static constexpr int kTG = Cfg::kTokenGroups;
  float acc[Cfg::kTilesM][kTG][4];
  int wn, wk, lane, g;

  HUMMING_DEVICE WarpAccumulators(int wn_, int wk_, int lane_) : wn(wn_), wk(wk_), lane(lane_), g(lane_ / 4) {}

  HUMMING_DEVICE void clear() {
#pragma unroll
    for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kTG; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;
  }

  // Intra-block K reduction: warps wk > 0 park their accumulators in `red` (Cfg::kSmemReduce bytes), `sync` is a
  // barrier over every math warp, and warp wk == 0 adds them in wk order (deterministic).
  template <class Sync> HUMMING_DEVICE void reduce_k(float* red, Sync&& sync) {
    if constexpr (Cfg::kWarpsK > 1) {
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
      sync();
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
  }

  // Visit every accumulator of warp wk == 0 with its (tile-local token row, tile-local output channel).
  template <class F> HUMMING_DEVICE void for_each_output(F&& f) const {
    const int t = lane % 4;
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm)
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg)
#pragma unroll
        for (int v = 0; v < 4; ++v)
          f(tg * 8 + 2 * t + (v & 1), (wn * Cfg::kTilesM + tm) * 16 + g + 8 * (v >> 1), acc[tm][tg][v]);
  }
};

// One warp's share of the math.  Construct once per thread; call stage() per shared-memory stage; clear() starts a
// new output tile.  All arrays are indexed with compile-time constants only, so they live in registers.
template <class Cfg, class XTile> struct Wna16Math : WarpAccumulators<Cfg> {
  using Base = WarpAccumulators<Cfg>;
  using Base::acc;
  using Base::clear;
  using Base::g;
  using Base::lane;
  using Base::wk;
  using Base::wn;
  using T = typename Cfg::T;
  using T2 = typename Cfg::T2;
  using Family = typename Cfg::Family;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kBN = Cfg::kBN;
  static constexpr int kBT = Cfg::kBT;
  static constexpr int kTG = Cfg::kTokenGroups;
  static constexpr int kAtomWords = Cfg::kAtomWords;
  static constexpr uint32_t kOnes2 = ComputeTraits<T>::kIsBF16 ? 0x3F803F80u : 0x3C003C00u;   // {1.0, 1.0}

  // accumulator-side scaling state (kAccScale): per-window raw partial sums and per-token sums of x
  float part[Cfg::kAccScale ? Cfg::kTilesM : 1][Cfg::kAccScale ? kTG : 1][4];
  float xsum[Cfg::kAccScale ? kTG : 1][4];
  // wgmma: the dequantized A fragments of one atom, double-buffered -- an atom's MMAs read them asynchronously while
  // the next atom is being dequantized into the other buffer (kBuf of stage() / atom() alternates per stage)
  // (Cfg::kWgStepGroups: [2][1] -- the buffer of k16 step f is f % 2, whatever the stage)
  static constexpr int kWgBufs = Cfg::kWgmma ? 2 : 1;
  static constexpr int kWgBufSteps = Cfg::kWgStepGroups ? 1 : (Cfg::kWgmma ? 4 : 1);
  uint32_t wg_af[kWgBufs][kWgBufSteps][Cfg::kWgmma ? Cfg::kTilesM : 1][4];
  T2 const_zero;   // kRawBias + kOffset: the constant zero term of symmetric integer formats
  T2 raw_bias;     // kRawBias: float zero points subtract only the family's bias

  HUMMING_DEVICE Wna16Math(int wn_, int wk_, int lane_) : Base(wn_, wk_, lane_) {
    const_zero = pack2_from_float<T2>((float)(Family::kRawBias + Cfg::kOffset), (float)(Family::kRawBias + Cfg::kOffset));
    raw_bias = pack2_from_float<T2>((float)Family::kRawBias, (float)Family::kRawBias);
    clear();
  }

  // Index (within the stage) of the scale group holding k16 step f of atom column a.  Groups of 64+ columns hold
  // whole atoms, so the step drops out: an atom's scales are then loaded once even where `a` is a runtime value (the
  // staged wgmma K-warpgroups' atom wk + i * kWarpsK) -- with the step in the quotient ptxas reloaded them per step.
  HUMMING_DEVICE static int group_of(int a, int f) {
    if constexpr (Cfg::kGroupsPerStage <= 1) {
      return 0;
    } else if constexpr (Cfg::kGroup >= 64) {
      return (a * 64) / Cfg::kGroup;
    } else {
      return (a * 64 + f * 16) / Cfg::kGroup;
    }
  }

  // B fragments (activations) of all token groups for k16 step f of atom column a.
  HUMMING_DEVICE void load_b(uint32_t (&b)[kTG][2], const T* sx, int a, int f) const {
    const int kchunk = a * 8 + f * 2;          // 8-element chunk index of the step's first column
    if constexpr (kBT == 8) {
      const int r = lane % 8;
      uint32_t rr[2];
      ldmatrix_x2(rr, XTile::at(sx, r, kchunk + ((lane / 8) % 2)));
      b[0][0] = rr[0]; b[0][1] = rr[1];
    } else {
#pragma unroll
      for (int u = 0; u < kBT / 16; ++u) {
        const int mi = lane / 8;
        const int r = u * 16 + (mi / 2) * 8 + lane % 8;
        uint32_t rr[4];
        ldmatrix_x4(rr, XTile::at(sx, r, kchunk + (mi % 2)));
        b[2 * u][0] = rr[0]; b[2 * u][1] = rr[1];
        b[2 * u + 1][0] = rr[2]; b[2 * u + 1][1] = rr[3];
      }
    }
  }

  // Consume one stage: sw = its W atoms [kAtomsK][kBN/16][atom], sx = its activation tile, ss / sz = its group scales
  // / zero terms [kGroupsPerStage][kBN].  kBuf (wgmma only): which fragment buffer; consecutive stages alternate.
  template <int kBuf = 0>
  HUMMING_DEVICE void stage(const uint32_t* sw, const T* sx, const T* ss, const T* sz) {
#ifdef HUMMING_SKIP_MATH
    acc[0][0][0] += __uint_as_float(sw[lane]);   // experiments only: time the pipeline without the math
    return;
#endif
    // Staged wgmma K-warpgroups (session 56): warpgroup row wk takes atoms wk, wk + kWarpsK, ... of every stage, so
    // per warpgroup a stage is kAtomsK / kWarpsK atoms, consumed exactly as a stage of that many atoms without K-warps.
    static_assert(!Cfg::kWgmma || Cfg::kWarpsK == 1 || Cfg::kAtomsK / Cfg::kWarpsK <= 2,
                  "staged wgmma K-warpgroups: one or two atoms of each stage per warpgroup row");
    if constexpr (Cfg::kWgmma && Cfg::kAtomsK / Cfg::kWarpsK > 1) {
      // Two or four atoms per stage and warpgroup row: the row's atom i dequantizes into fragment buffer i % 2, which
      // the group two atoms back read (atom i - 2, or the previous stage's atom i + n - 2 of the row's n).  The
      // callers' stage-level wait leaves at most one group (the previous stage's last atom, buffer 1) running, so
      // atom 0 may start; every later atom first waits for all but the newest group (atom i - 1), i.e. for atom i - 2.
      static_for<Cfg::kAtomsK / Cfg::kWarpsK>([&](auto i_) {
        constexpr int i = decltype(i_)::value;
        if constexpr (i > 0) wait_mma<1>();
        const int a = Cfg::kWarpsK == 1 ? i : i * Cfg::kWarpsK + wk;   // atom column inside the stage
        uint32_t words[Cfg::kTilesM][kBits];
        load_words(words, sw, a);
        atom_wgmma<i % 2>(words, sx, ss, sz, a);
      });
    } else {
#pragma unroll 1
      for (int ai = 0; ai < Cfg::kAtomsK / Cfg::kWarpsK; ++ai) {
        const int a = ai * Cfg::kWarpsK + wk;        // atom column inside the stage
        uint32_t words[Cfg::kTilesM][kBits];
        load_words(words, sw, a);
        atom<kBuf>(words, sx, ss, sz, a);
      }
    }
  }

  // This lane's packed words of atom column `a` of the stage, for each of the warp's kTilesM atom rows.
  HUMMING_DEVICE void load_words(uint32_t (&words)[Cfg::kTilesM][kBits], const uint32_t* sw, int a) const {
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm)
      load_atom_words<kBits>(words[tm], sw + (a * (kBN / 16) + wn * Cfg::kTilesM + tm) * kAtomWords, lane);
  }

  // Consume one atom column `a` of the stage whose packed words this lane already holds (from shared memory above,
  // or straight from global memory in gemm_wna16_direct.cuh).
  template <int kBuf = 0>
  HUMMING_DEVICE void atom(const uint32_t (&words)[Cfg::kTilesM][kBits], const T* sx, const T* ss, const T* sz, int a) {
    if constexpr (Cfg::kWgmma) {
      atom_wgmma<kBuf>(words, sx, ss, sz, a);
      return;
    }
    static_for<4>([&](auto f_) {
      constexpr int f = decltype(f_)::value;
      uint32_t b[kTG][2];
      load_b(b, sx, a, f);
      if constexpr (Cfg::kAccScale) {
        step_acc_scaled<f>(words, b, ss, sz, a);
      } else {
        step_operand_scaled<f>(words, b, ss, sz, a);
      }
    });
  }

  // kAccScale: raw pairs straight into per-window partial sums; zero/scale applied at the window's flush.
  template <int f>
  HUMMING_DEVICE void step_acc_scaled(const uint32_t (&words)[Cfg::kTilesM][kBits], const uint32_t (&b)[kTG][2],
                                      const T* ss, const T* sz, int a) {
    constexpr bool kFirst = (f % Cfg::kFlushSteps) == 0;
    if constexpr (Cfg::kSumX) {
      const uint32_t ones[4] = {kOnes2, kOnes2, kOnes2, kOnes2};
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg) {
        if constexpr (kFirst) mma_16816_first<T>(xsum[tg], ones, b[tg]);
        else mma_16816<T>(xsum[tg], ones, b[tg]);
      }
    }
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
      // kZeroInOperand: the zero pairs of rows g and g + 8 (constant for symmetric formats, per group otherwise)
      T2 zp[2] = {const_zero, const_zero};
      if constexpr (Cfg::kZeroInOperand && Cfg::kZeroMode == kIntZero) {
        const int gi = group_of(a, f);
        const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
        zp[0] = broadcast2<T2, T>(sz[gi * kBN + row]);
        zp[1] = broadcast2<T2, T>(sz[gi * kBN + row + 8]);
      }
      uint32_t af[4];
      static_for<4>([&](auto r_) {
        constexpr int r = decltype(r_)::value;
        uint32_t raw = Family::template raw<4 * f + r>(words[tm]);
        if constexpr (!Family::kIsInt) raw = as_u32(mul2(as_t2<T2>(raw), pow2_pair<T, Family::kExpAdjust>()));
        // row g + 8*(r&1); a constant zero of 0 (int8 in bf16: kRawBias = -128 = -offset) costs nothing
        if constexpr (Cfg::kZeroInOperand && (Cfg::kZeroMode == kIntZero || Family::kRawBias + Cfg::kOffset != 0))
          raw = as_u32(sub2(as_t2<T2>(raw), zp[r & 1]));
        af[r] = raw;
      });
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg) {
        if constexpr (kFirst) mma_16816_first<T>(part[tm][tg], af, b[tg]);
        else mma_16816<T>(part[tm][tg], af, b[tg]);
      }
    }
    if constexpr ((f + 1) % Cfg::kFlushSteps == 0) {
      const int gi = group_of(a, f);
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
        const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
        float sc[2], zc[2], nz[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          sc[h] = Cfg::kGroup != 0 ? to_float(ss[gi * kBN + row + 8 * h]) * Family::kGroupScaleToValue : 1.f;
          zc[h] = Cfg::kZeroInOperand ? 0.f
                : Cfg::kZeroMode == kIntZero ? to_float(sz[gi * kBN + row + 8 * h])
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
            if constexpr (Family::kIsInt && !Cfg::kZeroInOperand) t = fmaf(-zc[h], xsum[tg][v], t);
            acc[tm][tg][v] = fmaf(sc[h], t, acc[tm][tg][v]);
            if constexpr (Cfg::kZeroMode == kFloatZero) acc[tm][tg][v] = fmaf(nz[h], xsum[tg][v], acc[tm][tg][v]);
          }
      }
    }
  }

  // Operand-side dequant of k16 step f of tile tm: each pair to its final 16-bit value (zero, scale applied).
  template <int f>
  HUMMING_DEVICE void dequant_operand(uint32_t (&af)[4], const uint32_t (&words)[kBits], const T* ss, const T* sz,
                                      int a, int tm) const {
    // Per-row scale / zero pairs for rows g and g+8 of this tile.
    T2 s_pair[2], z_pair[2];
    if constexpr (Cfg::kGroup != 0) {
      const int gi = group_of(a, f);
      const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        s_pair[h] = broadcast2<T2, T>(ss[gi * kBN + row + 8 * h]);
        if constexpr (Cfg::kZeroMode != kNoZero) z_pair[h] = broadcast2<T2, T>(sz[gi * kBN + row + 8 * h]);
      }
    }
    static_for<4>([&](auto r_) {
      constexpr int r = decltype(r_)::value;
      // pair q = 4f + r (layout.cuh)
      T2 v = as_t2<T2>(Family::template raw<4 * f + r>(words));
      constexpr int h = r & 1;                  // row g (h = 0) or g + 8 (h = 1)
      if constexpr (Family::kIsInt) {
        if constexpr (Cfg::kZeroMode == kIntZero) {
          v = mul2(sub2(v, z_pair[h]), s_pair[h]);
        } else if constexpr (Cfg::kZeroMode == kFloatZero) {
          v = fma2(sub2(v, raw_bias), s_pair[h], z_pair[h]);
        } else {
          if constexpr (Family::kRawBias + Cfg::kOffset != 0) v = sub2(v, const_zero);
          if constexpr (Cfg::kGroup != 0) v = mul2(v, s_pair[h]);
        }
      } else if constexpr (Cfg::kGroup != 0) {
        v = mul2(v, s_pair[h]);                                  // S' carries 2^kExpAdjust (dequant.cuh)
      } else {
        v = mul2(v, pow2_pair<T, Family::kExpAdjust>());
      }
      af[r] = as_u32(v);
    });
  }

  // Operand-side scaling (wider token tiles): each pair is dequantized to its final 16-bit value before the MMA, so
  // the one fragment feeds kTG MMAs.
  template <int f>
  HUMMING_DEVICE void step_operand_scaled(const uint32_t (&words)[Cfg::kTilesM][kBits], const uint32_t (&b)[kTG][2],
                                          const T* ss, const T* sz, int a) {
#pragma unroll
    for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
      uint32_t af[4];
      dequant_operand<f>(af, words[tm], ss, sz, a, tm);
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg) mma_16816<T>(acc[tm][tg], af, b[tg]);
    }
  }

  // wgmma (sm_90a): dequantize the whole atom (4 k16 steps x kTilesM tiles), then issue its 4 * kTilesM asynchronous
  // MMAs with the activations read from the stage's tile by descriptor, and commit them as one group.  The caller
  // waits (wait_mma) before the stage's slot is refilled, before buffer kBuf is dequantized into again (the MMAs read
  // their A registers asynchronously: overwriting them earlier is undefined, and ptxas does not guard it) and before
  // the accumulators are read.
  //
  // Cfg::kWgStepGroups: one group per k16 step instead.  Before step f is dequantized into buffer f % 2, the group
  // that last read that buffer (step f - 2, or step f + 2 of the previous atom) is waited for -- wgmma_wait<1> leaves
  // only the newest group, step f - 1, running.  So at most the atom's last step is in flight when this returns, and
  // the callers' stage-level waits (wait_mma<1>: "the previous stage is done") hold a fortiori.
  template <int kBuf>
  HUMMING_DEVICE void atom_wgmma(const uint32_t (&words)[Cfg::kTilesM][kBits], const T* sx, const T* ss, const T* sz,
                                 int a) {
    if constexpr (Cfg::kWgStepGroups) {
      const uint64_t desc0 = wgmma_desc_sw128(Cfg::kAtomsK > 1 ? sx + a * kBT * 64 : sx);   // this atom's kBT x 64 sub-tile
      static_for<4>([&](auto f_) {
        constexpr int f = decltype(f_)::value;
        auto& af = wg_af[f % 2][0];
        wgmma_wait<1>();
        fence_accumulators();
#pragma unroll
        for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
#ifdef HUMMING_DEBUG_WG_SKIP_DEQUANT   // experiments only: the raw words as the operand (wrong results)
#pragma unroll
          for (int i = 0; i < 4; ++i) af[tm][i] = words[tm][(f * 4 + i) % kBits];
#else
          dequant_operand<f>(af[tm], words[tm], ss, sz, a, tm);
#endif
        }
        wgmma_fence();
#pragma unroll
        for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
#ifdef HUMMING_DEBUG_WG_SKIP_MMA   // experiments only: no tensor-core work (wrong results)
          acc[tm][0][0] += __uint_as_float(af[tm][0] ^ af[tm][1] ^ af[tm][2] ^ af[tm][3] ^ static_cast<uint32_t>(desc0));
#else
          Wgmma<T, kBT>::mma(reinterpret_cast<float(&)[kBT / 2]>(acc[tm]), af[tm], desc0 + 2 * f);
#endif
        }
        wgmma_commit();
        fence_accumulators();
      });
      return;
    }
    auto& af = wg_af[kBuf];
    static_for<4>([&](auto f_) {
      constexpr int f = decltype(f_)::value;
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
#ifdef HUMMING_DEBUG_WG_SKIP_DEQUANT   // experiments only: the raw words as the operand (wrong results)
#pragma unroll
        for (int i = 0; i < 4; ++i) af[f][tm][i] = words[tm][(f * 4 + i) % kBits];
#else
        dequant_operand<f>(af[f][tm], words[tm], ss, sz, a, tm);
#endif
      }
    });
    const uint64_t desc = wgmma_desc_sw128(Cfg::kAtomsK > 1 ? sx + a * kBT * 64 : sx);   // this atom's kBT x 64 sub-tile
    fence_accumulators();
    wgmma_fence();
#pragma unroll
    for (int f = 0; f < 4; ++f)
#pragma unroll
      for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
#ifdef HUMMING_DEBUG_WG_SKIP_MMA   // experiments only: no tensor-core work (wrong results)
        acc[tm][0][0] += __uint_as_float(af[f][tm][0] ^ af[f][tm][1] ^ af[f][tm][2] ^ af[f][tm][3] ^
                                         static_cast<uint32_t>(desc));
#else
        Wgmma<T, kBT>::mma(reinterpret_cast<float(&)[kBT / 2]>(acc[tm]), af[f][tm], desc + 2 * f);
#endif
      }
    wgmma_commit();
    fence_accumulators();
  }

  // No code motion of accumulator accesses across this point (wgmma: around the asynchronous window).
  HUMMING_DEVICE void fence_accumulators() {
    if constexpr (Cfg::kWgmma) {
#pragma unroll
      for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < kTG; ++j)
#pragma unroll
          for (int v = 0; v < 4; ++v) fence_operand(acc[i][j][v]);
    }
  }

  // wgmma: at most kPending of this thread's committed MMA groups (one per atom) are still running; kPending == 0:
  // every one has completed, the accumulators are final and every stage tile is free.
  template <int kPending> HUMMING_DEVICE void wait_mma() {
    if constexpr (Cfg::kWgmma) {
      wgmma_wait<kPending>();
      if constexpr (kPending == 0) fence_accumulators();
    }
  }
};

// The epilogue's per-element math: fp32 channel / tensor scales, then bias.
template <class T>
HUMMING_DEVICE float epilogue_value(float v, int n, const float* chscale, const float* tscale, const T* bias) {
  if (chscale != nullptr) v *= chscale[n];
  if (tscale != nullptr) v *= tscale[0];
  if (bias != nullptr) v += to_float(bias[n]);
  return v;
}

}  // namespace humming
