// The C interface of GUD-Canny (canny/gudcanny.h): the cpu backend against detect_edges_ref (edge map and
// pairs; both threshold modes and candidate sets; pitches, bottom-up planes), argument errors, the backend
// choice without a GPU, and known answers for the macroblock edge-density regions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/gudcanny.h"
#include "gpu/device.h"
#include "gudcanny_config.h"

namespace {

// A scene with a disc, a dark square, a ramp and LCG noise: edges in several strips.
std::vector<uint8_t> scene(int w, int h) {
  std::vector<uint8_t> px(size_t(w) * h);
  uint32_t s = 12345;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      s = s * 1103515245u + 12345u;
      int v = 30 + x / 2 + int((s >> 16) % 13);
      if ((x - w / 3) * (x - w / 3) + (y - h / 2) * (y - h / 2) < (h / 3) * (h / 3)) v = 190 + int((s >> 16) % 9);
      if (x > 2 * w / 3 && x < 2 * w / 3 + 12 && y > 4 && y < 16) v = 10;
      px[size_t(y) * w + x] = uint8_t(v > 255 ? 255 : v);
    }
  return px;
}

struct Ref {
  std::vector<uint8_t> edges;
  std::vector<canny::ThresholdPair> pairs;
};

Ref reference(const std::vector<uint8_t>& px, int w, int h, float sigma, int step, bool frame) {
  std::vector<canny::CandidatePair> cands(size_t(canny::make_candidate_set(step, nullptr, 0)));
  canny::make_candidate_set(step, cands.data(), int(cands.size()));
  canny::Options opt;
  opt.sigma = sigma;
  opt.mode = frame ? canny::ThresholdMode::kFrame : canny::ThresholdMode::kStrip;
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());
  Ref r;
  r.edges.resize(px.size());
  r.pairs.resize(size_t(canny::strip_count(w)));
  std::vector<uint8_t> work(canny::workspace_bytes_ref(w, h));
  EXPECT_EQ(canny::detect_edges_ref(px.data(), w, h, w, opt, r.edges.data(), w, r.pairs.data(), work.data(),
                                    work.size()),
            canny::kOk);
  return r;
}

gudcanny_ctx* make(int w, int h, int backend, float sigma, int step, int thresholds, int* status, std::string* err,
                   int cpu_threads = 0) {
  gudcanny_config cfg = gudcanny_test::config(w, h, backend, /*depth=*/2, step, thresholds);
  cfg.sigma = sigma;
  cfg.cpu_threads = cpu_threads;
  char buf[256];
  std::memset(buf, 'x', sizeof buf);
  gudcanny_ctx* ctx = reinterpret_cast<gudcanny_ctx*>(uintptr_t{1});
  *status = gudcanny_create(&cfg, &ctx, buf, sizeof buf);
  *err = buf;
  if (*status != GUDCANNY_OK) {
    EXPECT_EQ(ctx, nullptr);
  }
  return ctx;
}

TEST(GudCannyC, Defaults) {
  gudcanny_config cfg;
  gudcanny_config_default(&cfg, 64, 48);
  EXPECT_EQ(cfg.width, 64);
  EXPECT_EQ(cfg.height, 48);
  EXPECT_EQ(cfg.backend, GUDCANNY_BACKEND_AUTO);
  EXPECT_EQ(cfg.device, 0);
  EXPECT_EQ(cfg.sigma, 1.0f);
  EXPECT_EQ(cfg.step, 3);
  EXPECT_EQ(cfg.thresholds, GUDCANNY_STRIP);
  EXPECT_EQ(cfg.cpu_threads, 0);
  EXPECT_STREQ(gudcanny_backend_name(GUDCANNY_BACKEND_CPU), "cpu");
  EXPECT_STREQ(gudcanny_backend_name(GUDCANNY_BACKEND_CUDA), "cuda");
  EXPECT_STREQ(gudcanny_backend_name(GUDCANNY_BACKEND_AUTO), "auto");
  EXPECT_STREQ(gudcanny_backend_name(7), "?");
  EXPECT_STREQ(gudcanny_backend_name(0), "?");
}

