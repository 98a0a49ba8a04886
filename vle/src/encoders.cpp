// vle/encoders.h: the backend's encoder and compress with it. cuda_encoder() comes from cuda/cuda_encoder.cpp
// in a build with CUDA, from cuda_encoder_none.cpp without.
#include "vle/encoders.h"

#include "gpu/device.h"

namespace vle {

EncodeFn encoder_for(gpu::Backend b) {
  switch (b) {
    case gpu::Backend::kCpu: return encode_ref;
    case gpu::Backend::kCuda: return cuda_encoder();
    case gpu::Backend::kAuto: {
      std::string why;
      const EncodeFn f = cuda_encoder();
      return f && gpu::device_count(&why) > 0 ? f : encode_ref;
    }
    case gpu::Backend::kOff: break;
  }
  return nullptr;
}

Status compress(const uint8_t* in, size_t n, gpu::Backend backend, std::vector<uint8_t>* out, std::string* note) {
  if (note) note->clear();
  const EncodeFn f = encoder_for(backend);
  if (!f) return Status{FormatStatus::kNoEncoder, "not built with the CUDA encoder"};
  std::string why;
  if (backend == gpu::Backend::kCuda && gpu::device_count(&why) == 0)
    return Status{FormatStatus::kEncodeFailed, "the CUDA encoder: " + why};
  Status s = compress(in, n, f, out);
  if (s.code != FormatStatus::kEncodeFailed || f == encode_ref) return s;
  const std::string cuda = cuda_encoder_error();
  if (backend != gpu::Backend::kAuto) {
    if (!cuda.empty()) s.message += " (CUDA encoder: " + cuda + ")";
    return s;
  }
  if (note)
    *note = "the CUDA encoder failed (" + (cuda.empty() ? s.message : cuda) + "); the CPU encoder coded the file";
  return compress(in, n, encode_ref, out);
}

}  // namespace vle
