#include "gpu/backend.h"

#include <cstdlib>

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

bool parse_backend(const std::string& name, Backend* b) {
  for (Backend v : {Backend::kCpu, Backend::kCuda, Backend::kAuto})
    if (name == backend_name(v)) {
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

long long fail_at_frame(const char* variable) {
  const char* v = std::getenv(variable);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n >= 0) ? n : -1;
}

}  // namespace gpu
