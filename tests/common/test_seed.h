// tests/common/test_seed.h: the random seed of randomized tests, printed so that a failure can be replayed.
//
// test_seed(name): for GoogleTest programs; printed once with the test's name; --seed=N on the command line or
//   GPUEC_SEED=N in the environment sets it.
// seed_from_args(argc, argv, &seed): for programs with their own command line (tests/bitexact): takes
//   "--seed N" or "--seed=N" (GPUEC_SEED=N in the environment when neither is given; else a random seed) and
//   returns false for a value that is not a 32-bit number.
// parse_seed(text, &seed): decimal or 0x-hex, the whole text, at most 2^32 - 1.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

namespace gpuec_test {

inline bool parse_seed(const char* text, uint32_t* seed) {
  if (!text || !*text || *text == '-') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (errno || *end || v > 0xFFFFFFFFull) return false;
  *seed = static_cast<uint32_t>(v);
  return true;
}

inline uint32_t random_seed() { return std::random_device{}(); }

// The seed of a program with its own arguments (see the top of this file). argv entries are not changed.
inline bool seed_from_args(int argc, char** argv, uint32_t* seed) {
  *seed = random_seed();
  if (const char* e = std::getenv("GPUEC_SEED"))
    if (!parse_seed(e, seed)) return false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0) {
      if (i + 1 >= argc || !parse_seed(argv[i + 1], seed)) return false;
      ++i;
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      if (!parse_seed(argv[i] + 7, seed)) return false;
    }
  }
  return true;
}

// A fixed seed that GPUEC_SEED=N in the environment overrides, printed with the test's name (tests that keep one
// seed from run to run unless told otherwise; call it once).
inline uint32_t fixed_seed(const char* name, uint32_t fallback) {
  const char* s = std::getenv("GPUEC_SEED");
  const uint32_t v = s ? static_cast<uint32_t>(std::strtoul(s, nullptr, 0)) : fallback;
  std::printf("%s seed: 0x%x (GPUEC_SEED overrides)\n", name, v);
  return v;
}

inline uint32_t test_seed(const char* name) {
  static const uint32_t seed = [name] {
    uint32_t s = random_seed();
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
