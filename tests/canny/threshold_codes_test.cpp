// canny::threshold_codes (canny/canny.h), the threshold codes of the CUDA twin and the CPU path, against their
// definition (a count over t[1..100]) on the host: every float within 4096 ulps of each t[k] and of each k/100 in
// double (where v * 100 could land a step off), and every 61st float of (0, 1]. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "canny/canny.h"

namespace {

float t_of(int k) { return float(k) / 100.0f; }

uint32_t codes_by_definition(float v, const float* t) {
  uint32_t a = 0, b = 0;
  for (int k = 1; k <= canny::kMaxThreshold; ++k) {
    a += v >= t[k];
    b += v > t[k];
  }
  return a | (b << 8);
}

uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

float float_of(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

class ThresholdCodes : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int k = 0; k <= canny::kMaxThreshold; ++k) t[k] = t_of(k);
  }
  // Checks every float with bits in [lo, hi] inside (0, 1]; returns how many.
  int64_t check_range(uint32_t lo, uint32_t hi, uint32_t step = 1) {
    const uint32_t first = bits_of(std::nextafter(0.0f, 1.0f)), last = bits_of(1.0f);
    if (lo < first) lo = first;
    if (hi > last) hi = last;
    int64_t n = 0;
    for (uint64_t u = lo; u <= hi; u += step) {
      const float v = float_of(uint32_t(u));
      const uint32_t got = canny::threshold_codes(v, t), want = codes_by_definition(v, t);
      if (got != want) {
        ADD_FAILURE() << "v = " << v << " (bits " << u << "): codes " << got << ", by definition " << want;
        return -1;
      }
      ++n;
    }
    return n;
  }
  float t[canny::kMaxThreshold + 1];
};

TEST_F(ThresholdCodes, AroundEveryThreshold) {
  for (int k = 1; k <= canny::kMaxThreshold; ++k) {
    const uint32_t c = bits_of(t[k]);
    ASSERT_GT(check_range(c - 4096, c + 4096), 0) << "k = " << k;
    const uint32_t d = bits_of(float(double(k) / 100.0));
    ASSERT_GT(check_range(d - 4096, d + 4096), 0) << "k = " << k;
  }
}

TEST_F(ThresholdCodes, SampleOfTheWholeRange) {
  EXPECT_GT(check_range(0, bits_of(1.0f), 61), 17000000);
  EXPECT_EQ(canny::threshold_codes(1.0f, t), 100u | (99u << 8));
  EXPECT_EQ(canny::threshold_codes(std::nextafter(0.0f, 1.0f), t), 0u);
}

}  // namespace
