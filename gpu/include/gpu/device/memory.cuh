// gpu/device/memory.cuh: global-memory accesses with an explicit memory order at GPU scope, for flags and
// counters that thread blocks of one kernel exchange (gpu/device/lookback.cuh, the CAVLCU kernels). Device code.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpu {
namespace device {

// Acquire load: the reads after it see everything written before the release store it read from.
__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Release store: everything this thread wrote before it is visible to an acquire load that reads `v`.
__device__ __forceinline__ void store_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Release add (no value returned): as store_release, for a counter. After a block barrier, thread 0's release also
// publishes what the block's other threads wrote before the barrier (CUTLASS's GenericBarrier::arrive_inc): no
// __threadfence needed.
__device__ __forceinline__ void add_release(uint32_t* p, uint32_t v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Waits (one thread) until the counter or flag at p reaches at least v, by acquire loads: what was written before the
// release that raised it is then visible to this thread (and, after a block barrier, to its block).
__device__ __forceinline__ void wait_at_least(const uint32_t* p, uint32_t v) {
  while (load_acquire(p) < v) __nanosleep(32);
}

// Relaxed load (not cached in L1, not reordered with other accesses of this thread to p): for words that
// carry their own validity (counters, flags and value in one word).
__device__ __forceinline__ uint64_t load_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

}  // namespace device
}  // namespace gpu
