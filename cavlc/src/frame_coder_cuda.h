// cavlc/src/frame_coder_cuda.h (private): the frame coder's CUDA backend (src/cuda/frame_coder.cu; in a
// build without CUDA, src/frame_coder_none.cpp says it is missing).
#pragma once

#include <memory>
#include <string>

#include "cavlc/frame_coder.h"

namespace cavlc {

// nullptr with the reason in *why: no usable device `device`, a CUDA error, or no CUDA in this build.
std::unique_ptr<FrameCoder> create_cuda_frame_coder(int mb_width, int mb_height, int device, std::string* why);

}  // namespace cavlc
