// gpu/cuda_check.h: the one CUDA error check of the project (CUDA sources only).
//
// GPUEC_CUDA_CHECK(call) evaluates a CUDA runtime call; on failure it records file, line and the CUDA
// error name in a gpu::CudaError and returns it from the enclosing function (whose return type must be
// gpu::CudaError). GPUEC_CUDA_CHECK_LAUNCH() does the same for the last kernel launch.
// GPUEC_CUDA_INVALID() is the error value for arguments out of a function's contract
// (cudaErrorInvalidValue, this file and line).
//
// gpu::fail(why, error, what): for host code that reports a failure as text (the frame coder, the GUD-Canny
// context): sets *why to "what: <error name> (<error text>)" (or "what: " + CudaError::str()) and returns
// false, so that `return gpu::fail(why, e, "cudaMalloc");` ends a bool function.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "gpu/device.h"

#define GPUEC_CUDA_CHECK(call)                                                     \
  do {                                                                             \
    const cudaError_t gpuec_err_ = (call);                                         \
    if (gpuec_err_ != cudaSuccess)                                                 \
      return ::gpu::CudaError{static_cast<int>(gpuec_err_), __FILE__, __LINE__,     \
                              cudaGetErrorName(gpuec_err_)};                       \
  } while (0)

#define GPUEC_CUDA_CHECK_LAUNCH() GPUEC_CUDA_CHECK(cudaGetLastError())

#define GPUEC_CUDA_INVALID() \
  ::gpu::CudaError { static_cast<int>(cudaErrorInvalidValue), __FILE__, __LINE__, "cudaErrorInvalidValue" }

namespace gpu {

inline bool fail(std::string* why, std::string text) {
  *why = std::move(text);
  return false;
}
inline bool fail(std::string* why, cudaError_t e, const char* what) {
  return fail(why, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
inline bool fail(std::string* why, const CudaError& e, const char* what) {
  return fail(why, std::string(what) + ": " + e.str());
}

}  // namespace gpu
