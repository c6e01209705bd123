// humming/gemm_wna16_direct.cuh -- the WnA16 decode GEMM (M <= 16): packed weights stream from global memory
// straight into registers; shared memory holds only what the block's warps share.
//
// Why: a weight word is used by exactly one warp (layout.cuh gives each lane of a warp the words of its own A
// fragments, and one warp reads an atom -- 16 rows x 64 columns -- with one coalesced 16-byte load per lane at int4),
// so staging W in shared memory buys nothing but a barrier per stage -- the top stall of the cp.async decode kernel
// under ncu (NOTES.md, sessions 3 and 7).  Here the main loop has NO block barrier: each warp keeps kStages atoms of
// its own weights in flight in a register ring and never waits for another warp.
//
// Work decomposition
//   grid  = (token tiles, weight-row tiles, K splits); split z covers atom columns [z * P, min(K64/64, (z + 1) * P))
//           of the "range", P = atoms_per_split (a launch parameter; the host keeps it a multiple of the unit below).
//   block = kWarpsN x kWarpsK warps.  Warp (wn, wk) owns kTilesM atom rows (16 weight rows each) and, of the block's
//           range, the UNITS wk, wk + kWarpsK, ... -- a unit is kUnitAtoms consecutive atom columns, one scale window
//           (below) -- so K-warps interleave at unit granularity and stream neighbouring columns at the same time.
//   MMA   = m16n8k16 with W as A (rows = output channels) and x as B (columns = tokens), as everywhere.
// Phases
//   1. every warp issues the loads of its first kStages atoms (before griddepcontrol.wait: weights are never written
//      by an earlier kernel), the block copies the range's group scales / zero terms to shared memory;
//   2. after griddepcontrol.wait the block stages its activation rows of the range in shared memory; where windows
//      need sums of x (below) one pass loads x from global memory, sums it per window and stores the tile (x16: as
//      fp16), otherwise a plain copy; one barrier;
//   3. the barrier-free main loop: per atom, consume the oldest ring slot, refill it kStages atoms ahead, dequantize
//      the raw pairs and issue the MMAs; at the end of each window fold its zero and scale into the accumulators;
//   4. the K-warps' accumulators are summed in shared memory and the split-K epilogue of gemm_wna16.cuh runs
//      (deterministic ticket reduction across splits).
//
// Accumulator-side dequantization.  The MMAs consume the RAW pairs of dequant.cuh (int: R = kRawBias + code, exact in
// T; float: the code's value, exponent adjusted) and the zero / scale of window w are applied to the fp32 partial sums
// part_w at the window's end:
//     sum_k x_k (R_k - Z) s  =  s (part_w - Z xs_w),     part_w = sum_{k in w} x_k R_k,   xs_w = sum_{k in w} x_k
// xs_w depends only on the activations, so the block computes it once for every window of its range (phase 2) instead
// of every warp subtracting Z from every weight pair (one HSUB2 per pair: a third of the int4 dequant's instructions)
// or running an extra all-ones MMA per k16 step.  A window is the scale group (or one atom, 64 columns, when there is no
// group but an integer zero to fold); formats with neither (int8 in bf16, floats with channel scales) accumulate directly.
// Rounding: R and x are exact in T, their products exact in fp32; Z xs_w cancels the 128 (bf16) or 1024 (fp16) of the
// magic number, costing ~5 (~10) bits of the fp32 partial -- far below the 16-bit output's precision.
//
// Activation rows past M: a block with r < kBT valid tokens stores only those r rows; the ldmatrix row addresses of
// tokens r..kBT-1 repeat row r-1 (clamped), so their MMA columns hold copies that the epilogue never writes (every
// output element is its own dot product: a column never leaks into another).
#pragma once

#include "humming/gemm_wna16.cuh"

