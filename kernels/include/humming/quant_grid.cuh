// humming/quant_grid.cuh -- rounding float32 values onto the value grid of a small code type, and encoding dynamic
// (absmax) scales, exactly as vllm_humming/reference.py does (the Python reference is the definition; this header
// is its float32 transcription for the kernels).
//
// A GRID is the set of values a code type can hold.  `Grid::round(v)` returns the grid value nearest to v --
// round to nearest, ties to even, saturating at +-max -- as a float32.  The kernels never need the codes themselves
// (they hand the GEMM decode(code) * scale), so there is no code table here.
//
//   IntGrid<kMin, kMax>              int8 / int4 ...: rintf (ties to even), clamp to [kMin, kMax].
//   FloatGrid<kMan, kMinExp, kMaxBits>
//       signed or unsigned floats with kMan mantissa bits and smallest normal exponent kMinExp (1 - bias); kMaxBits
//       is the float32 bit pattern of the largest finite value.  For |v| < max with e = floor(log2|v|) clamped to
//       kMinExp (below it the grid is the evenly spaced subnormals), the grid spacing is q = 2^(e - kMan), and
//       rintf(|v| / q) * q is the nearest grid value: |v| / q < 2^(kMan + 1) is exact (q is a power of two), rintf
//       breaks ties to the even integer, i.e. the even mantissa -- the even CODE, because consecutive codes of one
//       sign are consecutive mantissas (a carry into the next binade gives mantissa 0, also even).  Saturation:
//       min(result, max) (the reference clamps |v| to max first; both give max for everything at or above it).
//
// Scale encoders turn a group's absmax into the scale value the group is divided by (dynamic scales):
//   ScaleF32           t = amax / qmax (IEEE float32 division), 1 where t is 0.
//   ScaleGrid<Grid, kTinyBits>   8-bit float scales (e4m3 for NVFP4): Grid::round(t); a result of 0 (underflow)
//                      becomes the smallest positive value of the type (kTinyBits), so a group never divides by 0.
//   ScaleE8M0<kEmax>   MX: 2^(floor(log2 amax) - kEmax), amax clamped below at 2^-120, exponent clamped to
//                      [-127, 127] (kEmax = floor(log2 qmax)).
// The 16-bit scale types (bf16 / fp16) round with CUDA's conversion intrinsics and live in act_quant.cuh.
//
// The header also compiles as plain C++ (HUMMING_HOST_TEST): tests/test_act_quant.py builds a host program from it
// with g++ and compares every grid and encoder with the Python reference, value by value.
#pragma once

#ifdef HUMMING_HOST_TEST
#include <cmath>
#include <cstdint>
#include <cstring>
#define HUMMING_HD inline
#else
#include "humming/common.cuh"
#define HUMMING_HD __host__ __device__ __forceinline__
#endif

namespace humming {

HUMMING_HD float bits_as_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

HUMMING_HD uint32_t float_as_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// floor(log2 |v|) of a normal float32 (its exponent field minus the bias); -127 for zero and subnormals.
HUMMING_HD int float_exponent(float v) { return (int)((float_as_bits(v) >> 23) & 0xFF) - 127; }

// 2^e for -126 <= e <= 127 (a normal float32, built from its bits).
HUMMING_HD float pow2_normal(int e) { return bits_as_float((uint32_t)(e + 127) << 23); }

template <int kMin, int kMax> struct IntGrid {
  static_assert(kMin < 0 && kMax > 0, "activation codes are signed (symmetric absmax scaling)");
  static constexpr float kQmax = (float)(kMax < -kMin ? kMax : -kMin);   // largest symmetric magnitude
  HUMMING_HD static float qmax() { return kQmax; }
  HUMMING_HD static float round(float v) { return fminf(fmaxf(rintf(v), (float)kMin), (float)kMax); }
};

template <int kMan, int kMinExp, uint32_t kMaxBits> struct FloatGrid {
  static_assert(kMan >= 0 && kMan <= 10, "mantissa bits of a small float");
  static_assert(kMinExp - kMan >= -126, "the grid spacing must be a normal float32");
  static_assert((kMaxBits >> 31) == 0, "max is positive");
  HUMMING_HD static float max_value() { return bits_as_float(kMaxBits); }
  HUMMING_HD static float qmax() { return bits_as_float(kMaxBits); }   // absmax scaling maps amax onto max
  HUMMING_HD static float round(float v) {
    const float mx = max_value();
    const float a = fabsf(v);
    float r;
    if (a < mx) {
      int e = float_exponent(a);
      e = e < kMinExp ? kMinExp : e;
      const float q = pow2_normal(e - kMan);          // grid spacing in |v|'s binade
      // a / q, exactly: q and 1 / q = 2^(kMan - e) are normal powers of two (e in [kMinExp, exponent of max]), so
      // the product is the quotient bit for bit -- without the division's slow path, which zeros and tiny values
      // take on the GPU.  rintf: ties to the even mantissa.
      r = fminf(rintf(a * pow2_normal(kMan - e)) * q, mx);
    } else {
      r = mx;                                          // saturate (NaN too: the reference refuses NaN outright)
    }
    return copysignf(r, v);
  }
};

struct ScaleF32 {
  HUMMING_HD static float encode(float amax, float qmax) {
    const float t = amax / qmax;
    return t > 0.f ? t : 1.f;
  }
};

template <class Grid, uint32_t kTinyBits> struct ScaleGrid {
  HUMMING_HD static float encode(float amax, float qmax) {
    float t = amax / qmax;
    t = t > 0.f ? t : 1.f;
    const float r = Grid::round(t);
    return r > 0.f ? r : bits_as_float(kTinyBits);
  }
};

template <int kEmax> struct ScaleE8M0 {
  HUMMING_HD static float encode(float amax, float /*qmax*/) {
    // floor(log2(max(amax, 2^-120))): 2^-120 is a normal float32, so the exponent field is exact
    int e = amax >= pow2_normal(-120) ? float_exponent(amax) : -120;
    e -= kEmax;
    e = e < -127 ? -127 : (e > 127 ? 127 : e);
    return e >= -126 ? pow2_normal(e) : bits_as_float(0x00400000u);   // 2^-127 is a float32 subnormal
  }
};

}  // namespace humming
