// humming/act_quant.cuh -- quantized activations for the GEMM kernels: x -> decode(round(x / s)) * s.
//
// A layer whose description quantizes its activations (W8A8, W4A8, W4A4: vllm_humming.desc.ActDesc) computes
// y = dequant(quant(x)) @ dequant(W)^T.  These kernels produce dequant(quant(x)) -- the code grid's value times the
// scale, in float32, rounded once to the GEMM's 16-bit type T -- and the WnA16 GEMM then runs unchanged on it (bf16 /
// fp16 tensor-core MMAs, weights dequantized in the main loop as for any WnA16 layer).  So every weight format the
// GEMM has combines with every activation description here, and a decode step still reads the weights once.
//
// What the rounding to T costs: an int8 code times an fp32 scale has up to 8 + 24 significant bits, bf16 keeps 8,
// so the value differs from the fp32 reference by at most half a bf16 ulp -- the same rounding a bf16 activation
// already carries into any bf16 GEMM.  FP4 (e2m1) codes times e4m3 / e8m0 group scales (NVFP4, MXFP4) need at most
// 2 + 4 significant bits and are exact in bf16 and fp16; NVFP4's fp32 second-level scale s2 is one more rounding.
//
// Scale modes (the description's granularity):
//   kModeStatic  per tensor, the given scale (float32, static_scale[0]);
//   kModeTensor  dynamic per tensor: absmax over all of x -- act_amax_partials first writes one absmax per block,
//                act_quant_rows reduces those partials (every block, a few hundred floats);
//   kModeToken   dynamic per token (row): a first pass over the row for the absmax, a second to round and store;
//   kModeGroup   dynamic per group of kGroup consecutive columns: one pass (the group's threads reduce by shuffles).
//
// Threads: one block per row (grid-stride), kThreads threads, each thread a CHUNK of 8 consecutive columns per step
// (kVec: one or two 16-byte loads and one 16-byte store; otherwise element by element with bounds checks, for rows
// whose length or alignment is not a multiple of 8 elements), kRegSteps chunks in registers at once (load_batch).
// A group of kGroup columns is kGroup / 8 consecutive lanes of one warp (kGroup <= 256 = 8 x 32), so its absmax is a
// butterfly over those lanes.
#pragma once

#include "humming/common.cuh"
#include "humming/quant_grid.cuh"

namespace humming {

constexpr int kActModeStatic = 0;
constexpr int kActModeTensor = 1;
constexpr int kActModeToken = 2;
constexpr int kActModeGroup = 3;
constexpr int kActChunk = 8;          // columns per thread per step

// 16-bit scale types: round the target scale with the conversion intrinsics (RNE); a result of 0 becomes the type's
// smallest normal value (reference._smallest_positive uses finfo.smallest_normal for >8-bit types).
template <class T16> struct Scale16 {
  HUMMING_DEVICE static float encode(float amax, float qmax) {
    float t = amax / qmax;
    t = t > 0.f ? t : 1.f;
    const float r = to_float(from_float<T16>(t));
    return r > 0.f ? r : (ComputeTraits<T16>::kIsBF16 ? bits_as_float(0x00800000u) : 6.103515625e-05f);
  }
};

HUMMING_DEVICE float load_as_float(const float* p) { return *p; }
HUMMING_DEVICE float load_as_float(const __nv_bfloat16* p) { return to_float(*p); }
HUMMING_DEVICE float load_as_float(const __half* p) { return to_float(*p); }

// Eight consecutive elements of a row as float32.  kVec: the 8 elements are 16-byte aligned and in range.
template <class TIn, bool kVec>
HUMMING_DEVICE void load_chunk(float (&v)[kActChunk], const TIn* row, int col, int K) {
  if constexpr (kVec) {
    constexpr int kPerVec = 16 / (int)sizeof(TIn);
#pragma unroll
    for (int j = 0; j < kActChunk / kPerVec; ++j) {
      const uint4 raw = *reinterpret_cast<const uint4*>(row + col + j * kPerVec);
      const TIn* e = reinterpret_cast<const TIn*>(&raw);
#pragma unroll
      for (int i = 0; i < kPerVec; ++i) v[j * kPerVec + i] = load_as_float(e + i);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kActChunk; ++i) v[i] = col + i < K ? load_as_float(row + col + i) : 0.f;
  }
}

template <class T, bool kVec>
HUMMING_DEVICE void store_chunk(T* row, int col, int K, const float (&v)[kActChunk]) {
  if constexpr (kVec) {
    uint4 raw;
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int i = 0; i < kActChunk; ++i) e[i] = from_float<T>(v[i]);
    *reinterpret_cast<uint4*>(row + col) = raw;
  } else {
#pragma unroll
    for (int i = 0; i < kActChunk; ++i)
      if (col + i < K) row[col + i] = from_float<T>(v[i]);
  }
}

