// humming/gemm_wna16_stream.cuh -- the WnA16 GEMM for decode (M <= 16) as a WARP-level stream-K kernel: no shared
// memory, no block barrier; every warp streams its own contiguous run of atoms from global memory into a register
// ring and does the math.
//
// Why: a plain register-streaming kernel reads layout.cuh's atoms at 3.6-3.9 TB/s on the H200 (scripts/exp_stream.py),
// while every block-level mainloop lost time per block to staging (x tile, barriers), to the pipeline fill and to the
// split-K fixup, repeated over several waves (NOTES.md).  Here one wave of warps covers the whole weight once.
//
// Work decomposition
//   unit  = one atom (16 weight rows x 64 K columns) of one token tile; units ordered token tile, then atom row,
//           then atom column (K fastest), so a run of units is mostly one atom row along K.
//   warp  = the contiguous unit range [w * U / W, (w + 1) * U / W) of the U units (W = warps in the grid, one wave);
//           it keeps kStages atoms -- packed words plus their group scales / zero terms -- in flight in registers and
//           issues the load of unit u + kStages before the math of unit u.
//   x     = B fragments read straight from global memory per k16 step (two 32-bit loads per lane; the same few KB of
//           x are read by every warp, so they stay in L1 / L2).  Tokens past M read nothing and contribute zeros.
//   end of an atom row's run: if the warp covered the whole row (all K) it writes y; otherwise it parks its fp32
//           partial tile (kBT x 16) in the workspace slot (warp, first-or-last run of the warp), takes a ticket, and
//           the last contributor sums the contributors' partials in warp order (deterministic), writes y and resets
//           the ticket (zero between calls: CUDA-graph replays need no memset).
// The configuration is one warp's: kWarpsN = kTilesM = kWarpsK = kAtomsK = 1; kStages = the register ring depth; the
// block size (warps per block) is a launch parameter.
#pragma once

#include "humming/wna16_math.cuh"

