// humming/bulk.cuh -- sm_90 asynchronous bulk copies (the TMA unit's 1-D mode) and the mbarriers that track them.
//
// A bulk copy moves one contiguous run of bytes (size and both addresses multiples of 16) from global to shared
// memory with ONE instruction from ONE thread; the copy engine signals completion by decrementing the transaction
// count of an mbarrier by the bytes it wrote.  A pipeline stage is then:
//
//     producer:  wait(empty[s])  ->  arrive_expect_tx(full[s], bytes of the stage)  ->  issue the copies
//     consumer:  wait(full[s])   ->  read the stage                                  ->  arrive(empty[s])
//
// An mbarrier phase completes when its pending arrival count reaches zero AND its transaction count is zero, so the
// producer's single arrival carries the expected byte count (arrive.expect_tx): copies that complete before it only
// drive the count negative, which the hardware allows.  Waits name the PARITY of the phase they wait for: the k-th use
// of a stage slot waits for parity (k & 1) on full[] and the producer waits for parity ((k & 1) ^ 1) on empty[] (the
// phase "before" the first one counts as complete, so the first pass through the ring does not block).
//
// Everything here is sm_90+; on older archs the functions compile to traps so a header that includes this one still
// builds for every arch (the kernels that use it are only launched on sm_90+).
#pragma once

#include "humming/common.cuh"

namespace humming {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HUMMING_HAS_BULK 1
#else
#define HUMMING_HAS_BULK 0
#endif

HUMMING_DEVICE uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

HUMMING_DEVICE void mbar_init(uint64_t* bar, int count) {
#if HUMMING_HAS_BULK
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
#else
  __trap();
#endif
}

// Make barrier initialisation visible to the async proxy (the copy engine) before any copy names the barrier.
HUMMING_DEVICE void mbar_fence_init() {
#if HUMMING_HAS_BULK
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

HUMMING_DEVICE void mbar_arrive(uint64_t* bar) {
#if HUMMING_HAS_BULK
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#else
  __trap();
#endif
}

HUMMING_DEVICE void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if HUMMING_HAS_BULK
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}

// One arrival on `bar`, made by the hardware once every cp.async this thread has issued so far has landed (.noinc:
// the arrival counts against the barrier's expected count, set at init).
HUMMING_DEVICE void mbar_arrive_cp_async(uint64_t* bar) {
#if HUMMING_HAS_BULK
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#else
  __trap();
#endif
}

// mbarrier arrival by lane 0 of the warp only, as a predicated instruction (no branch: under wgmma, ptxas serializes
// the asynchronous MMAs around code it considers divergent).
HUMMING_DEVICE void mbar_arrive_lane0(uint64_t* bar, int lane) {
#if HUMMING_HAS_BULK
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.eq.s32 p, %1, 0;\n"
      "  @p mbarrier.arrive.shared::cta.b64 _, [%0];\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(lane)
      : "memory");
#else
  __trap();
#endif
}

// Spin until the phase with parity `parity` has completed (try_wait suspends the thread for a while in hardware
// before returning false, so the loop does not hammer the barrier).
HUMMING_DEVICE void mbar_wait(uint64_t* bar, uint32_t parity) {
#if HUMMING_HAS_BULK
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "  @!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
#else
  __trap();
#endif
}

// One bulk copy of `bytes` (multiple of 16, both addresses 16-byte aligned) global -> shared, completing on `bar`.
HUMMING_DEVICE void bulk_copy_g2s(void* smem_dst, const void* gmem_src, uint32_t bytes, uint64_t* bar) {
#if HUMMING_HAS_BULK
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_u32(smem_dst)),
               "l"(gmem_src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
#else
  __trap();
#endif
}

// Same, with an L2 eviction policy (a 64-bit policy from make_l2_evict_first()): streamed-once weights should not
// push the activations and partial sums that every block re-reads out of L2.
HUMMING_DEVICE void bulk_copy_g2s_hint(void* smem_dst, const void* gmem_src, uint32_t bytes, uint64_t* bar,
                                       uint64_t policy) {
#if HUMMING_HAS_BULK
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::
          "r"(smem_u32(smem_dst)),
      "l"(gmem_src), "r"(bytes), "r"(smem_u32(bar)), "l"(policy)
      : "memory");
#else
  __trap();
#endif
}

HUMMING_DEVICE uint64_t make_l2_evict_first() {
  uint64_t policy = 0;
#if HUMMING_HAS_BULK
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

// Named barrier over `threads` threads (a multiple of 32) -- lets a subset of warps (e.g. the math warps of a
// warp-specialized block) synchronize without the producer warp.  id 0 is __syncthreads'.
// Warpgroup register reallocation (sm_90a): the producer warpgroup gives registers back, the math warpgroups take
// them (every thread of the warpgroup executes it; counts are multiples of 8 in 24..256).
template <int kRegs> HUMMING_DEVICE void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
#endif
}
template <int kRegs> HUMMING_DEVICE void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
#endif
}

HUMMING_DEVICE void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace humming
