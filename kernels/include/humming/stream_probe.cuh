// humming/stream_probe.cuh -- weight-stream skeletons without math: how fast can a kernel shaped like our decode
// kernels pull N bytes from HBM into an SM, before any dequant or MMA is added?  (vllm_humming/tuning/stream_probe.py
// times them; NOTES session 49.)
//
// Why: at 16 tokens every design measured on the H200 sits at 24-29 us on the 28672x4096 int4 layer while the
// one-token kernel streams the same bytes in 16.6 us (NOTES sessions 44-47).  The warp-specialized bulk kernel's copy
// skeleton was never timed on the H200; a 16-token kernel built on a skeleton that cannot stream at ~3.6 TB/s cannot
// reach the issue's 2.8x.  These probes answer that for the two ways our kernels load weights (and probe_ring, below,
// for a third that none of them uses yet):
//
//   probe_ldg   every thread loads 16-byte vectors straight into registers (the "direct" decode kernels): a block owns
//               one contiguous run of the buffer and its threads stride through it, `unroll` loads in flight each.
//   probe_bulk  one producer thread per block fills a ring of `stages` shared-memory slots of `slot` bytes with bulk
//               copies (`pieces` copies per slot, as our bulk kernel issues one per atom column); `cons_warps`
//               consumer warps wait on each slot's `full` mbarrier, optionally read the slot (`touch`: every 16-byte
//               vector once, XOR-reduced), optionally hold it for `hold_cycles` more SM cycles (a stand-in for the
//               math), and release it on its `empty` mbarrier (one arrival per warp).  Persistent: a block owns a
//               contiguous run of whole slots -- or, with `dyn` > 0, takes chunks of `dyn` slots from a global
//               counter as it goes (dynamic scheduling: an SM that streams faster takes more chunks).
//
// Every thread XORs the words it read and folds that into sink[0] with one atomicXor at its end (a few hundred
// atomics per block, nothing against the stream): the loads stay in the program, and sink[0] is the XOR of every word
// streamed exactly once -- the GPU test checks that against the buffer (a skipped or doubled slot changes it).
#pragma once

#include "humming/bulk.cuh"
#include "humming/copy.cuh"

namespace humming {

// src: n16 vectors of 16 bytes.  Block b owns [b * n16 / grid, (b + 1) * n16 / grid).
template <int kThreads, int kUnroll>
HUMMING_DEVICE void probe_ldg(const uint4* __restrict__ src, long long n16, uint32_t* __restrict__ sink) {
  const long long beg = (long long)blockIdx.x * n16 / gridDim.x;
  const long long end = (long long)(blockIdx.x + 1) * n16 / gridDim.x;
  uint32_t acc = 0;
  for (long long i = beg + threadIdx.x; i < end; i += (long long)kThreads * kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long j = i + (long long)u * kThreads;
      uint32_t w[4] = {0u, 0u, 0u, 0u};   // the decode kernels' weight load (copy.cuh)
      if (j < end) ldg_stream_words<4>(w, reinterpret_cast<const uint32_t*>(src + j));
      v[u] = make_uint4(w[0], w[1], w[2], w[3]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  atomicXor(sink, acc);
}

#if HUMMING_HAS_BULK
// The rings' mbarriers: `full` expects `full_count` arrivals per phase, `empty` one per consumer warp; then a block
// barrier, so no thread waits on an uninitialized one.
HUMMING_DEVICE void probe_ring_init(uint64_t* full, uint64_t* empty, int stages, int full_count, int cons_warps) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full + s, full_count);
      mbar_init(empty + s, cons_warps);
    }
    mbar_fence_init();
  }
  __syncthreads();
}

