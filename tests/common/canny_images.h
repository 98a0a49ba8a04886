// Test images for the GUD-Canny tests (tests/canny) and gpuec-bitexact's canny pairs: an 8-bit image of pitch w,
// the random-structure content both draw, and the standard candidate sets of canny::make_candidate_set.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "canny/canny.h"

namespace canny_test {

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // pitch w
  Image(int w_, int h_) : w(w_), h(h_), px(size_t(w_) * h_, 0) {}
  uint8_t& at(int x, int y) { return px[size_t(y) * w + x]; }
};

inline uint8_t clamp255(double v) { return uint8_t(std::min(255.0, std::max(0.0, std::round(v)))); }

// Random structure into img: a shaded background, min_shapes + rng() % shape_range shapes (rectangles, discs,
// lines), mild noise.
inline void paint_structure(std::mt19937& rng, Image& img, int min_shapes, int shape_range) {
  const int w = img.w, h = img.h;
  std::uniform_real_distribution<double> u(0, 1);
  const double gx = u(rng) * 60 - 30, gy = u(rng) * 60 - 30, base = 60 + u(rng) * 100;
  std::vector<double> f(size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) f[size_t(y) * w + x] = base + gx * x / w + gy * y / h;
  const int shapes = min_shapes + int(rng() % unsigned(shape_range));
  for (int k = 0; k < shapes; ++k) {
    const double cx = u(rng) * w, cy = u(rng) * h, r = 2 + u(rng) * std::max(4, std::min(w, h) / 4);
    const double val = u(rng) * 255;
    const int kind = int(rng() % 3);
    for (int y = std::max(0, int(cy - r)); y < std::min(h, int(cy + r) + 1); ++y)
      for (int x = std::max(0, int(cx - r)); x < std::min(w, int(cx + r) + 1); ++x) {
        const bool in = kind == 0 ? true : kind == 1 ? std::hypot(x - cx, y - cy) <= r : std::abs((x - cx) - (y - cy)) < 2;
        if (in) f[size_t(y) * w + x] = val;
      }
  }
  for (size_t i = 0; i < f.size(); ++i) img.px[i] = clamp255(f[i] + (int(rng() % 9) - 4));
}

// The candidate set of make_candidate_set(step).
inline std::vector<canny::CandidatePair> standard_set(int step) {
  std::vector<canny::CandidatePair> c(size_t(canny::make_candidate_set(step, nullptr, 0)));
  canny::make_candidate_set(step, c.data(), int(c.size()));
  return c;
}

}  // namespace canny_test