namespace humming {

// One ring slot: an atom's packed words for this lane plus the scales / zero terms of rows g and g + 8 for every
// group the atom touches.
template <class Cfg> struct StreamSlot {
  using T = typename Cfg::T;
  static constexpr int kGroups = Cfg::kGroup == 0 ? 1 : (Cfg::kGroup >= 64 ? 1 : 64 / Cfg::kGroup);
  uint32_t words[1][Cfg::kBits];
  T s[kGroups][2];
  T z[kGroups][2];
};

// Scale source for Wna16Math from a ring slot (registers).
template <class Cfg> struct SlotScales {
  const StreamSlot<Cfg>& slot;
  HUMMING_DEVICE typename Cfg::T s(int gi, int, int h) const { return slot.s[gi][h]; }
  HUMMING_DEVICE typename Cfg::T z(int gi, int, int h) const { return slot.z[gi][h]; }
};

// Position of a unit: token tile, atom row, atom column; advanced by one unit at a time (no divisions in the loop).
struct StreamCursor {
  int mt, row, ka;
  HUMMING_DEVICE void advance(int rows, int k_atoms) {
    if (++ka == k_atoms) {
      ka = 0;
      if (++row == rows) { row = 0; ++mt; }
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void gemm_wna16_stream(const typename Cfg::T* __restrict__ x,
                                                  const uint32_t* __restrict__ w,
                                                  const typename Cfg::T* __restrict__ gscale,
                                                  const typename Cfg::T* __restrict__ gzero,
                                                  const float* __restrict__ chscale, const float* __restrict__ tscale,
                                                  const typename Cfg::T* __restrict__ bias,
                                                  typename Cfg::T* __restrict__ y, float* __restrict__ ws,
                                                  int* __restrict__ tickets, int M, int N, int K, int N16, int K64) {
  static_assert(Cfg::kWarpsN == 1 && Cfg::kTilesM == 1 && Cfg::kWarpsK == 1 && Cfg::kAtomsK == 1,
                "the stream kernel's configuration is one warp on one atom at a time");
  using T = typename Cfg::T;
  using Slot = StreamSlot<Cfg>;
  constexpr int kBits = Cfg::kBits;
  constexpr int kBT = Cfg::kBT;
  constexpr int kTG = Cfg::kTokenGroups;
  constexpr int kDepth = Cfg::kStages;
  constexpr int kAtomWords = Cfg::kAtomWords;
  constexpr int kTile = kBT * 16;   // fp32 partial tile: kBT tokens x 16 weight rows

  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const long long wid = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int rows = N16 / 16;
  const int k_atoms = K64 / 64;
  const long long U = (long long)ceil_div(M, kBT) * rows * k_atoms;
  // at most one warp per unit: every range is then non-empty, which the contributor count below relies on
  const long long W = min((long long)gridDim.x * (blockDim.x / 32), U);
  if (wid >= W) return;   // no barriers below, so leaving early is safe
  const long long u_begin = wid * U / W;
  const long long u_end = (wid + 1) * U / W;
  auto range_start = [&](long long q) { return q * U / W; };
  auto warp_of = [&](long long u) { return ((u + 1) * W - 1) / U; };   // largest q with range_start(q) <= u
  auto cursor_of = [&](long long u) {
    StreamCursor c;
    c.ka = (int)(u % k_atoms);
    const long long r = u / k_atoms;
    c.row = (int)(r % rows);
    c.mt = (int)(r / rows);
    return c;
  };

  // ---- the register ring
  Slot ring[kDepth];
  auto load = [&](const StreamCursor& c, bool valid, Slot& sl) {
    if (!valid) return;
    load_atom_words<kBits>(sl.words[0], w + ((size_t)c.ka * rows + c.row) * kAtomWords, lane);
    if constexpr (Cfg::kGroup != 0) {
#pragma unroll
      for (int gi = 0; gi < Slot::kGroups; ++gi) {
        const int grp = (c.ka * 64) / Cfg::kGroup + gi;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const size_t off = (size_t)grp * N16 + c.row * 16 + g + 8 * h;
          sl.s[gi][h] = gscale[off];
          if constexpr (Cfg::kZeroMode != kNoZero) sl.z[gi][h] = gzero[off];
        }
      }
    }
  };
  StreamCursor lc = cursor_of(u_begin);
  long long lu = u_begin;   // unit of the next load
#pragma unroll
  for (int d = 0; d < kDepth; ++d) {
    load(lc, lu < u_end, ring[d]);
    lc.advance(rows, k_atoms);
    ++lu;
  }

  Wna16Math<Cfg, XTilePadded<64>> math(0, 0, lane);
  StreamCursor cc = cursor_of(u_begin);
  long long seg_first = u_begin;

  // B fragments of all four k16 steps of atom column ka, token tile mt, straight from global x (row stride K
  // elements, K a multiple of 8; columns past K and tokens past M read as zero): thread (g, t) needs tokens tg*8 + g,
  // columns 2t, 2t+1 (b[0]) and 2t+8, 2t+9 (b[1]) of each step.  Branch-free (clamped addresses + selects) so the
  // 8 * kTG loads issue back to back; the next atom's fragments are loaded before this atom's math.
  using XFrag = uint32_t[4][kTG][2];
  auto load_x = [&](XFrag& xb, int mt, int ka) {
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      const int k0 = ka * 64 + f * 16 + 2 * t;
#pragma unroll
      for (int tg = 0; tg < kTG; ++tg) {
        const int m = mt * kBT + tg * 8 + g;
        const uint32_t* row = reinterpret_cast<const uint32_t*>(x + (size_t)min(m, M - 1) * K);
        const uint32_t v0 = __ldg(row + min(k0, K - 2) / 2);
        const uint32_t v1 = __ldg(row + min(k0 + 8, K - 2) / 2);
        xb[f][tg][0] = (m < M && k0 < K) ? v0 : 0u;
        xb[f][tg][1] = (m < M && k0 + 8 < K) ? v1 : 0u;
      }
    }
  };
  XFrag xb;
  load_x(xb, cc.mt, cc.ka);

#pragma unroll 1
  for (long long u0 = u_begin; u0 < u_end; u0 += kDepth) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const long long u = u0 + d;
      if (u < u_end) {
        const Slot cur = ring[d];
        load(lc, lu < u_end, ring[d]);   // refill: kDepth units stay in flight
        lc.advance(rows, k_atoms);
        ++lu;
        XFrag xn;
        if (u + 1 < u_end) {
          StreamCursor nc = cc;
          nc.advance(rows, k_atoms);
          load_x(xn, nc.mt, nc.ka);
        }
        math.atom_with(cur.words, [&](uint32_t (&b)[kTG][2], int f) {
#pragma unroll
          for (int tg = 0; tg < kTG; ++tg) { b[tg][0] = xb[f][tg][0]; b[tg][1] = xb[f][tg][1]; }
        }, SlotScales<Cfg>{cur}, 0);
#pragma unroll
        for (int f = 0; f < 4; ++f)
#pragma unroll
          for (int tg = 0; tg < kTG; ++tg) { xb[f][tg][0] = xn[f][tg][0]; xb[f][tg][1] = xn[f][tg][1]; }

        if (cc.ka == k_atoms - 1 || u == u_end - 1) {
          // ---- end of this warp's run on atom row (cc.mt, cc.row)
          const int m0 = cc.mt * kBT, n0 = cc.row * 16;
          const long long tile = (long long)cc.mt * rows + cc.row;
          const long long tile_first = tile * k_atoms;
          if (seg_first == tile_first && cc.ka == k_atoms - 1) {
            math.for_each_output([&](int mr, int nr, float v) {
              const int n = n0 + nr, m = m0 + mr;
              if (n < N && m < M) y[(size_t)m * N + n] = from_float<T>(epilogue_value(v, n, chscale, tscale, bias));
            });
          } else {
            const int slot = seg_first == u_begin ? 0 : 1;   // the warp's first run, or its last
            float* mine = ws + ((size_t)wid * 2 + slot) * kTile;
            math.for_each_output([&](int mr, int nr, float v) { __stcg(mine + mr * 16 + nr, v); });
            __threadfence();
            __syncwarp();
            const long long q_lo = warp_of(tile_first), q_hi = warp_of(tile_first + k_atoms - 1);
            int last = 0;
            if (lane == 0) last = atomicAdd(tickets + tile, 1) == (int)(q_hi - q_lo);
            last = __shfl_sync(0xffffffffu, last, 0);
            if (last) {
              __threadfence();
#pragma unroll 1
              for (int e = lane; e < kTile; e += 32) {
                const int m = m0 + e / 16, n = n0 + e % 16;
                if (m >= M || n >= N) continue;
                float sum = 0.f;
#pragma unroll 1
                for (long long q = q_lo; q <= q_hi; ++q) {
                  const int qslot = range_start(q) >= tile_first ? 0 : 1;
                  sum += __ldcg(ws + ((size_t)q * 2 + qslot) * kTile + e);
                }
                y[(size_t)m * N + n] = from_float<T>(epilogue_value(sum, n, chscale, tscale, bias));
              }
              __syncwarp();
              if (lane == 0) tickets[tile] = 0;
            }
          }
          math.clear();
          seg_first = u + 1;
        }
        cc.advance(rows, k_atoms);
      }
    }
  }
}

}  // namespace humming
