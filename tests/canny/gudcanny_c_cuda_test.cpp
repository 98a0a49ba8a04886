// The cuda backend of the C interface (canny/gudcanny.h) against its cpu backend, byte for byte: edge map
// and pairs, both threshold modes, pitches and a bottom-up plane, several sizes. Skips without a GPU.
#include <gtest/gtest.h>

#include "gpu_test.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canny/gudcanny.h"

namespace {

std::vector<uint8_t> noise_scene(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> px(size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = ((x / 24 + y / 18) % 2 ? 170 : 60) + int(rng() % 21) - 10;
      if ((x - w / 2) * (x - w / 2) + (y - h / 2) * (y - h / 2) < h * h / 9) v = 230 - int(rng() % 7);
      px[size_t(y) * w + x] = uint8_t(v);
    }
  return px;
}

struct Output {
  std::vector<uint8_t> edges;
  std::vector<gudcanny_pair> pairs;
};

Output detect(int backend, const std::vector<uint8_t>& px, int w, int h, int thresholds, int step, bool bottom_up) {
  gudcanny_config cfg;
  gudcanny_config_default(&cfg, w, h);
  cfg.backend = backend;
  cfg.thresholds = thresholds;
  cfg.step = step;
  char err[256] = "";
  gudcanny_ctx* ctx = nullptr;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  Output r;
  if (!ctx) return r;
  EXPECT_EQ(gudcanny_backend(ctx), backend);
  r.edges.assign(size_t(w) * h, 0xA5);
  r.pairs.assign(size_t(gudcanny_pair_count(ctx)), gudcanny_pair{-1, -1, -1});
  const uint8_t* src = bottom_up ? &px[size_t(h - 1) * w] : px.data();
  EXPECT_EQ(gudcanny_detect(ctx, src, bottom_up ? -w : w, r.edges.data(), w, r.pairs.data(), err, sizeof err),
            GUDCANNY_OK)
      << err;
  gudcanny_destroy(ctx);
  return r;
}

TEST(GudCannyCCuda, CudaBackendMatchesCpu) {
  REQUIRE_GPU();
  const uint32_t seed = gpuec_test::test_seed("gudcanny_c_cuda_test");
  struct Size {
    int w, h;
  } sizes[] = {{1, 1}, {31, 7}, {33, 40}, {176, 144}, {1920, 1080}};
  for (const Size& s : sizes)
    for (int thresholds : {GUDCANNY_STRIP, GUDCANNY_FRAME})
      for (bool bottom_up : {false, true}) {
        SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + (thresholds ? " frame" : " strip") +
                     (bottom_up ? " bottom-up" : ""));
        const std::vector<uint8_t> px = noise_scene(s.w, s.h, seed);
        const Output cpu = detect(GUDCANNY_BACKEND_CPU, px, s.w, s.h, thresholds, 3, bottom_up);
        const Output gpu = detect(GUDCANNY_BACKEND_CUDA, px, s.w, s.h, thresholds, 3, bottom_up);
        ASSERT_EQ(cpu.edges.size(), gpu.edges.size());
        for (size_t i = 0; i < cpu.edges.size(); ++i)
          ASSERT_EQ(cpu.edges[i], gpu.edges[i]) << "first difference at x " << i % s.w << " y " << i / s.w;
        for (size_t i = 0; i < cpu.pairs.size(); ++i) {
          EXPECT_EQ(cpu.pairs[i].low, gpu.pairs[i].low) << "strip " << i;
          EXPECT_EQ(cpu.pairs[i].high, gpu.pairs[i].high) << "strip " << i;
          EXPECT_EQ(cpu.pairs[i].found, gpu.pairs[i].found) << "strip " << i;
        }
      }
}

}  // namespace
