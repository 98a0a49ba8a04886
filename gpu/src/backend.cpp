#include "gpu/backend.h"

#include <cstdlib>

#include "gpu/device.h"

namespace gpu {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kOff: return "off";
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kAuto: return "auto";
  }
  return "unknown";
}

bool parse_backend(const std::string& name, Backend* b, bool allow_off) {
  for (Backend v : {Backend::kOff, Backend::kCpu, Backend::kCuda, Backend::kAuto})
    if (name == backend_name(v) && (v != Backend::kOff || allow_off)) {
      *b = v;
      return true;
    }
  return false;
}

bool backend_from_int(int v, Backend* b) {
  if (v < static_cast<int>(Backend::kOff) || v > static_cast<int>(Backend::kAuto)) return false;
  *b = static_cast<Backend>(v);
  return true;
}

Backend resolve_backend(Backend asked, int device, std::string* why) {
  if (asked != Backend::kCuda && asked != Backend::kAuto) return asked;
  std::string reason;
  const int n = device_count(&reason);
  if (n > 0 && device >= 0 && device < n) return Backend::kCuda;
  if (n > 0) reason = "device " + std::to_string(device) + " asked for, " + std::to_string(n) + " present";
  if (why) *why = reason;
  return Backend::kCpu;
}

long long cuda_fail_at_frame() {
  const char* v = std::getenv("GPUEC_CUDA_FAIL_AT_FRAME");
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n >= 0) ? n : -1;
}

}  // namespace gpu
