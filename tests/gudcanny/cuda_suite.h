// What the tests built twice share (tests/gudcanny/CMakeLists.txt, gudcanny_twin_test): on the real cuda
// backend (gpu; REQUIRE_CUDA() skips without a GPU) and, with GUDCANNY_FAKE_CUDA, on its CPU stand-in
// gpuec_gudcanny_fake (unit; no GPU needed). Define GUDCANNY_SUITE first: SUITE_TEST(name) is then a test
// of the suite GUDCANNY_SUITE followed by Fake or Cuda.
#pragma once

#include <gtest/gtest.h>

#include "gpu_test.h"

#ifdef GUDCANNY_FAKE_CUDA
#define REQUIRE_CUDA() \
  do {                 \
  } while (0)
#define GUDCANNY_KIND Fake
#else
#define REQUIRE_CUDA() REQUIRE_GPU()
#define GUDCANNY_KIND Cuda
#endif
#define GUDCANNY_CAT_(a, b) a##b
#define GUDCANNY_CAT(a, b) GUDCANNY_CAT_(a, b)
#define SUITE_TEST(name) TEST(GUDCANNY_CAT(GUDCANNY_SUITE, GUDCANNY_KIND), name)

namespace gudcanny_test {

// Small inputs only: under compute-sanitizer, and with the stand-in (which runs detect_edges_ref).
inline bool small_only() {
#ifdef GUDCANNY_FAKE_CUDA
  return true;
#else
  return gpuec_test::under_sanitizer();
#endif
}

}  // namespace gudcanny_test
