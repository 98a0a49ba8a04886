// vle/encoders.h's CUDA encoder in a build without CUDA: none.
#include "vle/encoders.h"

namespace vle {

EncodeFn cuda_encoder() { return nullptr; }
std::string cuda_encoder_error() { return std::string(); }

}  // namespace vle
