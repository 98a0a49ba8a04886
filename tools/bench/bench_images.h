// Shared by the GUD-Canny benchmarks (bench_canny_gpu.cu, bench_canny_npp.cu): the image record,
// the synthetic frames (smoothed noise with steps and circles: an edge structure at every scale; the same
// pixels for a seed on every machine). The median and the timing loop: tools/bench/bench_util.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

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

}  // namespace canny_bench