TEST(GudCannyC, CpuMatchesDetectEdgesRef) {
  struct Case {
    int w, h;
    float sigma;
    int step;
    int thresholds;
  } cases[] = {{70, 50, 1.0f, 3, GUDCANNY_STRIP}, {70, 50, 1.0f, 1, GUDCANNY_STRIP}, {70, 50, 0.7f, 3, GUDCANNY_FRAME},
               {32, 17, 2.0f, 3, GUDCANNY_STRIP}, {1, 1, 1.0f, 3, GUDCANNY_STRIP},   {33, 5, 0.1f, 5, GUDCANNY_FRAME}};
  for (const Case& c : cases)
  for (int cpu_threads : {0, 1, 3}) {  // every core, the calling thread only, three
    SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + " step " + std::to_string(c.step) + ", cpu_threads " +
                 std::to_string(cpu_threads));
    const std::vector<uint8_t> px = scene(c.w, c.h);
    const Ref ref = reference(px, c.w, c.h, c.sigma, c.step, c.thresholds == GUDCANNY_FRAME);
    int status;
    std::string err;
    gudcanny_ctx* ctx =
        make(c.w, c.h, GUDCANNY_BACKEND_CPU, c.sigma, c.step, c.thresholds, &status, &err, cpu_threads);
    ASSERT_EQ(status, GUDCANNY_OK) << err;
    EXPECT_EQ(err, "");
    EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CPU);
    ASSERT_EQ(gudcanny_pair_count(ctx), canny::strip_count(c.w));

    // Wider pitches with a canary in the padding, and a canary pair after the last.
    const int pitch = c.w + 5, out_pitch = c.w + 3;
    std::vector<uint8_t> in(size_t(pitch) * c.h, 77), out(size_t(out_pitch) * c.h, 0x5a);
    for (int y = 0; y < c.h; ++y) std::memcpy(&in[size_t(y) * pitch], &px[size_t(y) * c.w], size_t(c.w));
    std::vector<gudcanny_pair> pairs(ref.pairs.size() + 1, gudcanny_pair{-7, -7, -7});
    char buf[128] = "x";
    ASSERT_EQ(gudcanny_detect(ctx, in.data(), pitch, out.data(), out_pitch, pairs.data(), buf, sizeof buf), GUDCANNY_OK);
    EXPECT_STREQ(buf, "");
    for (int y = 0; y < c.h; ++y) {
      ASSERT_EQ(std::memcmp(&out[size_t(y) * out_pitch], &ref.edges[size_t(y) * c.w], size_t(c.w)), 0) << "row " << y;
      for (int x = c.w; x < out_pitch; ++x) ASSERT_EQ(out[size_t(y) * out_pitch + x], 0x5a) << "padding written";
    }
    for (size_t i = 0; i < ref.pairs.size(); ++i) {
      EXPECT_EQ(pairs[i].low, ref.pairs[i].low) << "strip " << i;
      EXPECT_EQ(pairs[i].high, ref.pairs[i].high) << "strip " << i;
      EXPECT_EQ(pairs[i].found, ref.pairs[i].found) << "strip " << i;
    }
    EXPECT_EQ(pairs.back().low, -7) << "pair written past the last strip";

    // Bottom-up source and destination (negative pitches): same map; no pairs wanted.
    std::vector<uint8_t> out2(size_t(c.w) * c.h, 1);
    ASSERT_EQ(gudcanny_detect(ctx, &in[size_t(c.h - 1) * pitch], -pitch, &out2[size_t(c.h - 1) * c.w], -c.w, nullptr,
                              nullptr, 0),
              GUDCANNY_OK);
    // Row y of the bottom-up source is row h-1-y of `in`, and it lands in row h-1-y of out2.
    std::vector<uint8_t> flipped(px.size());
    for (int y = 0; y < c.h; ++y) std::memcpy(&flipped[size_t(y) * c.w], &px[size_t(c.h - 1 - y) * c.w], size_t(c.w));
    const Ref ref_flipped = reference(flipped, c.w, c.h, c.sigma, c.step, c.thresholds == GUDCANNY_FRAME);
    for (int y = 0; y < c.h; ++y)
      ASSERT_EQ(std::memcmp(&out2[size_t(c.h - 1 - y) * c.w], &ref_flipped.edges[size_t(y) * c.w], size_t(c.w)), 0)
          << "bottom-up row " << y;
    gudcanny_destroy(ctx);
  }
  gudcanny_destroy(nullptr);
}