namespace humming {

// 4-bit integer codes decoded with a magic number (IntFamily::kMagic); false for float families, which have no kMagic.
template <class F, bool = F::kIsInt> struct MagicInt4 { static constexpr bool value = false; };
template <class F> struct MagicInt4<F, true> { static constexpr bool value = F::kBits == 4 && F::kMagic; };

// Compile-time facts of a format on this kernel (DirectPlan) -- what the host mirrors in
// vllm_humming/tuning/heuristics.py (direct_unit_atoms / KernelChoice.direct_smem_bytes).
template <class Cfg> struct DirectPlan {
  using Family = typename Cfg::Family;
  // bf16 activations on fp16 MMAs (HUMMING_BF16_AS_FP16: defined by the instantiation of an x16 choice -- the layer
  // launches one at 1-2 tokens, KernelChoice.x16 / heuristics.x16_sibling -- or for every kernel by
  // HUMMING_DEBUG_DEFINES in experiments; a no-op for formats it does not cover): the mma.sync kernel
  // runs 4-bit integer codes with bf16 activations as fp16 -- each window's x values of one token scaled by a power
  // of two 2^sh chosen from that window's own max |x| (the window's lanes share it by shuffles: no cross-warp pass),
  // exact because bf16's 8 significant bits fit fp16's 11 once the window's max sits in [2^14, 2^15) -- so the
  // decode can use raw_row16 (one shift per word instead of three); the fold multiplies the window's partial sums by
  // 2^-sh.  FamilyC / TC: the family and type of the MMA operands (Family / T elsewhere).
#ifdef HUMMING_BF16_AS_FP16
  static constexpr bool kX16 = !Cfg::kWgmma && MagicInt4<Family>::value && ComputeTraits<typename Cfg::T>::kIsBF16;
#else
  static constexpr bool kX16 = false;
#endif
  using TC = conditional_t<kX16, __half, typename Cfg::T>;
  using FamilyC = conditional_t<kX16, IntFamily<__half, 4>, Family>;
  // int families: w = (R - Z) * s with Z = kRawBias + offset (+ zero): the constant part, 0 for int8 in bf16
  static constexpr int kConstZero = FamilyC::kIsInt ? FamilyC::kRawBias + Cfg::kOffset : 0;
  // the stored integer zero terms hold Family's bias (ops/gemm.py); the MMA operands carry FamilyC's
  static constexpr int kZeroTermShift = FamilyC::kIsInt ? FamilyC::kRawBias - Family::kRawBias : 0;
  static constexpr bool kXSum = Family::kIsInt && (Cfg::kZeroMode != kNoZero || kConstZero != 0);
  static constexpr bool kWindows = Cfg::kGroup != 0 || kXSum;   // partial sums flushed per window
  static constexpr int kWindow = Cfg::kGroup != 0 ? Cfg::kGroup : 64;    // columns per window (no group: one atom)
  static_assert(!kX16 || kXSum, "fp16 staging scales x per window in the window sums pass");
  // wgmma dequantizes in the operand (Wna16Math::atom_wgmma: no windows), so its unit is one atom
  static constexpr int kUnitAtoms = (!Cfg::kWgmma && kWindows && kWindow > 64) ? kWindow / 64 : 1;
  static constexpr int kWindowSteps = kWindow >= 64 ? 4 : kWindow / 16;  // k16 steps per window inside one atom
  // 4-bit integer codes on fp16 MMAs (fp16 activations, or bf16 staged as fp16: kX16) decode with raw_row16
  // (dequant.cuh: rows g + 8 read kRawBias + 16 * code, one shift per word instead of three) and the fold divides
  // those rows by 16.  Measured on the H200 (NOTES.md, session 23): fp16 int4 g128 at M=1 28672x4096 19.3 vs 20.6 us,
  // 4096x14336 11.5 vs 12.0; HUMMING_DEBUG_DEFINES=HUMMING_NO_FP16_ROW16 turns it off for fp16 (A/B runs).
#ifdef HUMMING_NO_FP16_ROW16
  static constexpr bool kRow16 = kX16;
#else
  static constexpr bool kRow16 = kX16 || (!Cfg::kWgmma && MagicInt4<Family>::value &&
                                          !ComputeTraits<typename Cfg::T>::kIsBF16 && kWindows);
#endif
  // (The wgmma kernel dequantizes in the operand: zero and scale applied per pair before the MMA.  Two
  // accumulator-side variants -- raw pairs into per-window fp32 partials, scale folded per window (session 22), and
  // integer zeros folded through the window sums of x too (session 41) -- issued fewer instructions and measured
  // slower on every int4 cell they served (more registers, fewer blocks per SM, fewer K splits), and were removed in
  // session 42; NOTES.md.)
  static_assert(kWindow % 16 == 0 && (kWindow & (kWindow - 1)) == 0 && kWindow <= 256,
                "direct kernel: windows are 16..256 columns, a power of two (the host refuses other groups)");
  static_assert(Cfg::kWgmma || Cfg::kBT == 8 || Cfg::kBT == 16, "direct mma.sync kernel: token tiles of 8 or 16");
  static_assert(!Cfg::kWgmma || (Cfg::kWarpsN % 4 == 0 && Cfg::kBT % 8 == 0),
                "direct wgmma kernel: whole warpgroups along N (K-warpgroups: any kWarpsK)");
  // the main loop is unrolled by lcm(ring depth, unit): every ring slot and window position is a constant
  static constexpr int kBody = Cfg::kStages % kUnitAtoms == 0 ? Cfg::kStages
                             : (Cfg::kStages * kUnitAtoms) / (Cfg::kStages % 2 == 0 ? 2 : 1);
  static_assert(kBody % Cfg::kStages == 0 && kBody % kUnitAtoms == 0, "unit atoms are 1, 2 or 4");
};

// Smem prefetch of the weights (EXPERIMENT, HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_SMEM_PREFETCH=B): each warp copies
// the first positions of its atom sequence (DirectWeightStream) into shared memory with cp.async BEFORE
// griddepcontrol.wait -- up to B bytes per block, whole units --, and the main loop reads them from there before the
// register ring takes over.  The point: a grid small enough that the next PDL launch's blocks are resident beside it
// (at most half of an SM's registers / shared memory) streams its weights while this grid does its math, so the
// weight stream of consecutive GEMMs does not stop at every kernel boundary.  Positions past the sequence load zeros.
// With HUMMING_DIRECT_SMEM_RING as well, the region is a warp-private ring of kMaxPos positions for the WHOLE
// sequence: each consumed slot is refilled (cp.async, one commit group per position) with the position kMaxPos ahead,
// so every byte goes through shared memory and kMaxPos positions stay in flight per warp; the register ring is unused.
// The direct wgmma kernel takes the prefetch (an even number of positions: DirectWgmmaSmem) but not the ring.
template <class Cfg> struct DirectPrefetch {
#ifdef HUMMING_DIRECT_SMEM_PREFETCH
  static constexpr int kBudget = HUMMING_DIRECT_SMEM_PREFETCH;
#else
  static constexpr int kBudget = 0;
#endif
#ifdef HUMMING_DIRECT_SMEM_RING
  static constexpr bool kRing = kBudget > 0;
#else
  static constexpr bool kRing = false;
#endif
  static constexpr bool kOn = kBudget > 0;
  static constexpr int kU = DirectPlan<Cfg>::kUnitAtoms;
  // bytes of one sequence position (kTilesM atoms) of every warp of the block
  static constexpr int kPerPos = Cfg::kWarpsN * Cfg::kWarpsK * Cfg::kTilesM * Cfg::kAtomWords * 4;
  static constexpr int kMaxPos = kBudget / kPerPos / kU * kU;
  static_assert(!kRing || kMaxPos >= kU, "HUMMING_DIRECT_SMEM_RING: the budget holds less than one unit per warp");
  // positions staged per warp for a K range of atoms_per_split atoms (the ring: always its depth)
  HUMMING_DEVICE static int positions(int atoms_per_split) {
    if constexpr (!kOn) {
      (void)atoms_per_split;
      return 0;
    } else if constexpr (kRing) {
      return kMaxPos;
    } else {
      const int seq_max = ceil_div(ceil_div(atoms_per_split, kU), Cfg::kWarpsK) * kU;
      return min(seq_max, kMaxPos);
    }
  }
};

// Shared-memory plan, per launch (the range and the stored rows are launch parameters):
//   [x rows: rows x (range + 8) T][group scales: groups x kBN T][zero terms: same][window sums: windows x kBT fp32]
//   [K-warp reduction scratch]
// The +8 pads each x row by 16 bytes, so the 8 rows an ldmatrix phase reads start in 8 distinct 16-byte bank groups.
// Must equal KernelChoice.direct_smem_bytes (vllm_humming/tuning/heuristics.py).
template <class Cfg> struct DirectSmem {
  using Plan = DirectPlan<Cfg>;
  int ld, off_s, off_z, off_xs, off_xinv, off_red, windows;
  HUMMING_DEVICE DirectSmem(int range_cols, int rows) {
    ld = range_cols + 8;
    const int groups = Cfg::kGroup != 0 ? range_cols / Cfg::kGroup : 0;
    windows = ceil_div(range_cols, Plan::kWindow);
    off_s = rows * ld * 2;
    off_z = off_s + groups * Cfg::kBN * 2;
    off_xs = off_z + (Cfg::kZeroMode != kNoZero ? groups * Cfg::kBN * 2 : 0);
    off_xinv = off_xs + windows * Cfg::kBT * 4;
    // the windows' x scales 2^-sh [windows][kBT] (read only when Plan::kX16; reserved always, a few hundred bytes,
    // so that the host's mirror -- KernelChoice.direct_smem_bytes -- needs no format)
    off_red = off_xinv + windows * Cfg::kBT * 4;
    // the K-warps' reduction scratch (WarpAccumulators::reduce_k), then the weight prefetch region
    // (DirectPrefetch: [warp][position][tile][kAtomWords] words, 16-byte aligned)
    off_pf = (off_red + (Cfg::kWarpsK - 1) * Cfg::kWarpsN * 32 * Cfg::kTilesM * Cfg::kTokenGroups * 16 + 15) & ~15;
    pf = DirectPrefetch<Cfg>::positions(range_cols / 64);
    bytes = off_pf + pf * DirectPrefetch<Cfg>::kPerPos;
  }
  int off_pf, pf, bytes;
};

// Fold the raw partial sums `part` of window / group `wi` (index in the block's range) into acc:
//     acc += s * (part - Z * xs) [+ zterm * xs]          (DirectPlan: Z = kConstZero or the group's integer zero)
template <class Cfg, class T>
HUMMING_DEVICE void fold_window(float (&acc)[Cfg::kTilesM][Cfg::kTokenGroups][4],
                                const float (&part)[Cfg::kTilesM][Cfg::kTokenGroups][4], int wi, int wn, int g, int t,
                                const T* ss, const T* sz, const float* xs, const float* xinv) {
  using Plan = DirectPlan<Cfg>;
  using Family = typename Cfg::Family;
  constexpr int kTG = Cfg::kTokenGroups;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBT = Cfg::kBT;
  constexpr bool kXs = Plan::kXSum;
  float2 xv[kTG], iv[kTG];
  if constexpr (kXs) {
#pragma unroll
    for (int tg = 0; tg < kTG; ++tg) {
      xv[tg] = *reinterpret_cast<const float2*>(xs + wi * kBT + tg * 8 + 2 * t);
      // kX16: part and xs are in units of the window's scaled x (x * 2^sh per token); iv = 2^-sh
      if constexpr (Plan::kX16) iv[tg] = *reinterpret_cast<const float2*>(xinv + wi * kBT + tg * 8 + 2 * t);
    }
  }
#pragma unroll
  for (int tm = 0; tm < Cfg::kTilesM; ++tm) {
    const int row = (wn * Cfg::kTilesM + tm) * 16 + g;
    float sc[2], zc[2], nz[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      sc[h] = Cfg::kGroup != 0 ? to_float(ss[wi * kBN + row + 8 * h]) * Family::kGroupScaleToValue : 1.f;
      zc[h] = !kXs ? 0.f
            : Cfg::kZeroMode == kIntZero ? to_float(sz[wi * kBN + row + 8 * h])
            : Cfg::kZeroMode == kFloatZero ? (float)Plan::FamilyC::kRawBias
                                           : (float)Plan::kConstZero;
      nz[h] = Cfg::kZeroMode == kFloatZero ? to_float(sz[wi * kBN + row + 8 * h]) : 0.f;
      if constexpr (kXs && Cfg::kZeroMode == kIntZero && Plan::kZeroTermShift != 0)
        zc[h] += (float)Plan::kZeroTermShift;
    }
    if constexpr (Plan::kRow16) {
      // rows g + 8 summed x * (B + 16 code), B = kRawBias: sum x (code - z) = (part - (16 Z - 15 B) xs) / 16 with
      // Z = B + z (exact: small integers, a power-of-two scale)
      zc[1] = 16.f * zc[1] - 15.f * (float)Plan::FamilyC::kRawBias;
      sc[1] *= 0.0625f;
    }
#pragma unroll
    for (int tg = 0; tg < kTG; ++tg)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int h = v >> 1;
        float p = part[tm][tg][v];
        if constexpr (kXs) p = fmaf(-zc[h], (v & 1) ? xv[tg].y : xv[tg].x, p);
        if constexpr (Plan::kX16) p *= (v & 1) ? iv[tg].y : iv[tg].x;
        acc[tm][tg][v] = (Cfg::kGroup != 0 || Plan::kRow16) ? fmaf(sc[h], p, acc[tm][tg][v]) : acc[tm][tg][v] + p;
        if constexpr (Cfg::kZeroMode == kFloatZero) {
          float xw = (v & 1) ? xv[tg].y : xv[tg].x;
          if constexpr (Plan::kX16) xw *= (v & 1) ? iv[tg].y : iv[tg].x;
          acc[tm][tg][v] = fmaf(nz[h], xw, acc[tm][tg][v]);
        }
      }
  }
}