template <int kThreads> HUMMING_DEVICE float block_max(float v, float* red) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();                      // red[] may still be read from the previous reduction
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? red[lane] : 0.f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// kRegSteps chunks per thread held in registers at once: a batch of kThreads x 8 x kRegSteps columns.  The batch's
// loads are all issued before any is used (one memory round trip per batch rather than one per chunk), and a
// per-token row that fits one batch is read once.  Chunk r of thread t covers columns base + (r x kThreads + t) x 8.
template <class TIn, bool kVec, int kThreads, int kRegSteps>
HUMMING_DEVICE void load_batch(float (&v)[kRegSteps][kActChunk], const TIn* row, int base, int K) {
#pragma unroll
  for (int r = 0; r < kRegSteps; ++r) {
    const int col = base + (r * kThreads + (int)threadIdx.x) * kActChunk;
    if (col < K) load_chunk<TIn, kVec>(v[r], row, col, K);
    else {
#pragma unroll
      for (int i = 0; i < kActChunk; ++i) v[r][i] = 0.f;
    }
  }
}

template <int kRegSteps> HUMMING_DEVICE float batch_absmax(const float (&v)[kRegSteps][kActChunk], float a) {
#pragma unroll
  for (int r = 0; r < kRegSteps; ++r)
#pragma unroll
    for (int i = 0; i < kActChunk; ++i) a = fmaxf(a, fabsf(v[r][i]));
  return a;
}

// Per-block absmax partials of x (dynamic per-tensor scales): block b covers rows b, b + gridDim.x, ...
template <class TIn, bool kVec, int kThreads, int kRegSteps>
HUMMING_DEVICE void act_amax_partials(const TIn* __restrict__ x, long long ldx, int M, int K,
                                      float* __restrict__ partials) {
  __shared__ float red[32];
  grid_dependency_wait();      // x may come from the kernel before (programmatic dependent launch)
#ifndef HUMMING_DEBUG_ACT_LATE_RELEASE
  grid_dependents_launch();    // the quantize kernel after this one waits for all of it anyway
#endif
  constexpr int kBatch = kThreads * kActChunk * kRegSteps;
  float a = 0.f;
  for (int m = blockIdx.x; m < M; m += gridDim.x) {
    const TIn* row = x + (long long)m * ldx;
    for (int base = 0; base < K; base += kBatch) {
      float v[kRegSteps][kActChunk];
      load_batch<TIn, kVec, kThreads, kRegSteps>(v, row, base, K);
      a = batch_absmax<kRegSteps>(v, a);
    }
  }
  a = block_max<kThreads>(a, red);
  if (threadIdx.x == 0) partials[blockIdx.x] = a;
}

// x [M, K] (row stride ldx) -> out [M, K] (contiguous), out = decode(round(x' / s)) * s (* s2), x' = x (/ s2).
//   Grid:   IntGrid / FloatGrid of the activation dtype;  Scale: the scale dtype's encoder (dynamic modes);
//   kS2:    NVFP4's second-level scale: x is divided by s2[0] before the group absmax, the value multiplied after.
// Launched with programmatic dependent launch: everything (the reads of x and of the partials, the writes of out,
// which an earlier kernel may still read) follows griddepcontrol.wait; the GEMM after it is released at once, so its
// blocks prefetch their weights while this kernel runs (they wait for all of it before reading out).
template <class TIn, class T, class Grid, class Scale, int kMode, int kGroup, bool kS2, bool kVec, int kThreads,
          int kRegSteps>
