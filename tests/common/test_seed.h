// tests/common/test_seed.h: a random seed for randomized tests, printed once with the test's name;
// --seed=N on the command line or GPUEC_SEED=N in the environment sets it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

namespace gpuec_test {

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

}  // namespace gpuec_test
