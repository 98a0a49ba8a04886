// tests/common/gpu_test.h: what the GPU tests share — the skip without a GPU, a printed seed that can
// be overridden, and compute-sanitizer detection (to keep inputs small under it).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "gpu/device.h"

// GTEST_SKIP returns from the function it is in, so this must expand inside the test body.
#define REQUIRE_GPU()                                                       \
  do {                                                                      \
    std::string why_;                                                       \
    if (gpu::device_count(&why_) == 0) GTEST_SKIP() << "skipped: " << why_; \
  } while (0)

namespace gpuec_test {

// A random seed, printed once with the test's name; --seed=N on the command line or GPUEC_SEED=N
// in the environment sets it.
inline uint32_t test_seed(const char* name) {
  static const uint32_t seed = [name] {
    uint32_t s = std::random_device{}();
    if (const char* e = std::getenv("GPUEC_SEED")) s = static_cast<uint32_t>(std::strtoul(e, nullptr, 0));
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(f, arg, '\0'))
      if (arg.rfind("--seed=", 0) == 0) s = static_cast<uint32_t>(std::strtoul(arg.c_str() + 7, nullptr, 0));
    std::printf("%s seed: %u (rerun with --seed=%u)\n", name, s, s);
    return s;
  }();
  return seed;
}

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
