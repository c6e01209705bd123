// humming/dequant_weight.cuh -- expand the GEMM kernels' packed weight (layout.cuh) into a plain row-major matrix
// W[N, K] of the compute type, so that large-M (prefill) layers can run y = x @ W^T on cuBLAS.
//
//   out[(n - row_begin) * ldo + k] = dequant(W)[n, k]    for row_begin <= n < min(N, row_end), k < K
//
// (columns k in [K, ldo) are left untouched).  [row_begin, row_end) selects a band of weight rows: row_begin is a
// multiple of 16 (an atom row), row_end may be anything above it (clamped to N).  The full matrix is row_begin = 0,
// row_end = N (the defaults of the device function).  Large-M layers expand the weight band by band into one small
// scratch buffer that stays in L2 and run a cuBLAS GEMM on each band (vllm_humming/ops/dequant_weight.py,
// prefill_matmul), instead of writing and re-reading the whole [N, K] matrix through HBM.
//
// Values are exactly the GEMM's A operand: the pair -> value math (family raw pair, then group scale / zero point) is
// PairScaler below, the same sequence of 16-bit operations gemm_wna16.cuh's compute_stage performs.  The GEMM's
// epilogue scales (per-channel `chscale`, per-tensor `tscale`, fp32) are folded in here: the 16-bit value is taken to
// fp32, multiplied by chscale[n] * tscale[0] and rounded to T once more.  Without epilogue scales the expanded
// weight is bit-identical to the operand the GEMM feeds its MMAs.
//
// Work decomposition (bandwidth-bound: the packed weight is read once, 2 bytes per element are written):
//   block = kWarps warps, all on one atom row (16 weight rows), warp i on atom column kWarps * c + i.
//   warp  = one atom (16 rows x 64 columns): every lane loads its own words (coalesced vector loads, layout.cuh),
//           decodes its 16 pairs, stores them to a per-warp shared-memory tile at their (row, column), and the warp
//           then writes the tile out row by row: each lane stores 16 bytes (8 elements), 8 lanes per 128-byte row.
//   grid  = 1-D, ceil(rows / 16) * ceil((K64 / 64) / kWarps) blocks, rows = min(N, row_end) - row_begin (N16 / 16
//           atom rows for the full matrix); atom row major, so consecutive blocks write consecutive 512-byte pieces
//           of the same 16 output rows.  Block b works on atom row row_begin / 16 + b / ceil((K64 / 64) / kWarps).
// The shared tile has rows of 72 elements (144 bytes = 36 banks): the per-pair 32-bit stores (lanes g, t -> bank
// 4g + t + const) and the 16-byte row reads (8 lanes on one row) are both conflict-free.
// Output rows whose start is not 16-byte aligned (ldo % 8 != 0 or a misaligned `out`) and the last partial chunk of
// a row (K % 8 != 0) fall back to element stores; everything else is one 16-byte store per 8 elements.
#pragma once

#include "humming/common.cuh"
#include "humming/dequant.cuh"
#include "humming/layout.cuh"