// One warp's math: accumulators (WarpAccumulators), the per-window raw partial sums, and where its operands live in
// shared memory.
template <class Cfg> struct DirectMath : WarpAccumulators<Cfg> {
  using Base = WarpAccumulators<Cfg>;
  using Base::acc;
  using Base::g;
  using Base::lane;
  using Base::wn;
  using T = typename Cfg::T;
  using T2 = typename Cfg::T2;
  using Family = typename Cfg::Family;
  using Plan = DirectPlan<Cfg>;
  static constexpr int kTG = Cfg::kTokenGroups;
  static constexpr int kTilesM = Cfg::kTilesM;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kBN = Cfg::kBN;
  static constexpr int kBT = Cfg::kBT;
  static constexpr int kU = Plan::kUnitAtoms;

  float part[Plan::kWindows ? kTilesM : 1][Plan::kWindows ? kTG : 1][4];
  const T* xrow;       // this lane's ldmatrix row address at the range's first column
  const T* ss;         // group scales [groups][kBN]
  const T* sz;         // zero terms   [groups][kBN]
  const float* xs;     // window sums  [windows][kBT]
  const float* xinv;   // Plan::kX16: the windows' 2^-sh [windows][kBT]

  HUMMING_DEVICE DirectMath(int wn_, int wk_, int lane_, const uint8_t* smem, const DirectSmem<Cfg>& L, int rows)
      : Base(wn_, wk_, lane_) {
    // ldmatrix.x4: lane l supplies the row address of row l % 8 of matrix l / 8 (copy.cuh)
    //   kBT = 8 : matrices = the 4 chunks (8 columns each) of two k16 steps, all of token rows 0..7
    //   kBT = 16: matrices = (tokens 0-7, chunk 2f), (0-7, 2f+1), (8-15, 2f), (8-15, 2f+1) of step f
    const int token = kBT == 8 ? lane % 8 : (lane / 16) * 8 + lane % 8;
    const int chunk = kBT == 8 ? lane / 8 : (lane / 8) % 2;
    xrow = reinterpret_cast<const T*>(smem) + min(token, rows - 1) * L.ld + chunk * 8;
    ss = reinterpret_cast<const T*>(smem + L.off_s);
    sz = reinterpret_cast<const T*>(smem + L.off_z);
    xs = reinterpret_cast<const float*>(smem + L.off_xs);
    xinv = reinterpret_cast<const float*>(smem + L.off_xinv);
    this->clear();
  }

  // B fragments (activations) of the 4 k16 steps of atom column `al` of the range.
  HUMMING_DEVICE void load_b(uint32_t (&b)[4][kTG][2], int al) const {
    const T* p = xrow + al * 64;
    uint32_t rr[4];
    if constexpr (kBT == 8) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        ldmatrix_x4(rr, p + 32 * h);
        b[2 * h][0][0] = rr[0]; b[2 * h][0][1] = rr[1];
        b[2 * h + 1][0][0] = rr[2]; b[2 * h + 1][0][1] = rr[3];
      }
    } else {
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        ldmatrix_x4(rr, p + 16 * f);
        b[f][0][0] = rr[0]; b[f][0][1] = rr[1];
        b[f][1][0] = rr[2]; b[f][1][1] = rr[3];
      }
    }
  }

  // Fold window / group `wi` (index in the range) into acc: acc += s * (part - Z * xs) [+ zterm * xs].
  HUMMING_DEVICE void flush(int wi) { fold_window<Cfg>(acc, part, wi, wn, g, lane % 4, ss, sz, xs, xinv); }

  // Consume atom column `al` of the range, whose packed words this lane holds; kPos = the atom's position in its
  // unit (window ends are compile-time).
  template <int kPos> HUMMING_DEVICE void atom(const uint32_t (&words)[kTilesM][kBits], int al) {
#ifdef HUMMING_SKIP_MATH
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm)
#pragma unroll
      for (int i = 0; i < kBits; ++i) acc[0][0][0] += __uint_as_float(words[tm][i] & 0x007fffffu);   // experiments only
    return;
#endif
    uint32_t b[4][kTG][2];
    load_b(b, al);
    static_for<4>([&](auto f_) {
      constexpr int f = decltype(f_)::value;
      constexpr bool kFirst = Plan::kWindow >= 64 ? (kPos == 0 && f == 0) : (f % Plan::kWindowSteps == 0);
      constexpr bool kLast = Plan::kWindow >= 64 ? (kPos == kU - 1 && f == 3) : ((f + 1) % Plan::kWindowSteps == 0);
#pragma unroll
      for (int tm = 0; tm < kTilesM; ++tm) {
        uint32_t af[4];
        static_for<4>([&](auto r_) {
          constexpr int r = decltype(r_)::value;
          uint32_t raw;   // pair q = 4f + r (layout.cuh)
          if constexpr (Plan::kRow16) raw = raw_row16<typename Plan::FamilyC, 4 * f + r>(words[tm]);
          else raw = Family::template raw<4 * f + r>(words[tm]);
          if constexpr (!Family::kIsInt) raw = as_u32(mul2(as_t2<T2>(raw), pow2_pair<T, Family::kExpAdjust>()));
          af[r] = raw;
        });
#pragma unroll
        for (int tg = 0; tg < kTG; ++tg) {
          using TC = typename Plan::TC;   // T, or fp16 for bf16 staged as fp16 (Plan::kX16)
          if constexpr (!Plan::kWindows) mma_16816<TC>(acc[tm][tg], af, b[f][tg]);
          else if constexpr (kFirst) mma_16816_first<TC>(part[tm][tg], af, b[f][tg]);
          else mma_16816<TC>(part[tm][tg], af, b[f][tg]);
        }
      }
      if constexpr (Plan::kWindows && kLast)
        flush(Plan::kWindow >= 64 ? al / kU : al * (64 / Plan::kWindow) + f / Plan::kWindowSteps);
    });
  }
};