// %globaltimer: nanoseconds (updated every ~32 ns on recent GPUs -- fine over the probe's ~20 us).
HUMMING_DEVICE unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The consumer warps (threads 0 .. 32 * cons_warps - 1) of probe_bulk and probe_ring: for each of the block's `cnt`
// slots, wait until it is full, optionally read it (`touch`: every 16-byte vector once, XOR-reduced; 2: and release
// it right away), optionally hold it `hold_cycles` SM cycles (a stand-in for the math; clock64, since the global
// timer ticks too coarsely for sub-microsecond holds), and release it with one arrival per warp.  Slot index and
// phase are kept incrementally (a 64-bit i % stages per slot is a ~100-cycle software division: the first version
// spent ~0.45 us per slot on it -- session 49, call A).  The XOR of everything read goes to sink[0].
// `more` (probe_bulk): one flag per slot, written by the producer before it arms the slot -- 1: the slot holds data,
// 0: the stream has ended (the producer's last arrival on `full` then carries no bytes); cnt is then unused.
HUMMING_DEVICE void probe_consume(const uint8_t* ring, uint64_t* full, uint64_t* empty, long long cnt, int slot,
                                  int stages, int cons_warps, int touch, uint32_t hold_cycles, uint32_t* sink,
                                  const volatile int* more = nullptr) {
  const int lane = threadIdx.x % 32;
  const int vecs = slot / 16;
  uint32_t acc = 0;
  int s = 0;
  uint32_t phase = 0;
  const long long clk0 = clock64();
  const unsigned long long ns0 = global_timer_ns();
  for (long long i = 0; more != nullptr || i < cnt; ++i) {
    mbar_wait(full + s, phase);   // (acquire: the producer's flag write precedes its arrival)
    if (more != nullptr && more[s] == 0) break;
    if (touch) {
      const uint4* v = reinterpret_cast<const uint4*>(ring + (size_t)s * slot);
      for (int j = threadIdx.x; j < vecs; j += cons_warps * 32) {
        const uint4 t = v[j];
        acc ^= t.x ^ t.y ^ t.z ^ t.w;
      }
    }
    // touch == 2: release the slot as soon as it is read (its words are in registers), then hold -- a kernel that
    // copies a stage out of the ring before its math, vs one that holds the slot through it (touch == 1)
    if (touch == 2) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + s);
    }
    if (hold_cycles) {
      const long long t0 = clock64();
      while (clock64() - t0 < (long long)hold_cycles) {
      }
    }
    if (touch != 2) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + s);
    }
    if (++s == stages) {
      s = 0;
      phase ^= 1u;
    }
  }
  atomicXor(sink, acc);
  // The SM clock while streaming (block 0's first consumer thread): SM cycles and nanoseconds from its first wait to
  // its end, as two 64-bit words at sink + 2 (the holds are counted in SM cycles; their cost in time depends on it).
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long* clk = reinterpret_cast<unsigned long long*>(sink + 2);
    clk[0] = (unsigned long long)(clock64() - clk0);
    clk[1] = global_timer_ns() - ns0;
  }
}
#endif

// Dynamic shared memory: stages * slot bytes of ring + 2 * stages mbarriers + stages int flags.  Block size:
// (cons_warps + 1) * 32; the last warp is the producer.  nslots = buffer bytes / slot.
//   dyn == 0: block b owns slots [b * nslots / grid, (b + 1) * nslots / grid) (static, as every kernel of ours splits
//             its work today: the grid's time is its slowest SM's).
//   dyn  > 0: the producer takes chunk c = atomicAdd(&sched[0], 1), i.e. slots [c * dyn, c * dyn + dyn), until the
//             chunks run out.  Session 51 asked whether the 6-27 % that consumer holds cost a static split (though
//             they fit the per-SM byte budget) is the SMs that could stream faster being capped at the end: dynamic
//             chunks recover at most ~1 µs of it, so mostly not (NOTES session 51).
//             sched[1] counts finished producers; the last one resets both to 0, so CUDA-graph replays need no memset.
HUMMING_DEVICE void probe_bulk(const uint8_t* __restrict__ src, long long nslots, int slot, int stages, int pieces,
                               int cons_warps, int touch, uint32_t hold_cycles, uint32_t* __restrict__ sink,
                               int dyn = 0, unsigned long long* __restrict__ sched = nullptr) {
#if HUMMING_HAS_BULK
  extern __shared__ __align__(128) uint8_t probe_smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(probe_smem + (size_t)slot * stages);
  uint64_t* empty = full + stages;
  volatile int* more = reinterpret_cast<volatile int*>(empty + stages);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  probe_ring_init(full, empty, stages, 1, cons_warps);   // full: the producer's arrive.expect_tx (copies add bytes)
  if (warp == cons_warps) {   // producer: one thread issues every copy
    if (lane == 0) {
      const uint32_t piece = (uint32_t)(slot / pieces);
      const uint64_t policy = make_l2_evict_first();
      int s = 0;
      uint32_t phase = 0;
      // the current run of slots [first, last)
      long long first = (long long)blockIdx.x * nslots / gridDim.x;
      long long last = (long long)(blockIdx.x + 1) * nslots / gridDim.x;
      if (dyn > 0) {
        first = (long long)atomicAdd(sched, 1ull) * dyn;
        last = min(first + dyn, nslots);
      }
      while (first < last) {
        for (long long i = first; i < last; ++i) {
          mbar_wait(empty + s, phase ^ 1u);
          more[s] = 1;
          mbar_arrive_expect_tx(full + s, (uint32_t)slot);
          const uint8_t* g = src + i * slot;
          for (int p = 0; p < pieces; ++p)
            bulk_copy_g2s_hint(probe_smem + (size_t)s * slot + p * piece, g + p * piece, piece, full + s, policy);
          if (++s == stages) {
            s = 0;
            phase ^= 1u;
          }
        }
        if (dyn == 0) break;
        first = (long long)atomicAdd(sched, 1ull) * dyn;
        last = min(first + dyn, nslots);
      }
      // the end of the stream: an arrival without bytes on the next slot, its flag 0
      mbar_wait(empty + s, phase ^ 1u);
      more[s] = 0;
      mbar_arrive(full + s);
      if (dyn > 0 && atomicAdd(sched + 1, 1ull) == gridDim.x - 1) {   // every producer is past its last grab
        sched[0] = 0;
        sched[1] = 0;
      }
    }
    return;
  }
  probe_consume(probe_smem, full, empty, 0, slot, stages, cons_warps, touch, hold_cycles, sink, more);
#else
  __trap();
#endif
}