namespace humming {

// ------------------------------------------------------------------------------------------------ pair -> value
// Raw pair R (Family::raw<q>, both halves of one row) -> the dequantized value pair, in T.  kZeroMode takes the
// values of gemm_wna16.cuh's ZeroMode (0: none, 1: integer zero point, 2: float zero point), i.e. FormatParams.
// zero_mode; s / z are the row's group scale and zero term broadcast to both halves (ignored where the format has
// none):
//   int,   integer zero : (R - Z) * S                    Z = kRawBias + offset + zero (gzero)
//   int,   float zero   : (R - kRawBias) * S + Z         Z = -zero * scale (gzero)
//   int,   symmetric    : (R - (kRawBias + kOffset)) [* S]
//   float               : R * S'  (S' = S * 2^(kExpAdjust - k): the exponent fold, dequant.cuh), or R * 2^kExpAdjust
// Build one per thread (the two constant pairs live in registers) and call it per pair; the GEMM's compute_stage
// performs exactly this sequence and can call it instead.
template <class T, class Family, int kGroup, int kZeroMode, int kOffset> struct PairScaler {
  using T2 = typename ComputeTraits<T>::T2;
  static_assert(kZeroMode >= 0 && kZeroMode <= 2, "zero mode: 0 none, 1 int, 2 float");
  static_assert(kZeroMode == 0 || kGroup != 0, "zero points come with group scales");
  static_assert(kZeroMode == 0 || Family::kIsInt, "zero points are for integer families");

  T2 const_zero;   // kRawBias + kOffset (symmetric integers)
  T2 raw_bias;     // kRawBias (float zero points)

  HUMMING_DEVICE PairScaler()
      : const_zero(pack2_from_float<T2>((float)(Family::kRawBias + kOffset), (float)(Family::kRawBias + kOffset))),
        raw_bias(pack2_from_float<T2>((float)Family::kRawBias, (float)Family::kRawBias)) {}

  HUMMING_DEVICE T2 operator()(uint32_t raw, T2 s, T2 z) const {
    T2 v = as_t2<T2>(raw);
    if constexpr (Family::kIsInt) {
      if constexpr (kZeroMode == 1) {
        v = mul2(sub2(v, z), s);
      } else if constexpr (kZeroMode == 2) {
        v = fma2(sub2(v, raw_bias), s, z);
      } else {
        if constexpr (Family::kRawBias + kOffset != 0) v = sub2(v, const_zero);
        if constexpr (kGroup != 0) v = mul2(v, s);
      }
    } else if constexpr (kGroup != 0) {
      v = mul2(v, s);
    } else {
      v = mul2(v, pow2_pair<T, Family::kExpAdjust>());
    }
    return v;
  }
};

// ------------------------------------------------------------------------------------------------ the expansion
constexpr int kDequantTileStride = 72;   // elements per row of a warp's shared tile (64 + 8 padding)

// Arguments (raw pointers; tensors contiguous unless noted):
//   w        [K64/64][N16/16][atom]  packed weight (layout.cuh)
//   gscale   [ceil(K64/G)][N16]      group scales (T)                                         (kGroup != 0)
//   gzero    [ceil(K64/G)][N16]      int: kRawBias + offset + zero; float: -zero*scale (T)   (kZeroMode != 0)
//   chscale  [N16] float32           per-output-channel scale (or null)
//   tscale   [1]   float32           per-tensor scale (or null)
//   out      [rows, ldo] T           row r holds weight row row_begin + r; row stride ldo >= K (elements);
//                                    columns >= K are not written
//   N, K                             the weight's true sizes (N16, K64: padded to atoms, the layout's sizes)
//   row_begin, row_end               the band of weight rows to write, [row_begin, min(N, row_end)); row_begin a
//                                    multiple of 16 and < N.  Defaults: the whole matrix.
// Launch: blockDim.x = 32 * kWarps, gridDim.x = ceil(rows / 16) * ceil((K64 / 64) / kWarps) with rows =
// min(N, row_end) - row_begin (blocks past the band return at once), no dynamic shared memory.
template <class T, class Family, int kGroup, int kZeroMode, int kOffset, int kWarps>
__device__ __forceinline__ void dequant_weight(const uint32_t* __restrict__ w, const T* __restrict__ gscale,
                                               const T* __restrict__ gzero, const float* __restrict__ chscale,
                                               const float* __restrict__ tscale, T* __restrict__ out, int N, int K,
                                               int ldo, int N16, int K64, int row_begin = 0,
                                               int row_end = 0x7fffffff) {
  using T2 = typename ComputeTraits<T>::T2;
  constexpr int kBits = Family::kBits;
  constexpr int kAtomWords = PlaneSplit<kBits>::kAtomWords;
  constexpr int kS = kDequantTileStride;
  static_assert(kGroup == 0 || kGroup % 16 == 0, "group sizes are multiples of 16 (one k16 step never straddles)");
  static_assert(kWarps >= 1 && kWarps <= 32, "1..32 warps per block");

  __shared__ __align__(16) T tile[kWarps][kAtomRows * kS];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int g = lane / 4;
  const int t = lane % 4;

  const int n_atoms = N16 / 16;
  const int k_atoms = K64 / 64;
  const int col_groups = (k_atoms + kWarps - 1) / kWarps;
  const int n_end = row_end < N ? row_end : N;                 // rows [row_begin, n_end) are written
  const int na = row_begin / 16 + (int)(blockIdx.x / col_groups);   // atom row (of the whole weight)
  const int ka = (blockIdx.x % col_groups) * kWarps + warp;     // atom column
  // whole warps only (no block-wide sync below); an atom row past the band has nothing to write
  if (na >= n_atoms || ka >= k_atoms || na * 16 >= n_end) return;

  // ---- loads: the lane's packed words, its rows' group scales / zero terms and epilogue scales
  uint32_t words[kBits];
  load_atom_words<kBits>(words, w + ((size_t)ka * n_atoms + na) * kAtomWords, lane);

  const int n_base = na * 16;
  // One group per atom when groups are whole atoms; otherwise one per k16 step f.
  constexpr int kGroupSlots = (kGroup == 0) ? 1 : (kGroup % 64 == 0 ? 1 : 4);
  T2 s_pair[kGroupSlots][2], z_pair[kGroupSlots][2];
#pragma unroll
  for (int i = 0; i < kGroupSlots; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s_pair[i][h] = pack2_from_float<T2>(1.f, 1.f);
      z_pair[i][h] = pack2_from_float<T2>(0.f, 0.f);
      if constexpr (kGroup != 0) {
        const int gi = (ka * 64 + 16 * i) / kGroup;
        const size_t off = (size_t)gi * N16 + n_base + g + 8 * h;
        s_pair[i][h] = broadcast2<T2, T>(gscale[off]);
        if constexpr (kZeroMode != 0) z_pair[i][h] = broadcast2<T2, T>(gzero[off]);
      }
    }
  }
  const bool has_epilogue = (chscale != nullptr) || (tscale != nullptr);
  float row_scale[2] = {1.f, 1.f};
  if (has_epilogue) {
    const float ts = tscale != nullptr ? tscale[0] : 1.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) row_scale[h] = (chscale != nullptr ? chscale[n_base + g + 8 * h] : 1.f) * ts;
  }

  // ---- decode the 16 pairs into the shared tile at their (row, column)
  T* my_tile = tile[warp];
  const PairScaler<T, Family, kGroup, kZeroMode, kOffset> scale_pair;
  static_for<4>([&](auto f_) {
    constexpr int f = decltype(f_)::value;
    constexpr int slot = kGroupSlots == 1 ? 0 : f;
    static_for<4>([&](auto r_) {
      constexpr int r = decltype(r_)::value;
      constexpr int h = r & 1;                       // row g (h = 0) or g + 8 (h = 1)
      // pair q = 4f + r (layout.cuh): row g + 8h, columns 16f + 2t + 8(r >> 1) + {0, 1}
      T2 v = scale_pair(Family::template raw<4 * f + r>(words), s_pair[slot][h], z_pair[slot][h]);
      if (has_epilogue) {
        v = pack2_from_float<T2>(__low2float(v) * row_scale[h], __high2float(v) * row_scale[h]);
      }
      const int row = g + 8 * h;
      const int col = 16 * f + 2 * t + 8 * (r >> 1);
      *reinterpret_cast<uint32_t*>(my_tile + row * kS + col) = as_u32(v);
    });
  });
  __syncwarp();

  // ---- write the tile: pass i covers rows 4i .. 4i+3, lane -> row 4i + lane/8, 8-element chunk lane%8
  const bool vec_ok = (ldo % 8 == 0) && ((reinterpret_cast<size_t>(out) & 15) == 0);
  const int c = lane % 8;
  const int k0 = ka * 64 + 8 * c;
#pragma unroll
  for (int i = 0; i < kAtomRows / 4; ++i) {
    const int row = 4 * i + lane / 8;
    const int n = n_base + row;
    if (n >= n_end || k0 >= K) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(my_tile + row * kS + 8 * c);
    T* dst = out + (size_t)(n - row_begin) * ldo + k0;
    if (vec_ok && k0 + 8 <= K) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (k0 + j < K) dst[j] = e[j];
    }
  }
}

}  // namespace humming
