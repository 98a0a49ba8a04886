// vle/encoders.h: the GVLE encoder of each backend in this build, and compress with a backend (library
// gpuec_vle_encoders). gpuec_vle itself has no CUDA dependency: its compress takes any EncodeFn
// (vle/format.h). This library adds the CUDA encoder where the build has CUDA (gpuec_vle_cuda linked in), and
// nothing where it has not; the choice is made when the library is built, not at run time by the program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "vle/format.h"

namespace vle {

// The CUDA encoder as an EncodeFn: encode_cuda_host (vle/encode_cuda.h) behind encode_ref's signature and
// contract, UINT64_MAX when a CUDA call fails (cuda_encoder_error() then says which). nullptr in a build
// without CUDA.
EncodeFn cuda_encoder();
// The last CUDA failure of cuda_encoder() on this thread ("" when none).
std::string cuda_encoder_error();

// The encoder of a backend: kCpu encode_ref; kCuda the CUDA encoder, nullptr in a build without it; kAuto the
// CUDA encoder when the build has it and a CUDA device is usable, else encode_ref; kOff nullptr.
EncodeFn encoder_for(gpu::Backend b);

// compress (vle/format.h) with the backend's encoder.
// - kCuda in a build without the CUDA encoder: kNoEncoder, "not built with the CUDA encoder".
// - kCuda without a usable device: kEncodeFailed, "the CUDA encoder: no usable CUDA device: REASON".
// - A failure of the CUDA encoder: kEncodeFailed, the message naming the CUDA error.
// - kAuto: when the CUDA encoder fails, the CPU encoder codes the file and *note (when given) says so;
//   otherwise *note is cleared.
Status compress(const uint8_t* in, size_t n, gpu::Backend backend, std::vector<uint8_t>* out,
                std::string* note = nullptr);

}  // namespace vle