// One warp's walk over its atom sequence, for the loads: position i of the sequence is atom column
//     al(i) = (wk + (i / kU) * kWarpsK) * kU + i % kU
// of the block's range (its units wk, wk + kWarpsK, ...), and the warp's kTilesM atom rows of that column are
// consecutive in memory (layout.cuh), so one pointer serves every tile (tile tm at tm * kAtomWords words).  Positions
// past the sequence, atoms past the split's end (the last split) and rows past N load zeros.
template <class Cfg> struct DirectWeightStream {
  static constexpr int kTilesM = Cfg::kTilesM;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kAtomWords = Cfg::kAtomWords;
  static constexpr int kU = DirectPlan<Cfg>::kUnitAtoms;
  const uint32_t* ptr;      // position i's atom, tile 0
  size_t col_stride;        // words between atom columns
  int i, al, n_seq, al_end, lane;
  bool row_ok[kTilesM];

  HUMMING_DEVICE DirectWeightStream(const uint32_t* w, int ka0, int ka1, int n_seq_, int wk, int atom_row0,
                                    int n_atoms, int lane_)
      : col_stride((size_t)n_atoms * kAtomWords), i(0), al(wk * kU), n_seq(n_seq_), al_end(ka1 - ka0), lane(lane_) {
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm) row_ok[tm] = atom_row0 + tm < n_atoms;
    ptr = w + ((size_t)ka0 + al) * col_stride + (size_t)min(atom_row0, n_atoms - 1) * kAtomWords;
  }

  // Hand the oldest ring slot's words to the math (cur) and refill that slot with the next position: with a ring of
  // kDepth slots, kDepth atoms stay in flight.  kPos: the refilled position's place in its unit.
  template <int kPos>
  HUMMING_DEVICE void take_and_refill(uint32_t (&cur)[kTilesM][kBits], uint32_t (&slot)[kTilesM][kBits]) {
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm)
#pragma unroll
      for (int j = 0; j < kBits; ++j) cur[tm][j] = slot[tm][j];
    load_next<kPos>(slot);
  }

  // Load position i into dst and step to i + 1; kPos = i % kU (a compile-time constant at every call site).
  template <int kPos> HUMMING_DEVICE void load_next(uint32_t (&dst)[kTilesM][kBits]) {
    const bool ok = i < n_seq && al < al_end;
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm) {
      if (ok && row_ok[tm]) {
        load_atom_words<kBits, true>(dst[tm], ptr + tm * kAtomWords, lane);
      } else {
#pragma unroll
        for (int j = 0; j < kBits; ++j) dst[tm][j] = 0u;
      }
    }
    advance<kPos>();
  }

  // Copy position i's kTilesM atoms, as laid out in global memory, to shared memory at dst (kTilesM x kAtomWords
  // words; 16-byte cp.async pieces spread over the lanes, zero-filled where load_next would load zeros) and step to
  // i + 1.  The caller commits; a lane later reads its words back with load_atom_words (after the group's wait and a
  // barrier: the pieces were copied by other lanes).
  // The shared-memory ring (DirectPrefetch::kRing; the mma.sync decode kernel): hand slot `at`'s words to
  // the math (cur) and refill it with the position kDepth ahead.  One commit group per position, so the slot's group
  // is retired by wait<kDepth - 1>; the warp syncs before reading (its pieces were copied by other lanes) and before
  // overwriting (every lane has read it).
  template <int kPos, int kDepth>
  HUMMING_DEVICE void take_from_smem_ring(uint32_t (&cur)[kTilesM][kBits], uint32_t* at, const uint32_t* safe_src) {
    cp_async_wait<kDepth - 1>();
    __syncwarp();
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm) load_atom_words<kBits>(cur[tm], at + tm * kAtomWords, lane);
    __syncwarp();
    copy_next_async<kPos>(at, safe_src);   // zeros past the sequence
    cp_async_commit();
  }

  template <int kPos> HUMMING_DEVICE void copy_next_async(uint32_t* dst, const uint32_t* safe_src) {
    const bool ok = i < n_seq && al < al_end;
#pragma unroll
    for (int tm = 0; tm < kTilesM; ++tm) {
      const bool valid = ok && row_ok[tm];
#pragma unroll
      for (int c = 0; c < ceil_div(kAtomWords / 4, 32); ++c) {
        const int piece = lane + 32 * c;
        if (piece < kAtomWords / 4)
          copy16_async(dst + tm * kAtomWords + 4 * piece, valid ? ptr + tm * kAtomWords + 4 * piece : safe_src, valid);
      }
    }
    advance<kPos>();
  }

 private:
  template <int kPos> HUMMING_DEVICE void advance() {
    // the next atom of the unit, or the first atom of this warp's next unit
    constexpr int kStep = kPos == kU - 1 ? 1 + (Cfg::kWarpsK - 1) * kU : 1;
    ++i;
    al += kStep;
    ptr += kStep * col_stride;
  }
};

// Where a block of the (token tiles, weight-row tiles, K splits) grid works: its first token m0, first weight row n0
// (atom row n_atom0), and its K range -- atom columns [ka0, ka1) of a range of atoms_per_split (the last split may be
// shorter: its tail loads zeros).
struct DirectBlock {
  int m0, n_atom0, n0, n_atoms, ka0, ka1, range_cols;
  bool release_early;   // kFlagPdlEarlyRelease (see gemm_wna16.cuh)
  int reducers;         // the split-K reducers (reducers_from_flags, gemm_wna16.cuh)
  bool poll;            // kFlagSplitkPoll: the polled split-K end (wgmma kernels; splitk_poll_end, gemm_wna16.cuh)
  template <class Cfg> HUMMING_DEVICE static DirectBlock make(int N16, int K64, int atoms_per_split, int flags) {
    DirectBlock b;
    b.m0 = blockIdx.x * Cfg::kBT;
    b.n_atom0 = blockIdx.y * (Cfg::kBN / 16);
    b.n0 = b.n_atom0 * 16;
    b.n_atoms = N16 / 16;
    b.ka0 = blockIdx.z * atoms_per_split;
    b.ka1 = min(K64 / 64, b.ka0 + atoms_per_split);
    b.range_cols = atoms_per_split * 64;
    b.release_early = (flags & kFlagPdlEarlyRelease) != 0;
    b.reducers = reducers_from_flags(flags);
    b.poll = splitk_poll_from_flags(flags);
    return b;
  }
};

// The range's group scales / zero terms -> shared memory [groups][kBN] (cp.async; the caller commits and waits).
template <class Cfg>
__device__ __forceinline__ void direct_copy_scales(typename Cfg::T* ss, typename Cfg::T* sz,
                                                   const typename Cfg::T* __restrict__ gscale,
                                                   const typename Cfg::T* __restrict__ gzero, int ka0, int range_cols,
                                                   int n0, int N16, int K64) {
  if constexpr (Cfg::kGroup != 0) {
    constexpr int kChunksPerGroup = Cfg::kBN / 8;
    const int groups = range_cols / Cfg::kGroup;
    const int grp0 = ka0 * 64 / Cfg::kGroup;
    const int num_groups = ceil_div(K64, Cfg::kGroup);
    for (int c = threadIdx.x; c < groups * kChunksPerGroup; c += Cfg::kThreads) {
      const int gi = c / kChunksPerGroup;
      const int ch = c % kChunksPerGroup;
      const bool valid = (grp0 + gi < num_groups) && (n0 + ch * 8 < N16);
      const size_t off = (size_t)(grp0 + gi) * N16 + n0 + ch * 8;
      copy16_async(ss + gi * Cfg::kBN + ch * 8, valid ? gscale + off : gscale, valid);
      if constexpr (Cfg::kZeroMode != kNoZero)
        copy16_async(sz + gi * Cfg::kBN + ch * 8, valid ? gzero + off : gzero, valid);
    }
  }
}

// sm_90a, 9+ tokens: the same weight stream with wgmma math (Wna16Math::atom_wgmma: each k16 step one
// wgmma.mma_async m64 x kBT x 16 per warpgroup, the dequantized weights -- zero and scale applied in the operand --
// as the register A operand, the activations read by the tensor cores from shared memory through a descriptor).
// Shared memory (DirectWgmmaSmem, 1 KB aligned): the range's x as one 128-byte-swizzled kBT x 64 tile per atom
// column (rows past M zero-filled: the descriptor reads all kBT rows), then the group scales / zero terms; after the
// main loop the x region holds the fp32 output tile of the epilogue (splitk_epilogue's wgmma path).  No K-warps: a
// warp covers the whole range, its atoms one after another, one atom's MMAs in flight over the next atom's dequant
// (fragment buffers alternate per atom).
// With a prefetch budget (DirectPrefetch, KernelChoice.pf: "_pf<KB>") each warp's first positions of its atom
// sequence -- an even number of them, so the fragment buffers' parity carries over into the register-ring loop --
// are copied to shared memory before griddepcontrol.wait, after the larger of the x + scale region and the
// epilogue's fp32 tile: [warp][position][tile][kAtomWords] words.  A grid of at most one block per SM (the planner's
// rule for these choices) then leaves room for the next PDL launch's block, which copies its own weights while this
// one computes (the one-token decode's idea, session 35, at 9+ tokens).
// (Session 39's weight ring in shared memory for this kernel, "_pfr<KB>", measured slower than the register ring and
// was removed in session 41; the mma.sync kernel keeps its own.)
// K-warpgroups (kWarpsK > 1, session 55): warpgroup row wk of the block takes the range's atom columns wk, wk +
// kWarpsK, ... (DirectWeightStream's interleave with one-atom units), all of them reading the one x tile; at the end
// the warps wk > 0 park their accumulators after the epilogue's fp32 tile (off_red, WarpAccumulators::reduce_k) and
// the warps wk == 0 add them in wk order -- a block then covers a tile's whole K without the cross-block split-K sum.
template <class Cfg> struct DirectWgmmaSmem {
  using Pf = DirectPrefetch<Cfg>;
  static_assert(!Pf::kRing, "direct wgmma kernel: no shared-memory weight ring (removed in session 41), only the prefetch");
  static_assert(!Pf::kOn || Cfg::kWarpsK == 1, "direct wgmma kernel: the weight prefetch runs without K-warpgroups");
  // the K-warpgroups' reduction scratch: kWarpsK - 1 copies of every math warp's accumulators
  // (enumerators, not static constexpr members: those NVRTC emits as .global words in every direct wgmma kernel)
  enum : int {
    kRedBytes = (Cfg::kWarpsK - 1) * Cfg::kWarpsN * 32 * Cfg::kTilesM * Cfg::kTokenGroups * 16,
    kOffRed = (Cfg::kBT * (Cfg::kBN + 4) * 4 + 15) & ~15,   // after the epilogue's fp32 tile
  };
  int x_atoms, off_s, off_z, off_pf, pf;
  HUMMING_DEVICE DirectWgmmaSmem(int range_cols) {
    const int groups = Cfg::kGroup != 0 ? range_cols / Cfg::kGroup : 0;
    x_atoms = range_cols / 64;
    off_s = x_atoms * 64 * Cfg::kBT * 2;
    off_z = off_s + groups * Cfg::kBN * 2;
    const int used = max(off_z + (Cfg::kZeroMode != kNoZero ? groups * Cfg::kBN * 2 : 0),
                         Cfg::kWarpsK > 1 ? kOffRed + kRedBytes : Cfg::kBT * (Cfg::kBN + 4) * 4);
    off_pf = (used + 15) & ~15;
    pf = Pf::positions(x_atoms);   // (warps_k = 1, one-atom units: min(range atoms, budget positions))
  }
};

