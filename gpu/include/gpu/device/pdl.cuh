// gpu/device/pdl.cuh: programmatic dependent launch (sm_90) for CUDA sources of the project: a kernel launched with
// launch_pdl() may start while the kernel before it in the stream still runs; it calls pdl_wait() before it
// reads that kernel's output. Used by the CAVLCU kernels (cavlc/src/cuda), the stage's copy kernel and every
// kernel of a GUD-Canny call (canny/src/cuda/canny.cu).
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

// A launch's shape: grid, block, dynamic shared memory, stream and, where cluster > 0, clusters of `cluster`
// blocks along x; cooperative: every block of the grid resident at once (a cooperative launch: blocks may wait for
// each other; the grid must fit the device, cudaOccupancyMaxActiveBlocksPerMultiprocessor).
struct LaunchShape {
  dim3 grid, block;
  size_t smem = 0;
  cudaStream_t stream = nullptr;
  unsigned cluster = 0;
  bool cooperative = false;
};

// Launches kernel<<<s.grid, s.block, s.smem, s.stream>>>(args...) allowed to overlap the end of the kernel before it.
template <class... Params, class... Args>
inline cudaError_t launch_pdl(const LaunchShape& s, void (*kernel)(Params...), Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = s.grid;
  cfg.blockDim = s.block;
  cfg.dynamicSmemBytes = s.smem;
  cfg.stream = s.stream;
  cudaLaunchAttribute attr[3]{};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  if (s.cluster > 0) {
    attr[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attr[cfg.numAttrs].val.clusterDim.x = s.cluster;
    attr[cfg.numAttrs].val.clusterDim.y = 1;
    attr[cfg.numAttrs].val.clusterDim.z = 1;
    ++cfg.numAttrs;
  }
  if (s.cooperative) {
    attr[cfg.numAttrs].id = cudaLaunchAttributeCooperative;
    attr[cfg.numAttrs].val.cooperative = 1;
    ++cfg.numAttrs;
  }
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// Launches kernel<<<grid, block, 0, stream>>>(args...) allowed to overlap the end of the kernel before it.
template <class... Params, class... Args>
inline cudaError_t launch_pdl(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                              Args&&... args) {
  return launch_pdl(LaunchShape{dim3(grid), dim3(block), 0, stream}, kernel, std::forward<Args>(args)...);
}

}  // namespace gpu
