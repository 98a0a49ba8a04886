// gpu/context.h: CUDA contexts made by others (a CUcontext of FFmpeg's CUDA device, say), for the CUDA
// runtime code of this project. Host C++; CUDA builds only (gpuec_gpu with GPUEC_HAVE_CUDA).
//
// The runtime API works in whatever context is current on the calling thread. These helpers reach the
// driver's context stack through the runtime's driver entry points (cudaGetDriverEntryPointByVersion),
// so no library of this project links libcuda itself: the static runtime loads it.
#pragma once

#include <cstdint>

#include "gpu/device.h"

namespace gpu {

// Makes `context` (a CUcontext) current on this thread for the scope's lifetime (cuCtxPushCurrent, then
// cuCtxPopCurrent). A null context does nothing. error() says whether the push failed; the scope pops
// only what it pushed.
class ContextScope {
 public:
  explicit ContextScope(void* context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  const CudaError& error() const { return error_; }

 private:
  bool pushed_ = false;
  CudaError error_;
};

// The id of the context current on this thread (cuCtxGetId: unique for the life of the process, never
// reused, unlike the CUcontext pointer), after making sure one is (cudaFree(nullptr) binds the device's
// primary context when none is). For state kept per context, such as function attributes.
CudaError current_context_id(uint64_t* id);

}  // namespace gpu