template <class Cfg, int kCluster>
__device__ __forceinline__ void gemm_wna16_direct_wgmma(const typename Cfg::T* __restrict__ x,
                                                        const uint32_t* __restrict__ w,
                                                        const typename Cfg::T* __restrict__ gscale,
                                                        const typename Cfg::T* __restrict__ gzero,
                                                        const float* __restrict__ chscale,
                                                        const float* __restrict__ tscale,
                                                        const typename Cfg::T* __restrict__ bias,
                                                        typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                        int* __restrict__ tickets, int M, int N, int K, int N16,
                                                        int K64, int atoms_per_split, int flags) {
#if defined(__CUDA_ARCH__) && !HUMMING_HAS_WGMMA
  static_assert(!Cfg::kWgmma, "wgmma kernels compile for sm_90a only (wgmma.cuh)");
#endif
  using T = typename Cfg::T;
  using Plan = DirectPlan<Cfg>;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBN = Cfg::kBN;
  constexpr int kBT = Cfg::kBT;
  constexpr int kDepth = Cfg::kStages;
  constexpr int kTilesM = Cfg::kTilesM;
  constexpr int kThreads = Cfg::kThreads;
  // fragment buffers alternate per atom and ring slots repeat every kDepth atoms: unroll by lcm(kDepth, 2)
  constexpr int kBody = kDepth % 2 == 0 ? kDepth : 2 * kDepth;

  HUMMING_DYNAMIC_SMEM(uint8_t, smem_raw);
  uint8_t* smem = smem_raw;   // the swizzled x tiles start on a 1 KB boundary (the host adds 1 KB of slack)
  {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
    smem += ((base + 1023u) & ~1023u) - base;
  }
  const int tid = threadIdx.x;
  const int lane = tid % 32;
  // whole warpgroups along N (kWarpsN % 4 == 0); the K-warpgroup row wk takes atom columns wk, wk + kWarpsK, ...
  // (a compile-time 0 without K-warpgroups: the kernels of kWarpsK == 1 stay what they were)
  const int wn = Cfg::kWarpsK == 1 ? tid / 32 : (tid / 32) % Cfg::kWarpsN;
  const int wk = Cfg::kWarpsK == 1 ? 0 : (tid / 32) / Cfg::kWarpsN;
  const DirectBlock blk = DirectBlock::make<Cfg>(N16, K64, atoms_per_split, flags);
  const int m0 = blk.m0, n_atom0 = blk.n_atom0, n0 = blk.n0, n_atoms = blk.n_atoms, ka0 = blk.ka0, ka1 = blk.ka1;
  const int range_cols = blk.range_cols;
  const bool release_early = blk.release_early;
  const DirectWgmmaSmem<Cfg> L(range_cols);
  T* sx = reinterpret_cast<T*>(smem);
  T* ss = reinterpret_cast<T*>(smem + L.off_s);
  T* sz = reinterpret_cast<T*>(smem + L.off_z);

  // ---- 1: (with a prefetch budget) the first pf_n atoms of this warp's rows into shared memory, then the next
  //         kDepth atoms into the register ring, the range's scales (weights: before the grid wait)
  // this warp's positions: the range's atom columns wk, wk + kWarpsK, ... below ka1 (warpgroup-uniform: the wgmma
  // loop below must be)
  const int n_seq = max(0, ceil_div(ka1 - ka0 - wk, Cfg::kWarpsK));
  DirectWeightStream<Cfg> stream(w, ka0, ka1, n_seq, wk, n_atom0 + wn * kTilesM, n_atoms, lane);
  constexpr int kPosWords = kTilesM * Cfg::kAtomWords;
  const int pf_n = DirectPrefetch<Cfg>::kOn ? min(L.pf, n_seq) & ~1 : 0;   // even: see DirectWgmmaSmem
  const uint32_t* spf = reinterpret_cast<const uint32_t*>(smem + L.off_pf) + wn * L.pf * kPosWords;
  if constexpr (DirectPrefetch<Cfg>::kOn) {
    // (committed with the x copy below, whose wait<0> and barrier also cover these: other lanes copy a lane's words
    // where an atom's bytes per lane are not 16)
#pragma unroll 1
    for (int p = 0; p < pf_n; ++p) stream.template copy_next_async<0>(const_cast<uint32_t*>(spf) + p * kPosWords, w);
  }
  uint32_t ring[kDepth][kTilesM][kBits];
  static_for<kDepth>([&](auto d_) { stream.template load_next<0>(ring[decltype(d_)::value]); });
  direct_copy_scales<Cfg>(ss, sz, gscale, gzero, ka0, range_cols, n0, N16, K64);
  // ---- 2: x after the grid dependency wait, swizzled per atom column; rows past M and columns past K / the split
  //         zero-filled
  grid_dependency_wait();
  if (release_early) grid_dependents_launch();
  {
    const int chunks = L.x_atoms * kBT * 8;
    for (int c = tid; c < chunks; c += kThreads) {
      const int a = c / (kBT * 8);
      const int r = (c / 8) % kBT;
      const int ch = c % 8;
      const int col = (ka0 + a) * 64 + ch * 8;
      const bool valid = m0 + r < M && col < K && ka0 + a < ka1;
      copy16_async(sx + a * kBT * 64 + r * 64 + ((ch ^ (r % 8)) * 8), valid ? x + (size_t)(m0 + r) * K + col : x,
                   valid);
    }
    cp_async_commit();
    cp_async_wait<0>();
    fence_proxy_async_shared();   // the tensor cores read x through the async proxy (wgmma.cuh)
    __syncthreads();
  }
  // ---- 3: barrier-free main loop.  Whole bodies run unconditionally: a per-atom branch inside the asynchronous
  //         window makes ptxas serialize every wgmma (C7513); the < kBody tail atoms follow, one branch each.
  Wna16Math<Cfg, XTileSwizzled<64>> math(wn, wk, lane);
  int i0 = 0;
  if constexpr (DirectPrefetch<Cfg>::kOn) {
    // the prefetched positions, two per iteration (the fragment buffers' parity); the ring holds positions pf_n on
#pragma unroll 1
    for (; i0 < pf_n; i0 += 2)
      static_for<2>([&](auto d_) {
        constexpr int d = decltype(d_)::value;
        uint32_t cur[kTilesM][kBits];
#pragma unroll
        for (int tm = 0; tm < kTilesM; ++tm)
          load_atom_words<kBits>(cur[tm], spf + (i0 + d) * kPosWords + tm * Cfg::kAtomWords, lane);
        const int al = i0 + d;
        const int grp = Cfg::kGroup != 0 ? al * 64 / Cfg::kGroup : 0;
        math.template wait_mma<1>();
        math.template atom<d>(cur, sx + al * kBT * 64, ss + grp * kBN, sz + grp * kBN, 0);
      });
  }
  auto step = [&](auto d_) {
    constexpr int d = decltype(d_)::value;
    uint32_t cur[kTilesM][kBits];
    stream.template take_and_refill<0>(cur, ring[d % kDepth]);
    const int al = wk + (i0 + d) * Cfg::kWarpsK;   // the position's atom column in the range
    const int grp = Cfg::kGroup != 0 ? al * 64 / Cfg::kGroup : 0;
    math.template wait_mma<1>();   // the MMAs that read fragment buffer d % 2 (two atoms ago) are done
    math.template atom<d % 2>(cur, sx + al * kBT * 64, ss + grp * kBN, sz + grp * kBN, 0);
  };
  // (the register ring's slots repeat every kDepth positions, the fragment buffers every 2)
#pragma unroll 1
  for (; i0 + kBody <= n_seq; i0 += kBody) static_for<kBody>(step);
  static_for<kBody - 1>([&](auto d_) {
    if (i0 + decltype(d_)::value < n_seq) step(d_);
  });
  math.template wait_mma<0>();
  if (!release_early) grid_dependents_launch();
  if constexpr (Cfg::kWarpsK > 1) {
    static_assert(kCluster == 0, "direct wgmma kernel: K-warpgroups end through splitk_epilogue, not a cluster");
    __syncthreads();   // every warpgroup's MMAs have read x: the region past the fp32 tile becomes the scratch
    math.reduce_k(reinterpret_cast<float*>(smem + DirectWgmmaSmem<Cfg>::kOffRed), [] { __syncthreads(); });
  }
  if constexpr (kCluster != 0) {
    // (its first barrier: every warpgroup's MMAs have read x, the region becomes the fp32 tile)
    cluster_splitk_epilogue<Cfg, kCluster>(math, y, chscale, tscale, bias, M, N, m0, n0, reinterpret_cast<float*>(smem));
  } else {
    __syncthreads();   // every warpgroup's MMAs have read x: the region becomes the epilogue's fp32 tile
    splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n0, reinterpret_cast<float*>(smem),
                         blk.reducers, 0, 0, blk.poll);
  }
}

