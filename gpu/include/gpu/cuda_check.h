// gpu/cuda_check.h: the one CUDA error check of the project (CUDA sources only).
//
// GPUEC_CUDA_CHECK(call) evaluates a CUDA runtime call; on failure it records file, line and the CUDA
// error name in a gpu::CudaError and returns it from the enclosing function (whose return type must be
// gpu::CudaError). GPUEC_CUDA_CHECK_LAUNCH() does the same for the last kernel launch.
// GPUEC_CUDA_INVALID() is the error value for arguments out of a function's contract
// (cudaErrorInvalidValue, this file and line).
#pragma once

#include <cuda_runtime.h>

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
