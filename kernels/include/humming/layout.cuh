// humming/layout.cuh -- the packed-weight layout every GEMM kernel reads (produced by vllm_humming/ops/repack.py).
//
// The weight W [N, K] of b-bit codes is cut into ATOMS of 16 rows x 64 columns (K padded to 64, N to 16).  An atom
// is exactly what one warp needs for four m16n8k16 MMAs (k16 steps f = 0..3) with W as the A operand: thread
// (g = lane/4, t = lane%4) owns rows g and g+8 and columns 2t, 2t+1, 2t+8, 2t+9 of each k16 step, i.e. 32 codes,
// grouped in 16 PAIRS (two codes with adjacent k of one row -- the two halves of one 32-bit A-fragment register):
//
//     pair q = 4*f + r,  r = A-register index:  row = g + 8*(r & 1),  k = 16*f + 2t + 8*(r >> 1) + {0, 1}
//
// Each code is split into bit PLANES of width 8, 4, 2 or 1 (b = 5 -> 4+1, 6 -> 4+2, 7 -> 4+2+1, powers of two are a
// single plane), lowest bits in the first plane.  In a plane of width p one 32-bit word holds 16/p pairs: pair j of
// the word keeps its low-k code's p bits at bit p*j and its high-k code's at bit 16 + p*j.  So extracting a pair is
// one shift and one AND with a mask repeated in both 16-bit halves -- the result is already laid out as a two-element
// 16-bit vector, ready for the "magic number" int->float trick (see dequant.cuh).
//
// 3-bit codes are the exception: FIELDS instead of planes (a 2+1 plane split costs two shifts and two lop3 per pair).
// The lane's three words w0, w1, w2 each hold five whole pairs, pair 5i+j of word i at bits 3j (low k) and 16 + 3j
// (high k), j = 0..4 -- one shift and one lop3 per pair, like 4-bit codes.  That leaves bits 15 and 31 of every word:
// bit i of pair 15's low / high code sits in bit 15 / 31 of word i (three shifts + three lop3 for that one pair).
// In memory the words are arranged like a 2+1 plane split (w0 w1 of all lanes, then w2 of all lanes: an 8-byte and
// a 4-byte load per lane), so PlaneSplit<3> below still describes where the words are, not what their bits mean.
//
// 4-bit FLOAT codes (FP4 e2m1, e1m2, e3m0) are the other exception: same words, same pairs per word, but inside each
// 16-bit half pair j keeps its sign and its exponent+mantissa field at the bits FloatFamily (dequant.cuh) can move
// into place with fewest instructions -- not as nibble j.  Integer codes never take that layout.
//
// Memory order (int32 words):   [K/64 atom columns][N/16 atom rows][planes][32 lanes][p words]
// A lane's p words of one plane are contiguous (16-byte loads for p = 4, 2x16 for p = 8), consecutive lanes are
// contiguous (conflict-free shared-memory reads, coalesced global reads), and for a fixed atom column all atom rows
// are contiguous, so a thread block's tile of BN rows x 64 columns is one contiguous run of BN/16 atoms.
// The layout depends only on b (and, for b = 4, int or float) -- never on tile shapes -- so one repacked weight serves
// every kernel choice.
#pragma once

#include "humming/common.cuh"
#include "humming/copy.cuh"