// The x16 staging scale of a window (DirectPlan::kX16) from the bit pattern of its max |x| in bf16: 2^sh with
// sh = 14 - E, E the max's binary exponent (bits above bf16's 7 mantissa bits), so the window's values land below 2^15;
// clamped to fp32's normal exponents.  scale = 2^sh, inv = 2^-sh.
__device__ __forceinline__ void x16_window_scale(uint32_t max_bits, float& scale, float& inv) {
  const int sh = max(-126, min(126, 14 - ((int)(max_bits >> 7) - 127)));
  scale = __uint_as_float((uint32_t)(sh + 127) << 23);
  inv = __uint_as_float((uint32_t)(127 - sh) << 23);
}

// Phase 2's pass over x: the window sums xs[window][row] of the zero fold (DirectPlan::kXSum) and, for bf16 staged as
// fp16 (DirectPlan::kX16), each (row, window)'s power-of-two scale, the fp16 rewrite of x in place and xinv.
//
// A thread handles 8-column chunks: item (row r, pass c) is chunk (c * kThreads + tid) of row r, and a warp's 32
// lanes hold 32 consecutive chunks of one row, so a window's kWindow / 8 chunks sit in consecutive lanes and a
// butterfly of shuffles reduces them in a fixed order -- deterministic.  The pass is on every block's critical path
// after griddepcontrol.wait (nothing else runs until its barrier), and it is latency-bound: a lane's items are
// processed kR at a time with every load, shuffle and store of the kR items independent, so their chains overlap (a
// thread makes ceil(items / kR) rounds instead of one per item: at 8 tokens on a 384-thread block and 4096 columns,
// 4 rounds of 4 instead of 11 single items), and the max and the sum of a window reduce in the same butterfly rounds.
//
// x16 staging: the max |x| of the window's bf16 values (non-negative bf16 bit patterns order like unsigned integers)
// gives E, its binary exponent, and the scale 2^sh = 2^(14 - E), so the window's values land below 2^15 (fp16 holds
// 65504) and are exact in fp16 down to its smallest normal, 2^-14 (bf16 has 8 significant bits, fp16 11).  The window
// sum is that of the bf16 values in fp32, times 2^sh (exact: a power of two) -- the sum of the fp16 values the MMAs
// read wherever none of them is below 2^-14 after scaling, i.e. below 2^-28 of the window's max (those few lose bits in
// fp16, an error far below the fp32 sums' own rounding).  The fold multiplies by xinv = 2^-sh.  Inf / NaN stay Inf /
// NaN.  (A window of values above ~2^120 could overflow the fp32 sum: such activations overflow the bf16 output anyway.)
// Where the pass reads x.  kFromGlobal (the default): straight from global memory -- row m0 + r, columns col0 + 8 c of
// the block's range, zeros from col_end on (K's tail, the last split's missing atoms) -- and the pass writes the
// chunk to the x tile itself (fp16 for x16, as read otherwise): phase 2 has no separate copy of x (no round trip
// global -> shared -> registers) and one barrier fewer on every block's critical path.  Otherwise (HUMMING_DIRECT_XPASS_FROM_SMEM, the A/B of it) the
// block has copied x to shared memory first and the pass reads the tile there.
template <class T> struct DirectXSource {
  const T* x;
  int K, m0, col0, col_end;
};

template <class Cfg, int kR, bool kFromGlobal>
__device__ __forceinline__ void direct_window_pass_items(uint8_t* smem, const DirectSmem<Cfg>& L, int rows, int item0,
                                                         int n_items, int tid, int lane,
                                                         const DirectXSource<typename Cfg::T>& src) {
  using T = typename Cfg::T;
  using T2 = typename Cfg::T2;
  using Plan = DirectPlan<Cfg>;
  constexpr int kChunksPerWindow = Plan::kWindow / 8;
  constexpr int kBT = Cfg::kBT;
  T* sx = reinterpret_cast<T*>(smem);
  float* xs = reinterpret_cast<float*>(smem + L.off_xs);
  float* xinv = reinterpret_cast<float*>(smem + L.off_xinv);
  const int chunks_per_row = (L.ld - 8) / 8;
  int row[kR], ch[kR];
  bool ok[kR];
  uint32_t u[kR][4];
#pragma unroll
  for (int j = 0; j < kR; ++j) {
    const int it = item0 + j;
    row[j] = it % rows;
    ch[j] = (it / rows) * Cfg::kThreads + tid;
    // warp-uniform except at the row's last chunks: whole windows either way (range_cols is a multiple of kWindow)
    ok[j] = it < n_items && ch[j] < chunks_per_row;
    uint4 q = make_uint4(0u, 0u, 0u, 0u);
    if constexpr (kFromGlobal) {
      const int col = src.col0 + ch[j] * 8;
      if (ok[j] && col < src.col_end) q = ldg16_cg(src.x + (size_t)(src.m0 + row[j]) * src.K + col);
    } else {
      if (ok[j]) q = *reinterpret_cast<const uint4*>(sx + row[j] * L.ld + ch[j] * 8);
    }
    u[j][0] = q.x; u[j][1] = q.y; u[j][2] = q.z; u[j][3] = q.w;
  }
  float v[kR];
  uint32_t mx[kR];
#pragma unroll
  for (int j = 0; j < kR; ++j) {
    v[j] = 0.f;
    mx[j] = 0u;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const T2 p2 = as_t2<T2>(u[j][e]);
      v[j] += to_float(p2.x) + to_float(p2.y);
      if constexpr (Plan::kX16) mx[j] = __vmaxu2(mx[j], u[j][e] & 0x7FFF7FFFu);
    }
    if constexpr (Plan::kX16) mx[j] = max(mx[j] & 0xFFFFu, mx[j] >> 16);
  }
#pragma unroll
  for (int o = 1; o < kChunksPerWindow; o <<= 1)
#pragma unroll
    for (int j = 0; j < kR; ++j) {
      v[j] += __shfl_xor_sync(0xffffffffu, v[j], o);
      if constexpr (Plan::kX16) mx[j] = max(mx[j], __shfl_xor_sync(0xffffffffu, mx[j], o));
    }
#pragma unroll
  for (int j = 0; j < kR; ++j) {
    float inv = 1.f;
    if constexpr (Plan::kX16) {
      float scale;
      x16_window_scale(mx[j], scale, inv);
      v[j] *= scale;
      if (ok[j]) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const T2 p2 = as_t2<T2>(u[j][e]);
          u[j][e] = as_u32(__floats2half2_rn(to_float(p2.x) * scale, to_float(p2.y) * scale));
        }
        *reinterpret_cast<uint4*>(sx + row[j] * L.ld + ch[j] * 8) = make_uint4(u[j][0], u[j][1], u[j][2], u[j][3]);
      }
    } else if constexpr (kFromGlobal) {
      if (ok[j]) *reinterpret_cast<uint4*>(sx + row[j] * L.ld + ch[j] * 8) = make_uint4(u[j][0], u[j][1], u[j][2], u[j][3]);
    }
    if (ok[j] && ch[j] % kChunksPerWindow == 0) {
      xs[(ch[j] / kChunksPerWindow) * kBT + row[j]] = v[j];
      if constexpr (Plan::kX16) xinv[(ch[j] / kChunksPerWindow) * kBT + row[j]] = inv;
    }
  }
}

