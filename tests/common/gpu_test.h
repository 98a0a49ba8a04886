// tests/common/gpu_test.h: what the GPU tests share — the skip without a GPU, the printed seed
// (test_seed.h), and compute-sanitizer detection (to keep inputs small under it).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu/device.h"
#include "test_seed.h"

// GTEST_SKIP returns from the function it is in, so this must expand inside the test body.
#define REQUIRE_GPU()                                                       \
  do {                                                                      \
    std::string why_;                                                       \
    if (gpu::device_count(&why_) == 0) GTEST_SKIP() << "skipped: " << why_; \
  } while (0)

namespace gpuec_test {

// compute-sanitizer injects its libraries when the CUDA runtime starts (device_count starts it).
inline bool under_sanitizer() {
  static const bool yes = [] {
    gpu::device_count(nullptr);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find("sanitizer") != std::string::npos) return true;
    const char* inj = std::getenv("CUDA_INJECTION64_PATH");
    return inj && std::strstr(inj, "anitizer") != nullptr;
  }();
  return yes;
}

}  // namespace gpuec_test
