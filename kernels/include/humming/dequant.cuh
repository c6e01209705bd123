// humming/dequant.cuh -- code pairs -> 16-bit value pairs, one struct per element-type family.
//
// This is the ONE place a weight dtype's decode lives on the GPU (its Python twin is vllm_humming/dtypes.py).
// A family turns pair q of a lane's packed words (layout.cuh) into a raw value pair R (as uint32 holding T2) such that
//
//      int families   : R = kRawBias + code             exactly, so  w = (R - Z) * S   with Z = kRawBias + offset + zero
//      float families : R = code placed in T's bits       and          w = R * 2^kExpAdjust * S
//
// Float families with group scales: the host stores S' = S * 2^(kExpAdjust - k) (GemmLayer._repack, "the exponent
// fold": k >= 0 is the layer's smallest that keeps every S' finite in T, and the epilogue's per-tensor scale carries
// 2^k), so an operand is R * S' -- one multiply per pair instead of two -- and a path that scales fp32 partial sums
// instead (kAccScale, the direct kernels' windows) multiplies them by S' * kGroupScaleToValue (= 2^-kExpAdjust).
//
// The GEMM kernel (gemm_wna16.cuh) applies Z / S from the scale tensors; constants that never change per group are
// folded at compile time.  Adding a dtype family means adding one struct here and one mapping in
// vllm_humming/ops/gemm.py.
#pragma once

#include "humming/common.cuh"
#include "humming/layout.cuh"

