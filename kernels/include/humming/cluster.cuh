// humming/cluster.cuh -- thread block clusters (sm_90+): the split-K reduction through distributed shared memory.
//
// A cluster is a group of blocks that the hardware schedules together on one GPC; each block can read the shared
// memory of the others (`ld.shared::cluster` on an address `mapa` translated into the peer's window) and they share a
// barrier (`barrier.cluster`, with release / acquire semantics for shared memory).  The split-K decode kernels use it
// to sum their K splits: the S blocks of one output tile form one cluster (grid z = S, cluster dims (1, 1, S)), each
// leaves its fp32 partial tile in its own shared memory, and after one cluster barrier every block sums a 1/S share
// of the tile over the S peers -- in split order, so the result is deterministic and equal to the ticket path's
// (splitk_epilogue in gemm_wna16.cuh: fp32 partials in global memory, a ticket, the last block sums) -- but without
// its chain of global round trips (partial stores, fence, atomic, partial loads), which sits at the end of every
// decode GEMM.
#pragma once

#include "humming/common.cuh"

namespace humming {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HUMMING_HAS_CLUSTER 1
#else
#define HUMMING_HAS_CLUSTER 0
#endif

// Every thread of every block of the cluster arrives, then waits for all: shared-memory writes before the barrier
// (release) are visible to cluster peers' reads after it (acquire).  `.aligned`: all threads of a warp execute it.
HUMMING_DEVICE void cluster_barrier() {
#if HUMMING_HAS_CLUSTER
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// The same barrier without the release (ptxas fences the whole GPU for it): for a rendezvous that publishes nothing,
// e.g. "every peer has finished reading my shared memory" (those reads completed: their values were consumed).
HUMMING_DEVICE void cluster_barrier_relaxed() {
#if HUMMING_HAS_CLUSTER
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;\n" ::: "memory");
#endif
}

// This block's rank in its cluster (x fastest; with cluster dims (1, 1, S) it is blockIdx.z % S).
HUMMING_DEVICE uint32_t cluster_block_rank() {
  uint32_t r = 0;
#if HUMMING_HAS_CLUSTER
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}

// The shared::cluster address of `p` (a pointer into this block's shared memory) in the block of rank `rank`.
HUMMING_DEVICE uint32_t cluster_map_shared(const void* p, uint32_t rank) {
  uint32_t out = 0;
#if HUMMING_HAS_CLUSTER
  const uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(local), "r"(rank));
#endif
  return out;
}

// 16 bytes from a peer's shared memory (address from cluster_map_shared).
HUMMING_DEVICE float4 cluster_load_f32x4(uint32_t addr) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
#if HUMMING_HAS_CLUSTER
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
#endif
  return v;
}

}  // namespace humming
