// gudcanny_roi_regions (canny/gudcanny.h) against a direct count, macroblock by macroblock, on random edge
// maps: sizes around 16 and around its 4096-column chunks, pitches with padding, bottom-up maps, densities
// 0..1 and short capacities (the count is still returned, only `capacity` rectangles written).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "canny/gudcanny.h"
#include "test_seed.h"

namespace {

// The contract written out: every macroblock counted on its own, runs merged per macroblock row.
std::vector<gudcanny_rect> direct(const uint8_t* e, ptrdiff_t pitch, int w, int h, double density) {
  std::vector<gudcanny_rect> out;
  const int mbw = (w + 15) / 16, mbh = (h + 15) / 16;
  for (int my = 0; my < mbh; ++my) {
    const int y0 = my * 16, y1 = std::min(h, y0 + 16);
    int start = -1;
    for (int mx = 0; mx <= mbw; ++mx) {
      bool sel = false;
      if (mx < mbw) {
        const int x0 = mx * 16, x1 = std::min(w, x0 + 16);
        int count = 0;
        for (int y = y0; y < y1; ++y)
          for (int x = x0; x < x1; ++x) count += e[y * pitch + x] != 0;
        sel = count > 0 && double(count) >= density * double((x1 - x0) * (y1 - y0));
      }
      if (sel && start < 0) start = mx;
      if (!sel && start >= 0) {
        out.push_back({start * 16, y0, std::min(w, mx * 16), y1});
        start = -1;
      }
    }
  }
  return out;
}

TEST(GudCannyRoi, MatchesDirectCount) {
  const uint32_t seed = gpuec_test::test_seed("roi_regions_test");
  std::mt19937 rng(seed);
  for (int it = 0; it < 600; ++it) {
    int w = 1 + int(rng() % 120), h = 1 + int(rng() % 60);
    if (it % 50 == 0) w = 4096 - 17 + int(rng() % 40);  // around the chunk width
    if (it % 97 == 0) w = 8192 + 16 + int(rng() % 20);
    const int pitch = w + int(rng() % 7);
    const bool bottom_up = rng() % 2;
    const int percent = int(rng() % 101);
    std::vector<uint8_t> e(size_t(pitch) * h);
    for (auto& v : e) v = int(rng() % 100) < percent ? uint8_t(1 + rng() % 255) : 0;
    const double density = rng() % 4 == 0 ? 0.0 : double(rng() % 1001) / 1000.0;
    const uint8_t* first = bottom_up ? &e[size_t(h - 1) * pitch] : e.data();
    const ptrdiff_t p = bottom_up ? -pitch : pitch;
    const std::vector<gudcanny_rect> want = direct(first, p, w, h, density);
    const int capacity = rng() % 3 ? gudcanny_roi_capacity(w, h) : int(rng() % 4);
    std::vector<gudcanny_rect> got(size_t(capacity) + 1, gudcanny_rect{-1, -1, -1, -1});
    const int n = gudcanny_roi_regions(first, p, w, h, density, got.data(), capacity);
    SCOPED_TRACE("case " + std::to_string(it) + ": " + std::to_string(w) + "x" + std::to_string(h) + " pitch " +
                 std::to_string(p) + " density " + std::to_string(density) + ", seed " + std::to_string(seed));
    ASSERT_EQ(n, int(want.size()));
    ASSERT_LE(n, gudcanny_roi_capacity(w, h));
    for (int i = 0; i < std::min(n, capacity); ++i) {
      EXPECT_EQ(got[size_t(i)].left, want[size_t(i)].left) << "region " << i;
      EXPECT_EQ(got[size_t(i)].top, want[size_t(i)].top) << "region " << i;
      EXPECT_EQ(got[size_t(i)].right, want[size_t(i)].right) << "region " << i;
      EXPECT_EQ(got[size_t(i)].bottom, want[size_t(i)].bottom) << "region " << i;
    }
    EXPECT_EQ(got[size_t(std::min(n, capacity))].left, -1) << "written past min(count, capacity)";
  }
}

}  // namespace