template <class Cfg, bool kFromGlobal>
__device__ __forceinline__ void direct_window_pass(uint8_t* smem, const DirectSmem<Cfg>& L, int rows, int tid,
                                                   int lane, const DirectXSource<typename Cfg::T>& src) {
  constexpr int kBT = Cfg::kBT;
  // items per round: 4, but 2 in the prefetch kernels (DirectPrefetch), which must stay within half an SM's
  // registers (<= 80 a thread at 384 threads) -- four items there took 99 (ptxas, sm_90a)
#ifdef HUMMING_XPASS_ITEMS
  constexpr int kPassItems = HUMMING_XPASS_ITEMS;   // experiments: A/B of the round size
#else
  constexpr int kPassItems = DirectPrefetch<Cfg>::kOn ? 2 : 4;
#endif
  static_assert(DirectPlan<Cfg>::kWindow / 8 <= 32, "a window's chunks fit one warp");
  const int chunks_per_row = (L.ld - 8) / 8;
  // this warp's passes over the row (chunks c * kThreads + warp base .. + 31 that start inside it): warp-uniform
  const int passes = ceil_div(max(0, chunks_per_row - (tid - lane)), Cfg::kThreads);
  const int n_items = passes * rows;
  if (n_items == 1) {
    direct_window_pass_items<Cfg, 1, kFromGlobal>(smem, L, rows, 0, n_items, tid, lane, src);
  } else if (n_items == 2) {
    direct_window_pass_items<Cfg, 2, kFromGlobal>(smem, L, rows, 0, n_items, tid, lane, src);
  } else {
#pragma unroll 1
    for (int i0 = 0; i0 < n_items; i0 += kPassItems)
      direct_window_pass_items<Cfg, kPassItems, kFromGlobal>(smem, L, rows, i0, n_items, tid, lane, src);
  }
  // token slots past the valid rows read as 0
  float* xs = reinterpret_cast<float*>(smem + L.off_xs);
  float* xinv = reinterpret_cast<float*>(smem + L.off_xinv);
  for (int i = tid; i < L.windows * (kBT - rows); i += Cfg::kThreads) {
    xs[(i / (kBT - rows)) * kBT + rows + i % (kBT - rows)] = 0.f;
    if constexpr (DirectPlan<Cfg>::kX16) xinv[(i / (kBT - rows)) * kBT + rows + i % (kBT - rows)] = 0.f;
  }
  // Reading x from global memory, the pass makes no cp.async of its own, but phase 1 does: the range's group scales /
  // zero terms (direct_copy_scales, issued but not yet committed to a group) and the weight prefetch (DirectPrefetch,
  // committed).  The x copy's commit + cp_async_wait<0> is what retired them otherwise; here the same pair makes them
  // land before the barrier, for every thread to read after it (wait_group retires committed groups only: a wait
  // without the commit would leave the scales in flight).  Issued before griddepcontrol.wait, they have almost always
  // landed by now -- without this the main loop read stale scales whenever they had not: session 38's GPU suites
  // under load, and the CPU emulation, which lands a cp.async only at the wait that retires its group.
  if constexpr (kFromGlobal) {
    cp_async_commit();
    cp_async_wait<0>();
  }
  __syncthreads();
}

