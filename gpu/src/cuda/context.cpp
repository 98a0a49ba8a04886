// gpu/context.h: the driver's context stack through the runtime's driver entry points.
#include "gpu/context.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include "gpu/cuda_check.h"

namespace gpu {
namespace {

constexpr unsigned kDriverApi = 12000;  // the entry points' ABI asked for: cuCtxGetId appeared in CUDA 12.0

struct DriverCalls {
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*get_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CudaError error;
};

CudaError entry(const char* name, void** fn) {
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  GPUEC_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, fn, kDriverApi, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !*fn)
    return CudaError{static_cast<int>(cudaErrorSymbolNotFound), __FILE__, __LINE__, "cudaErrorSymbolNotFound"};
  return {};
}

const DriverCalls& driver() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    if (!(c.error = entry("cuCtxPushCurrent", reinterpret_cast<void**>(&c.push))))
      if (!(c.error = entry("cuCtxPopCurrent", reinterpret_cast<void**>(&c.pop))))
        if (!(c.error = entry("cuCtxGetId", reinterpret_cast<void**>(&c.get_id))))
          c.error = entry("cuGetErrorName", reinterpret_cast<void**>(&c.error_name));
    return c;
  }();
  return calls;
}

// A driver result as the project's error, named by the driver (a static string, as CudaError wants).
CudaError driver_error(CUresult r, const char* file, int line) {
  const char* name = nullptr;
  if (driver().error_name(r, &name) != CUDA_SUCCESS || !name) name = "CUresult";
  return CudaError{static_cast<int>(r), file, line, name};
}

}  // namespace

ContextScope::ContextScope(void* context) {
  if (!context) return;
  const DriverCalls& d = driver();
  if (d.error) {
    error_ = d.error;
    return;
  }
  const CUresult r = d.push(static_cast<CUcontext>(context));
  if (r != CUDA_SUCCESS) {
    error_ = driver_error(r, __FILE__, __LINE__);
    return;
  }
  pushed_ = true;
}

ContextScope::~ContextScope() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().pop(&popped);
  }
}

CudaError current_context_id(uint64_t* id) {
  const DriverCalls& d = driver();
  if (d.error) return d.error;
  unsigned long long v = 0;
  CUresult r = d.get_id(nullptr, &v);  // null: the current context
  if (r == CUDA_ERROR_INVALID_CONTEXT || r == CUDA_ERROR_NOT_INITIALIZED) {  // none yet: the runtime binds the primary one
    GPUEC_CUDA_CHECK(cudaFree(nullptr));
    r = d.get_id(nullptr, &v);
  }
  if (r != CUDA_SUCCESS) return driver_error(r, __FILE__, __LINE__);
  *id = v;
  return {};
}

}  // namespace gpu
