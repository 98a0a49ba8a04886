// The frame coder's CUDA backend in a build without CUDA: never available.
#include "frame_coder_cuda.h"

namespace cavlc {

std::unique_ptr<FrameCoder> create_cuda_frame_coder(int, int, int, std::string* why) {
  *why = "this build has no CUDA";
  return nullptr;
}

}  // namespace cavlc
