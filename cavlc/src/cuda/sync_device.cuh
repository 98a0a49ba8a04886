// Acquire / release accesses to global flags (gpu scope) and programmatic dependent launch (PDL), shared
// by the CAVLCU kernels. Internal.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/pdl.cuh"

namespace cavlc {
namespace {

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

using gpu::launch_pdl;
using gpu::pdl_trigger;
using gpu::pdl_wait;

}  // namespace
}  // namespace cavlc