// Dynamic shared memory as probe_bulk's.  Block size: (cons_warps + load_warps) * 32; the last load_warps warps load.
// A decode kernel with dedicated LOAD WARPS (session 50's next experiment): the direct decode keeps its rate by having
// 28 warps' register rings of 16-byte requests in flight (NOTES session 50: halving the warps halved what hid the
// latency), but those same warps do the math.  Here `load_warps` warps fill a ring of `stages` slots of `slot` bytes
// with 16-byte cp.async copies -- every lane its share of each slot -- and each lane's arrival on the slot's `full`
// mbarrier is made by the hardware once its copies have landed (cp.async.mbarrier.arrive.noinc: the loaders never
// wait for their own copies); the consumer warps are probe_bulk's (probe_consume).
HUMMING_DEVICE void probe_ring(const uint8_t* __restrict__ src, long long nslots, int slot, int stages, int load_warps,
                               int cons_warps, int touch, uint32_t hold_cycles, uint32_t* __restrict__ sink) {
#if HUMMING_HAS_BULK
  extern __shared__ __align__(128) uint8_t probe_smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(probe_smem + (size_t)slot * stages);
  uint64_t* empty = full + stages;
  const int loaders = load_warps * 32;
  probe_ring_init(full, empty, stages, loaders, cons_warps);   // full: one (hardware-made) arrival per loader thread
  const long long beg = (long long)blockIdx.x * nslots / gridDim.x;
  const long long cnt = (long long)(blockIdx.x + 1) * nslots / gridDim.x - beg;
  if (threadIdx.x >= cons_warps * 32) {   // loaders
    const int t = threadIdx.x - cons_warps * 32;
    const int vecs = slot / 16;
    int s = 0;
    uint32_t phase = 0;
    for (long long i = 0; i < cnt; ++i) {
      mbar_wait(empty + s, phase ^ 1u);
      const uint8_t* g = src + (beg + i) * slot;
      uint8_t* d = probe_smem + (size_t)s * slot;
      for (int j = t; j < vecs; j += loaders) copy16_async(d + j * 16, g + j * 16, true);
      mbar_arrive_cp_async(full + s);
      if (++s == stages) {
        s = 0;
        phase ^= 1u;
      }
    }
    cp_async_commit();   // (nothing may be in flight when a thread exits)
    cp_async_wait<0>();
    return;
  }
  probe_consume(probe_smem, full, empty, cnt, slot, stages, cons_warps, touch, hold_cycles, sink);
#else
  __trap();
#endif
}

}  // namespace humming
