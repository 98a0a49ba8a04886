// The cuda backend of gudcanny.h in a build without CUDA: never available.
#include "cuda_detector.h"

namespace canny {

bool CudaDetector::available(int device, std::string* why) { return cuda_device_usable(device, why); }

std::unique_ptr<CudaDetector> CudaDetector::create(int, int, int, void*, void*, int, std::string* why) {
  *why = "this build has no CUDA (no nvcc when it was configured)";
  return nullptr;
}

}  // namespace canny
