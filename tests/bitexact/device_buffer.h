// tests/bitexact/device_buffer.h: device memory for the GPU sides of the checks (CUDA builds only): an owning
// buffer, and the error check that turns a failed CUDA call or a twin's gpu::CudaError into a reported failure.
#pragma once

#if defined(GPUEC_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "harness.h"

namespace bitexact {

template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  size_t n = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { alloc(count); }
  // A copy of v (for the benches, which do not check: a failed allocation or copy shows in the timing's
  // twin as an error).
  explicit DeviceBuffer(const std::vector<T>& v) {
    if (alloc(v.size()) && !v.empty()) cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(p); }
  // (Re)allocates count elements (at least one); false when cudaMalloc fails.
  bool alloc(size_t count) {
    cudaFree(p);
    p = nullptr;
    n = 0;
    if (cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(count, 1) * sizeof(T)) != cudaSuccess) {
      p = nullptr;
      return false;
    }
    n = count;
    return true;
  }
  size_t bytes() const { return n * sizeof(T); }
};

// median_us (harness.h) of a GPU twin: fn launches the work; each run includes its completion on the device.
template <class Fn>
double median_gpu_us(const Options& opt, Fn fn) {
  return median_us(opt, [&] {
    fn();
    cudaDeviceSynchronize();
  });
}

inline bool cuda_ok(Context& ctx, cudaError_t e, const char* call) {
  if (e == cudaSuccess) return true;
  return ctx.fail(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline bool twin_ok(Context& ctx, const gpu::CudaError& e, const char* twin) {
  if (!e) return true;
  return ctx.fail(std::string(twin) + " returned " + e.str());
}

}  // namespace bitexact

#define BX_CUDA(ctx, call) ::bitexact::cuda_ok((ctx), (call), #call)

#endif  // GPUEC_HAVE_CUDA
