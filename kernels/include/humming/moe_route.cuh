// humming/moe_route.cuh -- the small kernels around a MoE layer's two expert-indexed GEMMs (ops/moe_gemm.py):
//
//   moe_align        topk_ids -> the routed slots sorted by expert, each expert's run padded to whole token tiles of
//                    bt rows (sorted_slots), the expert of every tile (tile_expert), and where each slot landed
//                    (slot_row) -- one block; the same result as ops/moe_gemm.moe_routing, slot for slot;
//   moe_gather_rows  xs[row] = x[token of the row's slot] (x the router weight when it applies on the input), zero
//                    rows for padding and zero columns up to the GEMM's K (a multiple of 8);
//   moe_act_rows     the activation between the GEMMs (silu / gelu / gelu_tanh / swigluoai gated, or *_no_mul), in
//                    fp32 from the first GEMM's output, rounded once, zero columns up to the second GEMM's K;
//   moe_combine      out[t] = sum over j of w[t, j] * o[row of slot t * topk + j] in fp32, j in order (deterministic).
//
// A slot is s = t * topk + j (token t, its j-th routed expert), S = T * topk slots.  Keys: the slot's local expert
// (expert_map applied: -1 = not on this rank), E for dropped slots.  Rows: tiles * bt, tiles = moe_max_tiles.
// Without these kernels the same steps are ~40 torch launches per layer, most of a decode step's MoE time.
#pragma once

#include "humming/common.cuh"

namespace humming {

HUMMING_DEVICE float mul_rn(float a, float b) { return __fmul_rn(a, b); }   // never contracted into an FMA
HUMMING_DEVICE float add_rn(float a, float b) { return __fadd_rn(a, b); }

// ------------------------------------------------------------------------------------------------------ align
// Shared memory (ints): keys[S], counts[E + 1], starts[E], ends[E]  -> moe_align_smem_ints(S, E).
HUMMING_DEVICE constexpr int moe_align_smem_ints(int S, int E) { return S + (E + 1) + 2 * E; }

// One block of kThreads threads (whole warps).  Every step is block-uniform, every warp step warp-uniform.
template <class Id, int kThreads>
HUMMING_DEVICE void moe_align(const Id* __restrict__ topk_ids, const int* __restrict__ expert_map, int map_len,
                              int S, int E, int bt, int tiles, int* __restrict__ sorted_slots,
                              int* __restrict__ tile_expert, int* __restrict__ slot_row, int* smem) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
  int* keys = smem;
  int* counts = keys + S;
  int* starts = counts + (E + 1);
  int* ends = starts + E;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  constexpr int kWarps = kThreads / 32;

  // 1. keys and per-expert counts (dropped slots: key E, slot_row -1)
  for (int e = tid; e <= E; e += kThreads) counts[e] = 0;
  __syncthreads();
  for (int i = tid; i < S; i += kThreads) {
    long long id = (long long)topk_ids[i];
    if (expert_map != nullptr && id >= 0) id = id < map_len ? expert_map[id] : -1;
    const int key = (id >= 0 && id < E) ? (int)id : E;
    keys[i] = key;
    atomicAdd(&counts[key], 1);
    if (key == E) slot_row[i] = -1;
  }
  __syncthreads();

  // 2. run starts / ends: an exclusive scan of the padded counts by warp 0 (lane l sums experts [l*per, (l+1)*per))
  if (warp == 0) {
    const int per = (E + 31) / 32;
    const int e0 = lane * per, e1 = min(e0 + per, E);
    int local = 0;
    for (int e = e0; e < e1; ++e) local += (counts[e] + bt - 1) / bt * bt;
    int incl = local;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += v;
    }
    int acc = incl - local;
    for (int e = e0; e < e1; ++e) {
      starts[e] = acc;
      acc += (counts[e] + bt - 1) / bt * bt;
      ends[e] = acc;
    }
  }
  __syncthreads();

  // 3. every row starts as padding (slot S); every tile's expert: the first run ending past the tile's first row
  const int total = E > 0 ? ends[E - 1] : 0;
  for (int r = tid; r < tiles * bt; r += kThreads) sorted_slots[r] = S;
  for (int i = tid; i < tiles; i += kThreads) {
    const int row = i * bt;
    int e = -1;
    if (row < total) {                 // binary search: the smallest e with ends[e] > row
      int lo = 0, hi = E - 1;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (ends[mid] > row) hi = mid;
        else lo = mid + 1;
      }
      e = lo;
    }
    tile_expert[i] = e;
  }
  __syncthreads();

  // 4. placement, stable: warp w takes experts w, w + kWarps, ...; it scans the keys 32 at a time in slot order and
  //    a ballot gives each matching lane its rank among the expert's slots so far
  for (int base = 0; base < E; base += kWarps) {
    const int e = base + warp;
    const int cnt = e < E ? counts[e] : 0;
    if (cnt == 0) continue;            // warp-uniform
    const int st = starts[e];
    int placed = 0;
    for (int c = 0; c < S && placed < cnt; c += 32) {
      const int i = c + lane;
      const bool hit = i < S && keys[i] == e;
      const unsigned b = __ballot_sync(0xffffffffu, hit);
      if (hit) {
        const int row = st + placed + __popc(b & ((1u << lane) - 1u));
        sorted_slots[row] = i;
        slot_row[i] = row;
      }
      placed += __popc(b);
    }
  }
}

