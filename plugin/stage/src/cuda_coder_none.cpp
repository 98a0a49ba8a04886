// The stage's CUDA backend in a build without CUDA: never available.
#include "gpuec/cuda_coder.h"

namespace gpuec {

std::unique_ptr<CudaCoder> CudaCoder::create(int, int, int, std::string* why) {
  *why = "this build has no CUDA";
  return nullptr;
}

}  // namespace gpuec
