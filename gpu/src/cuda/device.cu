#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device.h"

namespace gpu {
namespace {

__global__ void probe_kernel(uint32_t* out, int n, uint32_t seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<uint32_t>(i) * static_cast<uint32_t>(i) + seed;
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = std::string("no usable CUDA device: ") + cudaGetErrorName(err);
    cudaGetLastError();  // clear the sticky error of a failed driver probe
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device present";
  return n;
}

std::string device_description() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return {};
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ")";
}

CudaError probe_cuda(uint32_t* out, int n, uint32_t seed) {
  if (n <= 0) return {};
  uint32_t* d = nullptr;
  GPUEC_CUDA_CHECK(cudaMalloc(&d, sizeof(uint32_t) * n));
  probe_kernel<<<(n + 255) / 256, 256>>>(d, n, seed);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaMemcpy(out, d, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (err != cudaSuccess) return CudaError{static_cast<int>(err), __FILE__, __LINE__, cudaGetErrorName(err)};
  return {};
}

}  // namespace gpu