namespace humming {

constexpr int kAtomRows = 16;
constexpr int kAtomCols = 64;
constexpr int kPairsPerLane = 16;

template <int kBits> struct PlaneSplit {
  static_assert(kBits >= 1 && kBits <= 8, "codes have 1..8 bits");
  static constexpr int kNum = (kBits == 3 || kBits == 5 || kBits == 6) ? 2 : (kBits == 7 ? 3 : 1);
  // width of plane i (i < kNum)
  static constexpr int width(int i) {
    return kBits == 3 ? (i == 0 ? 2 : 1)
         : kBits == 5 ? (i == 0 ? 4 : 1)
         : kBits == 6 ? (i == 0 ? 4 : 2)
         : kBits == 7 ? (i == 0 ? 4 : (i == 1 ? 2 : 1))
         : kBits;
  }
  // bit offset of plane i inside the code
  static constexpr int bit_offset(int i) { return i == 0 ? 0 : width(0) + (i >= 2 ? width(1) : 0); }
  // first word (per lane) of plane i in the lane's concatenated word list, and of the plane's region in the atom
  static constexpr int lane_word(int i) { return bit_offset(i); }
  static constexpr int atom_word(int i) { return 32 * bit_offset(i); }
  static constexpr int kAtomWords = 32 * kBits;     // int32 words per atom
  static constexpr int kLaneWords = kBits;          // words per lane per atom
};

// Load the kBits words lane `lane` owns in the atom starting at `atom` (shared memory; kGlobal: global memory, read
// once -- gemm_wna16_direct.cuh): plane by plane, each plane's p words with one vector load.
template <int kBits, int kPlane, bool kGlobal>
HUMMING_DEVICE void load_plane_words(uint32_t (&w)[kBits], const uint32_t* atom, int lane) {
  using PS = PlaneSplit<kBits>;
  if constexpr (kPlane < PS::kNum) {
    constexpr int p = PS::width(kPlane);
    uint32_t tmp[p];
    if constexpr (kGlobal) ldg_stream_words<p>(tmp, atom + PS::atom_word(kPlane) + lane * p);
    else load_words<p>(tmp, atom + PS::atom_word(kPlane) + lane * p);
#pragma unroll
    for (int j = 0; j < p; ++j) w[PS::lane_word(kPlane) + j] = tmp[j];
    load_plane_words<kBits, kPlane + 1, kGlobal>(w, atom, lane);
  }
}

template <int kBits, bool kGlobal = false>
HUMMING_DEVICE void load_atom_words(uint32_t (&w)[kBits], const uint32_t* atom, int lane) {
  load_plane_words<kBits, 0, kGlobal>(w, atom, lane);
}

// The code bits of pair q, both halves, moved to bit 0 of each half, or-ed into kBase:
//     kBase | code_lo | (code_hi << 16)
// kExtraShift moves the codes further left (used by the float families to land bits in place in one shift); kBase
// rides in the first lop3 (the int families pass the magic number's bits).
template <int kBits, int kQ, int kExtraShift = 0>
HUMMING_DEVICE uint32_t pair_code_bits(const uint32_t (&w)[kBits], uint32_t base = 0) {
  if constexpr (kBits == 3) {
    // fields (see the top of this file)
    constexpr uint32_t kOne = 0x00010001u << kExtraShift;
    if constexpr (kQ < 15) {
      return and_or(shift_left_signed<kExtraShift - 3 * (kQ % 5)>(w[kQ / 5]), 7u * kOne, base);
    } else {
      uint32_t x = and_or(shift_left_signed<kExtraShift - 15>(w[0]), kOne, base);
      x = and_or(shift_left_signed<kExtraShift - 14>(w[1]), 2u * kOne, x);
      return and_or(shift_left_signed<kExtraShift - 13>(w[2]), 4u * kOne, x);
    }
  } else {
    using PS = PlaneSplit<kBits>;
    uint32_t x = base;
#pragma unroll
    for (int i = 0; i < PS::kNum; ++i) {
      const int p = PS::width(i);
      const int per_word = 16 / p;
      const int word = PS::lane_word(i) + kQ / per_word;
      const int j = kQ % per_word;
      const int shift = PS::bit_offset(i) + kExtraShift - p * j;   // may be negative (right shift)
      const uint32_t mask = (((1u << p) - 1u) << (PS::bit_offset(i) + kExtraShift)) * 0x00010001u;
      const uint32_t moved = shift >= 0 ? (w[word] << shift) : (w[word] >> (-shift));
      x = and_or(moved, mask, x);
    }
    return x;
  }
}

}  // namespace humming
