#include "gpu/device.h"

namespace gpu {

std::string CudaError::str() const {
  if (!code) return "no error";
  return std::string(name) + " (" + std::to_string(code) + ") at " + file + ":" + std::to_string(line);
}

void probe_ref(uint32_t* out, int n, uint32_t seed) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(i) * static_cast<uint32_t>(i) + seed;
}

#ifndef GPUEC_HAVE_CUDA
bool built_with_cuda() { return false; }
int device_count(std::string* why) {
  if (why) *why = "this build has no CUDA support (nvcc was not found at configure time)";
  return 0;
}
std::string device_description() { return {}; }
CudaError probe_cuda(uint32_t*, int, uint32_t) {
  return CudaError{100, __FILE__, __LINE__, "cudaErrorNoDevice"};
}
#endif

bool device_usable(int device, std::string* why) {
  const int n = device_count(why);
  if (n < 1) return false;
  if (device < 0 || device >= n) {
    if (why) *why = "device " + std::to_string(device) + " asked for, " + std::to_string(n) + " present";
    return false;
  }
  return true;
}

}  // namespace gpu