HUMMING_DEVICE void act_quant_rows(const TIn* __restrict__ x, long long ldx, T* __restrict__ out, int M, int K,
                                   const float* __restrict__ static_scale, const float* __restrict__ s2,
                                   const float* __restrict__ partials, int num_partials) {
  static_assert(kMode >= kActModeStatic && kMode <= kActModeGroup, "scale mode");
  static_assert(kMode != kActModeGroup || (kGroup % kActChunk == 0 && kGroup / kActChunk <= 32 &&
                                            ((kGroup / kActChunk) & (kGroup / kActChunk - 1)) == 0),
                "a group is a power-of-two number of chunks within one warp (16 <= kGroup <= 256)");
  static_assert(!kS2 || kMode == kActModeGroup, "s2 goes with dynamic group scales (reference.quantize_activations)");
  static_assert(kThreads % 32 == 0 && kRegSteps >= 1, "whole warps, at least one chunk per batch");
  __shared__ float red[32];
  grid_dependency_wait();
#ifndef HUMMING_DEBUG_ACT_LATE_RELEASE   // experiments: release the next launch only when this grid ends
  grid_dependents_launch();
#endif
  constexpr int kBatch = kThreads * kActChunk * kRegSteps;
  const float qmax = Grid::qmax();
  const float s2v = kS2 ? s2[0] : 1.f;   // x' = x / s2 (a division, as the reference does it)

  float tensor_scale = 1.f;
  if constexpr (kMode == kActModeStatic) {
    tensor_scale = static_scale[0];
  } else if constexpr (kMode == kActModeTensor) {
    float a = 0.f;
    for (int i = threadIdx.x; i < num_partials; i += kThreads) a = fmaxf(a, partials[i]);
    tensor_scale = Scale::encode(block_max<kThreads>(a, red), qmax);
  }

  const int batches = (K + kBatch - 1) / kBatch;
  for (int m = blockIdx.x; m < M; m += gridDim.x) {
    const TIn* row = x + (long long)m * ldx;
    T* orow = out + (long long)m * K;
    float s = tensor_scale;
    float v[kRegSteps][kActChunk];
    // Per token, the absmax pass runs over the batches upward and leaves the last one in registers; the quantize
    // pass then starts from that batch and goes downward.  A row of one batch is thus read once.
    if constexpr (kMode == kActModeToken) {
      float a = 0.f;
      for (int b = 0; b < batches; ++b) {
        load_batch<TIn, kVec, kThreads, kRegSteps>(v, row, b * kBatch, K);
        a = batch_absmax<kRegSteps>(v, a);
      }
      s = Scale::encode(block_max<kThreads>(a, red), qmax);
    }
    // Every thread runs every chunk of a batch (the group butterflies need whole warps): chunks past K are zeros
    // and are not stored.
    for (int b = batches - 1; b >= 0; --b) {
      const int base = b * kBatch;
      if (kMode != kActModeToken || b != batches - 1) load_batch<TIn, kVec, kThreads, kRegSteps>(v, row, base, K);
#pragma unroll
      for (int r = 0; r < kRegSteps; ++r) {
        // chunks past the row for the whole block: nothing to compute (a block-uniform skip: the butterflies below
        // still see whole warps)
        if (base + r * kThreads * kActChunk >= K) continue;
        if constexpr (kS2) {
#pragma unroll
          for (int i = 0; i < kActChunk; ++i) v[r][i] = v[r][i] / s2v;
        }
        if constexpr (kMode == kActModeGroup) {
          float a = 0.f;
#pragma unroll
          for (int i = 0; i < kActChunk; ++i) a = fmaxf(a, fabsf(v[r][i]));
#pragma unroll
          for (int o = kGroup / kActChunk / 2; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
          s = Scale::encode(a, qmax);
        }
        // x / s is an IEEE division (the reference's); a zero dividend sends the GPU's division to its slow path, and
        // a zero quantizes to itself (round(+-0) = +-0, times s or s2 stays +-0), so zeros skip the arithmetic
#pragma unroll
        for (int i = 0; i < kActChunk; ++i) {
          if (v[r][i] != 0.f) {
            float q = Grid::round(v[r][i] / s) * s;
            if constexpr (kS2) q = q * s2v;
            v[r][i] = q;
          }
        }
        const int col = base + (r * kThreads + (int)threadIdx.x) * kActChunk;
        if (col < K) store_chunk<T, kVec>(orow, col, K, v[r]);
      }
    }
  }
}

}  // namespace humming