TEST(GudCannyC, ArgumentErrors) {
  int status;
  std::string err;
  EXPECT_EQ(make(0, 10, GUDCANNY_BACKEND_CPU, 1.0f, 3, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_EQ(status, GUDCANNY_EINVAL);
  EXPECT_NE(err.find("frame size"), std::string::npos) << err;
  EXPECT_EQ(make(40000, 10, GUDCANNY_BACKEND_CPU, 1.0f, 3, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_EQ(status, GUDCANNY_EINVAL);
  EXPECT_EQ(make(10, 10, GUDCANNY_BACKEND_CPU, 2.5f, 3, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_EQ(status, GUDCANNY_EINVAL);
  EXPECT_NE(err.find("sigma"), std::string::npos) << err;
  EXPECT_EQ(make(10, 10, GUDCANNY_BACKEND_CPU, 1.0f, 0, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_NE(err.find("step"), std::string::npos) << err;
  EXPECT_EQ(make(10, 10, GUDCANNY_BACKEND_CPU, 1.0f, 25, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_EQ(make(10, 10, GUDCANNY_BACKEND_CPU, 1.0f, 3, 2, &status, &err), nullptr);
  EXPECT_NE(err.find("thresholds"), std::string::npos) << err;
  for (int backend : {0, 4}) {  // 0 is gpu::Backend::kOff: not a gudcanny backend
    EXPECT_EQ(make(10, 10, backend, 1.0f, 3, GUDCANNY_STRIP, &status, &err), nullptr);
    EXPECT_NE(err.find("backend"), std::string::npos) << err;
  }
  for (int cpu_threads : {-1, 257}) {
    EXPECT_EQ(make(10, 10, GUDCANNY_BACKEND_CPU, 1.0f, 3, GUDCANNY_STRIP, &status, &err, cpu_threads), nullptr);
    EXPECT_EQ(status, GUDCANNY_EINVAL);
    EXPECT_NE(err.find("cpu_threads"), std::string::npos) << err;
  }
  gudcanny_ctx* ctx = nullptr;
  EXPECT_EQ(gudcanny_create(nullptr, &ctx, nullptr, 0), GUDCANNY_EINVAL);

  ctx = make(10, 10, GUDCANNY_BACKEND_CPU, 1.0f, 3, GUDCANNY_STRIP, &status, &err);
  ASSERT_EQ(status, GUDCANNY_OK);
  std::vector<uint8_t> in(100, 50), out(100);
  char buf[8];  // a short buffer: the message is cut, still terminated
  EXPECT_EQ(gudcanny_detect(ctx, in.data(), 9, out.data(), 10, nullptr, buf, sizeof buf), GUDCANNY_EINVAL);
  EXPECT_EQ(std::strlen(buf), sizeof buf - 1);
  EXPECT_EQ(gudcanny_detect(ctx, in.data(), 10, out.data(), -9, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_detect(ctx, nullptr, 10, out.data(), 10, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_detect(nullptr, in.data(), 10, out.data(), 10, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  gudcanny_destroy(ctx);
}

TEST(GudCannyC, BackendChoiceWithoutGpu) {
  std::string why;
  if (gpu::device_count(&why) > 0) GTEST_SKIP() << "skipped: a CUDA device is present";
  int status;
  std::string err;
  EXPECT_EQ(make(64, 48, GUDCANNY_BACKEND_CUDA, 1.0f, 3, GUDCANNY_STRIP, &status, &err), nullptr);
  EXPECT_EQ(status, GUDCANNY_EUNAVAILABLE);
  EXPECT_NE(err.find("cuda backend not available"), std::string::npos) << err;
  EXPECT_NE(err.find(why), std::string::npos) << err;
  gudcanny_ctx* ctx = make(64, 48, GUDCANNY_BACKEND_AUTO, 1.0f, 3, GUDCANNY_STRIP, &status, &err);
  ASSERT_EQ(status, GUDCANNY_OK) << err;
  EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CPU);
  char buf[256] = "";
  uint8_t plane[64 * 48] = {};
  EXPECT_EQ(gudcanny_submit_cuda(ctx, plane, 64, nullptr, 0, GUDCANNY_OUT_MAP, buf, sizeof buf), GUDCANNY_EUNAVAILABLE);
  EXPECT_NE(std::string(buf).find("cuda backend"), std::string::npos) << buf;
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  gudcanny_destroy(ctx);
  // A CUDA context of the caller (FFmpeg's CUDA frames) and no device: auto does not fall back to the cpu.
  int fake_context = 0;
  for (int backend : {GUDCANNY_BACKEND_AUTO, GUDCANNY_BACKEND_CUDA}) {
    gudcanny_config cfg;
    gudcanny_config_default(&cfg, 64, 48);
    cfg.backend = backend;
    cfg.cuda_context = &fake_context;
    ctx = reinterpret_cast<gudcanny_ctx*>(&fake_context);
    EXPECT_EQ(gudcanny_create(&cfg, &ctx, buf, sizeof buf), GUDCANNY_EUNAVAILABLE);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_NE(std::string(buf).find(why), std::string::npos) << buf;
  }
}

TEST(GudCannyC, CallerContextArgumentErrors) {
  int fake_context = 0, fake_stream = 0;
  gudcanny_config cfg;
  gudcanny_config_default(&cfg, 64, 48);
  EXPECT_EQ(cfg.cuda_context, nullptr);
  EXPECT_EQ(cfg.cuda_stream, nullptr);
  gudcanny_ctx* ctx = nullptr;
  char buf[256] = "";
  cfg.cuda_stream = &fake_stream;  // a stream needs its context
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, buf, sizeof buf), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(buf).find("stream"), std::string::npos) << buf;
  cfg.cuda_context = &fake_context;  // the cpu cannot read the caller's device frames
  cfg.backend = GUDCANNY_BACKEND_CPU;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, buf, sizeof buf), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(buf).find("backend cuda or auto"), std::string::npos) << buf;
  EXPECT_EQ(ctx, nullptr);
}

// 40 x 20: macroblocks 16/16/8 wide, 16/4 high.
TEST(GudCannyC, RoiRegionsKnownAnswers) {
  const int w = 40, h = 20;
  EXPECT_EQ(gudcanny_roi_capacity(w, h), 2 * 2);
  EXPECT_EQ(gudcanny_roi_capacity(0, h), 0);
  std::vector<uint8_t> e(size_t(w) * h, 0);
  gudcanny_rect r[8];
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, 0.0, r, 8), 0) << "no edge pixel: no region, even at density 0";
  auto set = [&](int x, int y) { e[size_t(y) * w + x] = 255; };
  set(3, 3);    // MB (0,0): 1 of 256
  set(20, 5);   // MB (1,0): 1 of 256
  set(39, 19);  // MB (2,1): 1 of 8 * 4 = 32
  int n = gudcanny_roi_regions(e.data(), w, w, h, 0.0, r, 8);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(r[0].left, 0);  // MBs (0,0) and (1,0) merged
  EXPECT_EQ(r[0].top, 0);
  EXPECT_EQ(r[0].right, 32);
  EXPECT_EQ(r[0].bottom, 16);
  EXPECT_EQ(r[1].left, 32);  // clipped to the frame
  EXPECT_EQ(r[1].top, 16);
  EXPECT_EQ(r[1].right, 40);
  EXPECT_EQ(r[1].bottom, 20);
  // 1/32 = 0.03125 passes 0.03, 1/256 does not.
  n = gudcanny_roi_regions(e.data(), w, w, h, 0.03, r, 8);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(r[0].left, 32);
  EXPECT_EQ(r[0].top, 16);
  // Exactly at the threshold: 8 of 256 = 0.03125 >= 0.03125.
  for (int x = 0; x < 7; ++x) set(x, 10);
  n = gudcanny_roi_regions(e.data(), w, w, h, 0.03125, r, 8);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(r[0].left, 0);
  EXPECT_EQ(r[0].right, 16);
  // Capacity: the count is returned, only `capacity` rectangles written.
  gudcanny_rect one[1] = {{-1, -1, -1, -1}};
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, 0.03125, one, 1), 2);
  EXPECT_EQ(one[0].right, 16);
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, 0.03125, nullptr, 0), 2);
  // Bottom-up edge map: row 0 at the end.
  std::vector<uint8_t> flipped(e.size());
  for (int y = 0; y < h; ++y) std::memcpy(&flipped[size_t(h - 1 - y) * w], &e[size_t(y) * w], size_t(w));
  EXPECT_EQ(gudcanny_roi_regions(&flipped[size_t(h - 1) * w], -w, w, h, 0.0, r, 8), 2);
  // Full density: every pixel of MB (2,0) set.
  for (int y = 0; y < 16; ++y)
    for (int x = 32; x < 40; ++x) set(x, y);
  n = gudcanny_roi_regions(e.data(), w, w, h, 1.0, r, 8);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(r[0].left, 32);
  EXPECT_EQ(r[0].top, 0);
  // Invalid arguments.
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, -0.1, r, 8), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, 1.5, r, 8), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, std::nan(""), r, 8), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w - 1, w, h, 0.5, r, 8), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_roi_regions(nullptr, w, w, h, 0.5, r, 8), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_roi_regions(e.data(), w, w, h, 0.5, nullptr, 8), GUDCANNY_EINVAL);
}

}  // namespace
