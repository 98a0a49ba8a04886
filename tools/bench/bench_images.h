// Shared by the GUD-Canny benchmarks (bench_canny_gpu.cu, bench_canny_npp.cu, canny_lows_work.cpp): the image
// record, the synthetic frames (smoothed noise with steps and circles: an edge structure at every scale; the same
// pixels for a seed on every machine) and the benchmarks' image list (benchmark_images). The median and the timing
// loop: tools/bench/bench_util.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "pgm.h"  // tests/common

namespace canny_bench {

struct Image {
  std::string name;
  int w = 0, h = 0;
  std::vector<uint8_t> px;
};

inline Image synthetic(const std::string& name, int w, int h, uint32_t seed) {
  Image im{name, w, h, std::vector<uint8_t>(size_t(w) * h)};
  std::mt19937 rng(seed);
  std::vector<float> f(size_t(w) * h);
  for (auto& v : f) v = float(rng() % 64);
  for (int c = 0; c < 24; ++c) {
    const float cx = float(rng() % w), cy = float(rng() % h), r = float(20 + rng() % (h / 4)), add = float(rng() % 150);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r) f[size_t(y) * w + x] += add;
  }
  for (size_t i = 0; i < f.size(); ++i) im.px[i] = uint8_t(std::min(255.0f, f[i]));
  return im;
}

// The benchmarks' images: the named PGMs of GPUEC_SHARED_DIR/images/standard that can be read (none without
// GPUEC_SHARED_DIR), then the synthetic 1080p and 2160p frames.
inline std::vector<Image> benchmark_images(std::initializer_list<const char*> standard) {
  std::vector<Image> images;
  if (const char* dir = std::getenv("GPUEC_SHARED_DIR")) {
    for (const char* n : standard) {
      Image im;
      im.name = n;
      if (canny_test::read_pgm(std::string(dir) + "/images/standard/" + n, &im.w, &im.h, &im.px))
        images.push_back(std::move(im));
    }
  }
  images.push_back(synthetic("synthetic_1920x1080", 1920, 1080, 1));
  images.push_back(synthetic("synthetic_3840x2160", 3840, 2160, 2));
  return images;
}

}  // namespace canny_bench