namespace humming {

// 2^e as a float, at compile time (exact for -149 <= e <= 127).
constexpr float pow2_float(int e) { return e >= 0 ? (e == 0 ? 1.f : 2.f * pow2_float(e - 1)) : 0.5f * pow2_float(e + 1); }

// ---------------------------------------------------------------------------------------------------------- integers
// Unsigned codes of kBits bits; the code offset (value = code - offset) and zero points are applied by the kernel.
// Signed intN and GPTQ's uintNb(2^(N-1)) both arrive here as unsigned codes with offset 2^(N-1) (repack flips the
// sign bit of two's-complement codes).
template <class T, int kBits_> struct IntFamily {
  using Traits = ComputeTraits<T>;
  using T2 = typename Traits::T2;
  static constexpr int kBits = kBits_;
  static constexpr bool kIsInt = true;
  static constexpr int kExpAdjust = 0;
  static constexpr float kGroupScaleToValue = 1.f;   // integer group scales are the scales
  // Magic trick: OR the code into the mantissa of kMagicValue (128.0 in bf16, 1024.0 in fp16).  Needs the code to fit
  // the mantissa; 8-bit codes in bf16 do not (128 + 255 is not a bf16 number) and take the two-magic route below,
  // which yields code - 128 directly (kRawBias = -128).
  static constexpr bool kMagic = kBits <= Traits::kMantBits;
  static constexpr int kRawBias = kMagic ? Traits::kMagicValue : -128;

  template <int kQ> HUMMING_DEVICE static uint32_t raw(const uint32_t (&w)[kBits]) {
    if constexpr (kMagic) {
      constexpr uint32_t kMagic2 = Traits::kMagicBits * 0x00010001u;
      if constexpr (PlaneSplit<kBits>::kNum == 1) {
        // one shift + one lop3: ((w >> p*j) & mask) | magic
        constexpr int p = kBits;
        constexpr int j = kQ % (16 / p);
        constexpr uint32_t mask = ((1u << p) - 1u) * 0x00010001u;
#ifdef HUMMING_DEBUG_DECODE_NO_SHIFT
        // timing experiment only (WRONG values): every pair masked in place, no shift -- what a decode of 4 LOP3 per
        // word would cost (an fp16-magic decode would need 4 LOP3 + 1 SHF)
        return and_or(w[kQ / (16 / p)], mask << (p * j), kMagic2);
#endif
        return and_or(w[kQ / (16 / p)] >> (p * j), mask, kMagic2);
      } else {
        return pair_code_bits<kBits, kQ>(w, kMagic2);   // 3 bits: one shift + one lop3 for 15 of 16 pairs
      }
    } else {
      // 8-bit codes, bf16.  Pair j of an 8-bit plane word has its codes in bytes j (low k) and j + 2 (high k), so
      // after a right shift by 8j each code sits in the low byte of its 16-bit half.  Split a code c = 128 t + l:
      //   lo  = 128.0 with l in the mantissa               = 128 + l         (lop3: (src & 0x7f) | 0x4300)
      //   sub = 0x4380 with its exponent lsb cleared by t   = t ? 128 : 256   (lop3: (src & 0x80) ^ 0x4380)
      //   lo - sub = l + 128 t - 128 = c - 128                               (one bf16x2 subtraction, exact)
      // Three ops per pair (+ the shift for odd j), and no float -> bf16 conversion (F2FP runs at a fraction of the
      // ALU rate).
      static_assert(kBits == 8 && Traits::kIsBF16, "only 8-bit codes in bf16 miss the 16-bit magic");
      constexpr int j = kQ % 2;
      const uint32_t src = w[kQ / 2] >> (8 * j);
      const uint32_t lo = and_or(src, 0x007F007Fu, 0x43004300u);
      const uint32_t sub = and_xor(src, 0x00800080u, 0x43804380u);
      return as_u32(sub2(as_t2<T2>(lo), as_t2<T2>(sub)));
    }
  }
};

// Row-scaled raw pairs of 4-bit codes in fp16 (DirectPlan::kRow16: the mma.sync decode kernel's default for fp16).
// fp16's 10 mantissa bits hold a nibble at bits 4-7 of each half as well as at bits 0-3, so the pairs of rows g + 8
// (q % 4 odd: nibbles 1 and 3 of a half, layout.cuh) are masked in place and read kRawBias + 16 * code, and nibbles
// 2 / 3 share one shift by 8: 4 lop3 + 1 shift per word instead of 4 + 3.  The fold divides rows g + 8 by 16 (exact).
template <class Family, int kQ> HUMMING_DEVICE uint32_t raw_row16(const uint32_t (&w)[Family::kBits]) {
  using Traits = typename Family::Traits;
  static_assert(Family::kIsInt && Family::kBits == 4 && !Traits::kIsBF16, "row-scaled pairs: 4-bit codes in fp16");
  constexpr int j = kQ % 4;
  const uint32_t word = j < 2 ? w[kQ / 4] : (w[kQ / 4] >> 8);
  return and_or(word, (j % 2 == 0 ? 0x000F000Fu : 0x00F000F0u), Traits::kMagicBits * 0x00010001u);
}

// ------------------------------------------------------------------------------------------------------------ floats
// Sign / kExp exponent bits / kMan mantissa bits (bias 2^(kExp-1)-1).  The exponent+mantissa bits are moved right under
// T's exponent/mantissa boundary and the sign to bit 15: the 16-bit pattern then means code_value * 2^-(kExpAdjust),
// subnormals included, so one multiply by 2^kExpAdjust (exact: a power of two) restores the value.
template <class T, int kExp, int kMan> struct FloatFamily {
  using Traits = ComputeTraits<T>;
  using T2 = typename Traits::T2;
  static constexpr int kBits = 1 + kExp + kMan;
  static_assert(kBits >= 4 && kBits <= 8, "float weights have 4..8 bits");
  static_assert(kMan <= Traits::kMantBits && kExp <= Traits::kExpBits, "format does not fit the compute type");
  static constexpr bool kIsInt = false;
  static constexpr int kRawBias = 0;
  static constexpr int kExpAdjust = Traits::kExpBias - ((1 << (kExp - 1)) - 1);
  // the exponent fold (top of this file): a group scale S' as stored times this is S * 2^-k
  static constexpr float kGroupScaleToValue = pow2_float(-kExpAdjust);
  static constexpr uint32_t kEmMask = (((1u << (kExp + kMan)) - 1u) << (Traits::kMantBits - kMan)) * 0x00010001u;

  // 4-bit codes (e2m1 = FP4, e1m2, e3m0) have their own bit layout in the word (repack.py, _pack_float4_words):
  // pair j of a word (j = kQ % 4) keeps its 3 exponent+mantissa bits at bits kF4EmStart[j] .. + 2 and its sign at
  // bit kF4Sign[j] of each 16-bit half, instead of nibble j at bits 4j .. 4j + 3.  For e2m1 in bf16 (exponent+mantissa
  // wanted at bits 6..8, the sign at 15) that costs 11 shifts and lop3s per word instead of 15:
  //     pair 2: em at 6..8, sign at 15 -- already in place:                    one AND
  //     pair 1: em at 3..5, sign at 12 -- one shift by 3 moves both:            one shift, one AND
  //     pair 0: em at 0..2 (shift 6), sign at 13 (shift 2); pair 3: em at 9..11 (shift -3), sign at 14 (shift 1):
  //             two shifts, an AND and an xor-AND each
  // (an exhaustive search over all layouts finds none cheaper: at most three pairs can move em and sign with one
  // shift, since their em fields must then lie in bits 0..8).  Other types / formats (fp16: em at 9..11) take the
  // same layout with other shift amounts -- correct everywhere, cheapest for e2m1 in bf16.
  static constexpr int kF4EmStart[4] = {0, 3, 6, 9};
  static constexpr int kF4Sign[4] = {13, 12, 15, 14};

  template <int kQ> HUMMING_DEVICE static uint32_t raw(const uint32_t (&w)[kBits]) {
    uint32_t em, sign;
    if constexpr (kBits == 4) {
      constexpr int j = kQ % 4;
      const uint32_t word = w[kQ / 4];
      constexpr int kEmShift = (Traits::kMantBits - kMan) - kF4EmStart[j];
      constexpr int kSignShift = 15 - kF4Sign[j];
      if constexpr (kEmShift == kSignShift) return shift_left_signed<kEmShift>(word) & (kEmMask | 0x80008000u);
      em = shift_left_signed<kEmShift>(word) & kEmMask;
      sign = shift_left_signed<kSignShift>(word);
    } else if constexpr (PlaneSplit<kBits>::kNum == 1) {
      constexpr int p = kBits;
      constexpr int j = kQ % (16 / p);
      const uint32_t word = w[kQ / (16 / p)];
      em = shift_left_signed<(Traits::kMantBits - kMan) - p * j>(word) & kEmMask;
      sign = shift_left_signed<(16 - kBits) - p * j>(word);
    } else {
      const uint32_t x = pair_code_bits<kBits, kQ>(w);
      em = (x << (Traits::kMantBits - kMan)) & kEmMask;
      sign = x << (16 - kBits);
    }
    return xor_and(em, sign, 0x80008000u);
  }
};

// Scale of 2^e as a T2 pair (exact for the exponents the families produce).
template <class T, int kE> HUMMING_DEVICE typename ComputeTraits<T>::T2 pow2_pair() {
  using Traits = ComputeTraits<T>;
  static_assert(kE + Traits::kExpBias > 0 && kE + Traits::kExpBias < (1 << Traits::kExpBits) - 1, "2^e out of range");
  constexpr uint32_t bits = uint32_t(kE + Traits::kExpBias) << Traits::kMantBits;
  return as_t2<typename Traits::T2>(bits * 0x00010001u);
}

}  // namespace humming