// ------------------------------------------------------------------------------------------------------ rows
HUMMING_DEVICE float load_f(const float* p) { return *p; }
HUMMING_DEVICE float load_f(const __nv_bfloat16* p) { return to_float(*p); }
HUMMING_DEVICE float load_f(const __half* p) { return to_float(*p); }

// xs [rows, k8] (T) from x [T, h] (TIn, row stride ldx): the value is T(x) (the layer computes in T), times the
// router weight in fp32 and rounded again when kWeightIn.  One block per row (grid-stride), kThreads threads.
template <class TIn, class T, bool kWeightIn, int kThreads>
HUMMING_DEVICE void moe_gather_rows(const TIn* __restrict__ x, long long ldx, const int* __restrict__ sorted_slots,
                                    const float* __restrict__ topk_w, int S, int topk, int h, int k8, int rows,
                                    T* __restrict__ xs) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const int slot = sorted_slots[r];
    const bool valid = slot < S;
    const TIn* src = x + (long long)(valid ? slot / topk : 0) * ldx;
    const float w = kWeightIn && valid ? topk_w[slot] : 1.f;
    T* dst = xs + (long long)r * k8;
    for (int c = threadIdx.x; c < k8; c += kThreads) {
      float v = 0.f;
      if (valid && c < h) {
        v = to_float(from_float<T>(load_f(src + c)));
        if (kWeightIn) v = mul_rn(v, w);
      }
      dst[c] = from_float<T>(v);
    }
  }
}

constexpr int kMoeActSilu = 0, kMoeActGelu = 1, kMoeActGeluTanh = 2, kMoeActSwigluOai = 3;
constexpr int kMoeActSiluNoMul = 4, kMoeActGeluNoMul = 5, kMoeActRelu2NoMul = 6;

HUMMING_DEVICE float sigmoid_f(float v) { return 1.f / add_rn(1.f, expf(-v)); }
HUMMING_DEVICE float gelu_erf(float v) {
  return mul_rn(mul_rn(v, 0.5f), add_rn(1.f, erff(mul_rn(v, 0.70710678118654752440f))));
}
HUMMING_DEVICE float gelu_tanh(float v) {
  const float inner = mul_rn(0.79788456080286535588f, add_rn(v, mul_rn(0.044715f, mul_rn(mul_rn(v, v), v))));
  return mul_rn(mul_rn(0.5f, v), add_rn(1.f, tanhf(inner)));
}

// a [rows, lda] (T) from h1 [rows, ld1] (T): gated activations read gate column c and up column n_out + c
// (swigluoai: interleaved, gate 2c, up 2c + 1), *_no_mul ones column c; columns n_out .. lda-1 are zeros.
template <class T, int kAct, int kThreads>
HUMMING_DEVICE void moe_act_rows(const T* __restrict__ h1, int ld1, int n_out, int rows, T* __restrict__ a, int lda,
                                 float alpha, float limit) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* src = h1 + (long long)r * ld1;
    T* dst = a + (long long)r * lda;
    for (int c = threadIdx.x; c < lda; c += kThreads) {
      float v = 0.f;
      if (c < n_out) {
        if constexpr (kAct == kMoeActSiluNoMul || kAct == kMoeActGeluNoMul || kAct == kMoeActRelu2NoMul) {
          const float g = to_float(src[c]);
          if constexpr (kAct == kMoeActSiluNoMul) v = g * sigmoid_f(g);
          else if constexpr (kAct == kMoeActGeluNoMul) v = gelu_erf(g);
          else {
            const float rl = fmaxf(g, 0.f);
            v = mul_rn(rl, rl);
          }
        } else if constexpr (kAct == kMoeActSwigluOai) {
          const float g = fminf(to_float(src[2 * c]), limit);
          const float u = fminf(fmaxf(to_float(src[2 * c + 1]), -limit), limit);
          v = mul_rn(mul_rn(add_rn(u, 1.f), g), sigmoid_f(mul_rn(alpha, g)));
        } else {
          const float g = to_float(src[c]), u = to_float(src[n_out + c]);
          float act;
          if constexpr (kAct == kMoeActSilu) act = g / add_rn(1.f, expf(-g));
          else if constexpr (kAct == kMoeActGelu) act = gelu_erf(g);
          else act = gelu_tanh(g);
          v = mul_rn(act, u);
        }
      }
      dst[c] = from_float<T>(v);
    }
  }
}

// out [T, n] (T) = sum_j w[t, j] * o[slot_row[t * topk + j]] (rows < 0: dropped), fp32, j in order.  kWeighted
// false: the router weight was applied on the input.  One block per token (grid-stride).
template <class T, bool kWeighted, int kThreads>
HUMMING_DEVICE void moe_combine(const T* __restrict__ o, int ldo, const int* __restrict__ slot_row,
                                const float* __restrict__ topk_w, int tokens, int topk, int n, T* __restrict__ out) {
  for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
    for (int c = threadIdx.x; c < n; c += kThreads) {
      float acc = 0.f;
      for (int j = 0; j < topk; ++j) {
        const int row = slot_row[t * topk + j];
        if (row < 0) continue;
        float v = to_float(o[(long long)row * ldo + c]);
        if (kWeighted) v = mul_rn(v, topk_w[t * topk + j]);
        acc = add_rn(acc, v);
      }
      out[(long long)t * n + c] = from_float<T>(acc);
    }
  }
}

}  // namespace humming