// kCluster = 0: K splits reduced through the global workspace + tickets (splitk_epilogue); 2..8: launched as clusters
// of that many blocks along z, the splits reduced through distributed shared memory (cluster_splitk_epilogue).
template <class Cfg, int kCluster = 0>
__device__ __forceinline__ void gemm_wna16_direct(const typename Cfg::T* __restrict__ x,
                                                  const uint32_t* __restrict__ w,
                                                  const typename Cfg::T* __restrict__ gscale,
                                                  const typename Cfg::T* __restrict__ gzero,
                                                  const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                  const typename Cfg::T* __restrict__ bias,
                                                  typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                  int* __restrict__ tickets, int M, int N, int K, int N16, int K64,
                                                  int atoms_per_split, int flags) {
  if constexpr (Cfg::kWgmma) {
    gemm_wna16_direct_wgmma<Cfg, kCluster>(x, w, gscale, gzero, chscale, tscale, bias, y, ws, tickets, M, N, K, N16, K64,
                                 atoms_per_split, flags);
    return;
  }
  using T = typename Cfg::T;
  using Plan = DirectPlan<Cfg>;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBT = Cfg::kBT;
  constexpr int kDepth = Cfg::kStages;   // atoms in flight per warp (register ring)
  constexpr int kTilesM = Cfg::kTilesM;
  constexpr int kU = Plan::kUnitAtoms;
  constexpr int kThreads = Cfg::kThreads;

  HUMMING_DYNAMIC_SMEM(uint8_t, smem);

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int wn = warp % Cfg::kWarpsN;
  const int wk = warp / Cfg::kWarpsN;
  const DirectBlock blk = DirectBlock::make<Cfg>(N16, K64, atoms_per_split, flags);
  const int m0 = blk.m0, n_atom0 = blk.n_atom0, n0 = blk.n0, n_atoms = blk.n_atoms, ka0 = blk.ka0, ka1 = blk.ka1;
  const int range_cols = blk.range_cols;
  const bool release_early = blk.release_early;
  const int rows_alloc = min(kBT, M);                    // the same in every block: the shared-memory layout
  const int rows = min(kBT, M - m0);                     // this block's valid token rows
  const DirectSmem<Cfg> L(range_cols, rows_alloc);

  // ---- the warp's weight stream (DirectWeightStream): kDepth atoms of its sequence ahead of the math
  const int units = ceil_div(atoms_per_split, kU);
  const int n_seq = wk < units ? ceil_div(units - wk, Cfg::kWarpsK) * kU : 0;
  DirectWeightStream<Cfg> stream(w, ka0, ka1, n_seq, wk, n_atom0 + wn * kTilesM, n_atoms, lane);
  uint32_t ring[kDepth][kTilesM][kBits];

  // ---- 1: (experiment, DirectPrefetch) the first L.pf positions into shared memory, then the next kDepth atoms into
  //         the register ring (not with the smem ring), then the range's scales / zero terms (weights: safe before
  //         the grid wait)
  using Pf = DirectPrefetch<Cfg>;
  uint32_t* spf = reinterpret_cast<uint32_t*>(smem + L.off_pf) + warp * L.pf * kTilesM * Cfg::kAtomWords;
  if constexpr (Pf::kOn) {
#pragma unroll 1
    for (int p = 0; p < L.pf; p += kU)
      static_for<kU>([&](auto u_) {
        constexpr int u = decltype(u_)::value;
        stream.template copy_next_async<u>(spf + (p + u) * kTilesM * Cfg::kAtomWords, w);
        if constexpr (Pf::kRing) cp_async_commit();   // one group per position: the ring waits on them in order
      });
    if constexpr (!Pf::kRing) cp_async_commit();
  }
  if constexpr (!Pf::kRing)
    static_for<kDepth>([&](auto d_) {
      constexpr int d = decltype(d_)::value;
      stream.template load_next<d % kU>(ring[d]);
    });
  direct_copy_scales<Cfg>(reinterpret_cast<T*>(smem + L.off_s), reinterpret_cast<T*>(smem + L.off_z), gscale, gzero,
                          ka0, range_cols, n0, N16, K64);
  // ---- 2: activations (written by the previous kernel: only after the grid dependency wait)
  grid_dependency_wait();
  // When the next PDL launch may start prefetching its weights: right away when this grid fills the resident slots
  // (it then hides this grid's tail), else after the main loop (see gemm_wna16.cuh; the host decides: flags).
  if (release_early) grid_dependents_launch();
  // the pass over x reads x from global memory itself (direct_window_pass): no separate copy first
#if !defined(HUMMING_DEBUG_DIRECT_NO_XPASS) && !defined(HUMMING_DIRECT_XPASS_ROW_MAJOR) && \
    !defined(HUMMING_DIRECT_XPASS_FROM_SMEM)
  constexpr bool kPassReadsX = Plan::kXSum;
#else
  constexpr bool kPassReadsX = false;
#endif
  const DirectXSource<T> xsrc{x, K, m0, ka0 * 64, min(K, ka1 * 64)};
  if constexpr (!kPassReadsX) {
    const int chunks_per_row = range_cols / 8;
    T* sx = reinterpret_cast<T*>(smem);
    for (int c = tid; c < rows * chunks_per_row; c += kThreads) {
      const int r = c / chunks_per_row;
      const int ch = c % chunks_per_row;
      const int col = ka0 * 64 + ch * 8;
      const bool valid = col < K && col < ka1 * 64;   // K tail / the last split's missing atoms: zeros
      copy16_async(sx + r * L.ld + ch * 8, valid ? x + (size_t)(m0 + r) * K + col : x, valid);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
  }
  if constexpr (Plan::kXSum) {
#if defined(HUMMING_DEBUG_DIRECT_NO_XPASS)
    // timing experiments only (wrong results): no pass over x -- window sums 0, x scales 1
    float* xs = reinterpret_cast<float*>(smem + L.off_xs);
    float* xinv = reinterpret_cast<float*>(smem + L.off_xinv);
    for (int i = tid; i < L.windows * kBT; i += kThreads) {
      xs[i] = 0.f;
      xinv[i] = 1.f;
    }
    __syncthreads();
#elif !defined(HUMMING_DIRECT_XPASS_ROW_MAJOR)
    direct_window_pass<Cfg, kPassReadsX>(smem, L, rows, tid, lane, xsrc);
#else
    // (the row-major pass of sessions 9-36, kept for the bit-identity test of the default above:
    // HUMMING_DEBUG_DEFINES=HUMMING_DIRECT_XPASS_ROW_MAJOR)
    // window sums of x: thread = one 8-column chunk; the kWindow / 8 chunks of a window sit in consecutive lanes of one
    // warp (range_cols is a multiple of kWindow here: the host keeps atoms_per_split a multiple of kU), so a
    // butterfly of shuffles sums them in a fixed order -- deterministic.  Token slots past the valid rows read as 0.
    constexpr int kChunksPerWindow = Plan::kWindow / 8;
    static_assert(kChunksPerWindow <= 32, "a window's chunks fit one warp");
    const int chunks_per_row = range_cols / 8;
    const int total = rows * chunks_per_row;
    const T* sx = reinterpret_cast<const T*>(smem);
    float* xs = reinterpret_cast<float*>(smem + L.off_xs);
    float* xinv = reinterpret_cast<float*>(smem + L.off_xinv);
    for (int c0 = tid - lane; c0 < total; c0 += kThreads) {   // warp-uniform bound: every lane shuffles
      const int c = c0 + lane;
      const bool ok = c < total;   // a window's lanes are all in or all out (total: whole windows)
      const int r = ok ? c / chunks_per_row : 0, ch = ok ? c % chunks_per_row : 0;
      uint32_t u[4] = {0u, 0u, 0u, 0u};
      if (ok) {
        const uint4 q = *reinterpret_cast<const uint4*>(sx + r * L.ld + ch * 8);
        u[0] = q.x; u[1] = q.y; u[2] = q.z; u[3] = q.w;
      }
      float v = 0.f, inv = 1.f;
      if constexpr (Plan::kX16) {
        // bf16 -> fp16 staging (DirectPlan::kX16): the max |x| of this token's window (bit patterns of non-negative
        // bf16 values order like unsigned integers; the window's chunks sit in consecutive lanes: the same butterfly
        // as the sums), scale 2^sh = 2^(14 - E) with E the max's binary exponent, so the window's values land below
        // 2^15 (fp16 holds 65504) and stay exact down to fp16's smallest normal, 2^-14 (bf16 has 8 significant bits,
        // fp16 11); the chunk is rewritten as fp16 in place (this thread owns it), the sums are those of the fp16
        // values the MMAs read, and the fold multiplies by inv = 2^-sh.  Inf / NaN stay Inf / NaN.
        uint32_t mx = 0u;
#pragma unroll
        for (int e = 0; e < 4; ++e) mx = __vmaxu2(mx, u[e] & 0x7FFF7FFFu);
        mx = max(mx & 0xFFFFu, mx >> 16);
#pragma unroll
        for (int o = 1; o < kChunksPerWindow; o <<= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float scale;
        x16_window_scale(mx, scale, inv);
        if (ok) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const typename Cfg::T2 p2 = as_t2<typename Cfg::T2>(u[e]);
            const __half2 h2 = __floats2half2_rn(to_float(p2.x) * scale, to_float(p2.y) * scale);
            u[e] = as_u32(h2);
            v += __low2float(h2) + __high2float(h2);
          }
          *reinterpret_cast<uint4*>(const_cast<T*>(sx) + r * L.ld + ch * 8) = make_uint4(u[0], u[1], u[2], u[3]);
        }
      } else if (ok) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const typename Cfg::T2 p2 = as_t2<typename Cfg::T2>(u[e]);
          v += to_float(p2.x) + to_float(p2.y);
        }
      }
#pragma unroll
      for (int o = 1; o < kChunksPerWindow; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (ok && c % kChunksPerWindow == 0) {
        xs[(ch / kChunksPerWindow) * kBT + r] = v;
        if constexpr (Plan::kX16) xinv[(ch / kChunksPerWindow) * kBT + r] = inv;
      }
    }
    for (int i = tid; i < L.windows * (kBT - rows); i += kThreads) {
      xs[(i / (kBT - rows)) * kBT + rows + i % (kBT - rows)] = 0.f;
      if constexpr (Plan::kX16) xinv[(i / (kBT - rows)) * kBT + rows + i % (kBT - rows)] = 0.f;
    }
    __syncthreads();
#endif
  }

  // ---- 3: the register ring, unrolled by lcm(depth, unit) (Plan::kBody): every slot and window position a constant
  //         Whole bodies run unconditionally, then the < kBody tail positions (n_seq is a multiple of kU: a window
  //         is never cut).
  DirectMath<Cfg> math(wn, wk, lane, smem, L, rows);
  int al = wk * kU;   // the math's atom column (position i of the sequence)
  // positions read from the prefetch region (the smem ring: all of them)
  const int pf_n = !Pf::kOn ? 0 : Pf::kRing ? n_seq : min(L.pf, n_seq);
  if constexpr (Pf::kOn) {
    // (phase 2's cp_async_wait<0> and barrier -- the x copy's or the pass's -- covered the prefetched groups)
    int slot = 0;
#pragma unroll 2
    for (int p = 0; p < pf_n; p += kU)
      static_for<kU>([&](auto u_) {
        constexpr int u = decltype(u_)::value;
        uint32_t* at = spf + slot * kTilesM * Cfg::kAtomWords;
        uint32_t cur[kTilesM][kBits];
        if constexpr (Pf::kRing) {
          stream.template take_from_smem_ring<u, Pf::kMaxPos>(cur, at, w);   // refills position p + u + kMaxPos
          slot = slot + 1 == Pf::kMaxPos ? 0 : slot + 1;
        } else {
#pragma unroll
          for (int tm = 0; tm < kTilesM; ++tm) load_atom_words<kBits>(cur[tm], at + tm * Cfg::kAtomWords, lane);
          ++slot;
        }
        math.template atom<u>(cur, al);
        al += u == kU - 1 ? 1 + (Cfg::kWarpsK - 1) * kU : 1;
      });
  }
  auto step = [&](auto d_) {
    constexpr int d = decltype(d_)::value;
#ifdef HUMMING_REFILL_AFTER_MATH
    // (experiment, HUMMING_DEBUG_DEFINES=HUMMING_REFILL_AFTER_MATH) the math reads the slot in place and the slot is
    // refilled after it: no slot -> cur register copies (the ring is unrolled by its depth, so a refill issued first
    // cannot reuse the consumed registers: 8 IMAD.MOV per position at tm2), one atom's math later
    math.template atom<d % kU>(ring[d % kDepth], al);
    stream.template load_next<(d + kDepth) % kU>(ring[d % kDepth]);   // position i0 + d + kDepth
#else
    uint32_t cur[kTilesM][kBits];
    stream.template take_and_refill<(d + kDepth) % kU>(cur, ring[d % kDepth]);   // refills position i0 + d + kDepth
    math.template atom<d % kU>(cur, al);
#endif
    al += d % kU == kU - 1 ? 1 + (Cfg::kWarpsK - 1) * kU : 1;
  };
  int i0 = pf_n;
#pragma unroll 1
  for (; i0 + Plan::kBody <= n_seq; i0 += Plan::kBody) static_for<Plan::kBody>(step);
  static_for<Plan::kBody - 1>([&](auto d_) {
    if (i0 + decltype(d_)::value < n_seq) step(d_);
  });
  // every weight byte of this block is read: the next PDL launch may start prefetching its own
  if (!release_early) grid_dependents_launch();

  // ---- 4
  math.reduce_k(reinterpret_cast<float*>(smem + L.off_red), [] { __syncthreads(); });
  if constexpr (kCluster != 0)
    // the fp32 tile at the start of shared memory (the host sizes the launch for it: direct_smem_bytes)
    cluster_splitk_epilogue<Cfg, kCluster>(math, y, chscale, tscale, bias, M, N, m0, n0, reinterpret_cast<float*>(smem));
  else
    splitk_epilogue<Cfg>(math, y, ws, tickets, chscale, tscale, bias, M, N, N16, m0, n0, nullptr, blk.reducers);
}

}  // namespace humming
