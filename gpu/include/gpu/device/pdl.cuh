// gpu/device/pdl.cuh: programmatic dependent launch (sm_90) for CUDA sources of the project: a kernel launched with
// launch_pdl() may start while the kernel before it in the stream still runs; it calls pdl_wait() before it
// reads that kernel's output. Used by the CAVLCU kernels (cavlc/src/cuda) and the stage's copy kernel.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace gpu {

// pdl_wait() blocks until the kernel before has finished and its writes are visible (a no-op for a kernel
// launched normally), pdl_trigger() lets the next kernel launch once every block of this one has called it
// or exited. Both are no-ops on older architectures.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, 0, stream>>>(args...) allowed to overlap the end of the kernel before it.
template <class... Params, class... Args>
inline cudaError_t launch_pdl(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                              Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace gpu
