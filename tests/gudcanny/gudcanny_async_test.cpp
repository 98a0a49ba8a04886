// The asynchronous calls of the C interface (canny/gudcanny.h: gudcanny_submit, gudcanny_receive,
// gudcanny_pending) on the cpu backend against gudcanny_detect, frame by frame: depths 1..4, order,
// the flush at the end, pitches and bottom-up planes, the plane reused right after submit, the MARK
// output, gudcanny_detect between the calls, and the errors (nothing in flight, too many in flight, bad
// pitches and arguments; none of them consumes or loses a frame).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "canny/gudcanny.h"
#include "frames.h"

namespace {

using gudcanny_test::Plane;
using gudcanny_test::Result;

// Receives the oldest frame and compares it with `want` (frame number `t`, for the messages).
int receive_frame(gudcanny_ctx* ctx, const Result& want, int w, int h, int t) {
  return gudcanny_test::receive_and_check(ctx, want, w, h, "frame " + std::to_string(t));
}

gudcanny_ctx* create(const gudcanny_config& cfg) {
  char err[256] = "";
  gudcanny_ctx* ctx = nullptr;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  return ctx;
}

TEST(GudCannyAsync, DefaultDepthIsTwo) {
  gudcanny_config cfg;
  gudcanny_config_default(&cfg, 64, 48);
  EXPECT_EQ(cfg.depth, 2);
  EXPECT_EQ(gudcanny_pending(nullptr), 0);
}

// Frames go in as fast as the depth allows and come out in order, then the rest is flushed; every
// output equals gudcanny_detect's. Pitches alternate (padded, bottom-up, tight).
TEST(GudCannyAsync, CpuMatchesDetectInOrder) {
  struct Case {
    int w, h, step, thresholds;
  } cases[] = {{70, 50, 3, GUDCANNY_STRIP}, {33, 17, 1, GUDCANNY_FRAME}, {1, 1, 3, GUDCANNY_STRIP},
               {96, 40, 5, GUDCANNY_STRIP}};
  const int frames = 7;
  for (const Case& c : cases)
    for (int depth = 1; depth <= 4; ++depth) {
      const std::string what = std::to_string(c.w) + "x" + std::to_string(c.h) + " depth " + std::to_string(depth);
      SCOPED_TRACE(what);
      const gudcanny_config cfg = gudcanny_test::config(c.w, c.h, GUDCANNY_BACKEND_CPU, depth, c.step, c.thresholds);
      std::vector<Result> want;
      for (int t = 0; t < frames; ++t)
        want.push_back(gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, gudcanny_test::scene(c.w, c.h, t)));
      gudcanny_ctx* ctx = create(cfg);
      ASSERT_NE(ctx, nullptr);
      int next_in = 0, next_out = 0;
      char err[256];
      while (next_out < frames) {
        while (next_in < frames && gudcanny_pending(ctx) < depth) {
          const ptrdiff_t pitches[] = {c.w + 5, -c.w, c.w};
          Plane p = gudcanny_test::make_plane(gudcanny_test::scene(c.w, c.h, next_in), c.w, c.h, pitches[next_in % 3]);
          ASSERT_EQ(gudcanny_submit(ctx, p.data(), p.pitch, err, sizeof err), GUDCANNY_OK) << err;
          EXPECT_STREQ(err, "");
          std::memset(p.mem.data(), 0xEE, p.mem.size());  // the caller may reuse its plane at once
          ++next_in;
          EXPECT_EQ(gudcanny_pending(ctx), next_in - next_out);
        }
        ASSERT_EQ(receive_frame(ctx, want[size_t(next_out)], c.w, c.h, next_out), GUDCANNY_OK);
        ++next_out;
        EXPECT_EQ(gudcanny_pending(ctx), next_in - next_out);
      }
      EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EAGAIN);
      gudcanny_destroy(ctx);
    }
}

// One frame of delay, as the FFmpeg filter runs it: submit N, receive N-1; the last frame at the end.
TEST(GudCannyAsync, OneFrameDelay) {
  const int w = 64, h = 36, frames = 5;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CPU, 2);
  gudcanny_ctx* ctx = create(cfg);
  ASSERT_NE(ctx, nullptr);
  std::deque<Result> want;
  for (int t = 0; t < frames; ++t) {
    const std::vector<uint8_t> px = gudcanny_test::scene(w, h, t, 9);
    want.push_back(gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px));
    ASSERT_EQ(gudcanny_submit(ctx, px.data(), w, nullptr, 0), GUDCANNY_OK);
    if (t == 0) continue;
    ASSERT_EQ(receive_frame(ctx, want.front(), w, h, t - 1), GUDCANNY_OK);
    want.pop_front();
  }
  ASSERT_EQ(receive_frame(ctx, want.front(), w, h, frames - 1), GUDCANNY_OK);
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  gudcanny_destroy(ctx);
}

// GUDCANNY_OUT_MARK: 255 on edges, the picture elsewhere, padding untouched; also into a bottom-up picture.
TEST(GudCannyAsync, MarkDrawsTheEdgesOverThePicture) {
  const int w = 45, h = 30;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CPU, 2);
  const std::vector<uint8_t> px = gudcanny_test::scene(w, h, 3);
  const Result want = gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px);
  gudcanny_ctx* ctx = create(cfg);
  ASSERT_NE(ctx, nullptr);
  const std::vector<uint8_t> picture = gudcanny_test::scene(w, h, 11, 5);
  for (bool bottom_up : {false, true}) {
    SCOPED_TRACE(bottom_up ? "bottom-up" : "top-down");
    ASSERT_EQ(gudcanny_submit(ctx, px.data(), w, nullptr, 0), GUDCANNY_OK);
    const int out_pitch = w + 4;
    std::vector<uint8_t> out(size_t(out_pitch) * h, 0x33);
    for (int y = 0; y < h; ++y) std::memcpy(&out[size_t(y) * out_pitch], &picture[size_t(y) * w], size_t(w));
    std::vector<gudcanny_pair> pairs(want.pairs.size() + 1, gudcanny_pair{-7, -7, -7});
    if (!bottom_up) {
      ASSERT_EQ(gudcanny_receive(ctx, out.data(), out_pitch, GUDCANNY_OUT_MARK, pairs.data(), nullptr, 0), GUDCANNY_OK);
      gudcanny_test::expect_same(want, out, w, h, out_pitch, pairs, "mark", 0x33, &picture);
    } else {  // row y of the frame is row h-1-y of the buffer
      std::vector<uint8_t> flipped(out.size());
      for (int y = 0; y < h; ++y)
        std::memcpy(&flipped[size_t(h - 1 - y) * out_pitch], &out[size_t(y) * out_pitch], size_t(out_pitch));
      ASSERT_EQ(gudcanny_receive(ctx, &flipped[size_t(h - 1) * out_pitch], -out_pitch, GUDCANNY_OUT_MARK,
                                 pairs.data(), nullptr, 0),
                GUDCANNY_OK);
      for (int y = 0; y < h; ++y)
        std::memcpy(&out[size_t(y) * out_pitch], &flipped[size_t(h - 1 - y) * out_pitch], size_t(out_pitch));
      gudcanny_test::expect_same(want, out, w, h, out_pitch, pairs, "mark bottom-up", 0x33, &picture);
    }
  }
  gudcanny_destroy(ctx);
}

// gudcanny_detect between submit and receive: its own result, and the frames in flight are unchanged.
TEST(GudCannyAsync, DetectBetweenSubmitAndReceive) {
  const int w = 50, h = 40;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CPU, 2);
  gudcanny_ctx* ctx = create(cfg);
  ASSERT_NE(ctx, nullptr);
  const std::vector<uint8_t> a = gudcanny_test::scene(w, h, 0), b = gudcanny_test::scene(w, h, 1),
                             c = gudcanny_test::scene(w, h, 2);
  ASSERT_EQ(gudcanny_submit(ctx, a.data(), w, nullptr, 0), GUDCANNY_OK);
  ASSERT_EQ(gudcanny_submit(ctx, b.data(), w, nullptr, 0), GUDCANNY_OK);
  std::vector<uint8_t> out(a.size());
  ASSERT_EQ(gudcanny_detect(ctx, c.data(), w, out.data(), w, nullptr, nullptr, 0), GUDCANNY_OK);
  EXPECT_EQ(out, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, c).edges);
  EXPECT_EQ(gudcanny_pending(ctx), 2);
  ASSERT_EQ(receive_frame(ctx, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, a), w, h, 0), GUDCANNY_OK);
  ASSERT_EQ(receive_frame(ctx, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, b), w, h, 1), GUDCANNY_OK);
  gudcanny_destroy(ctx);
}

TEST(GudCannyAsync, Errors) {
  const int w = 20, h = 10;
  gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CPU, 0);
  gudcanny_ctx* ctx = nullptr;
  char err[256];
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(err).find("depth"), std::string::npos) << err;
  cfg.depth = 17;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(ctx, nullptr);
  cfg.depth = 2;
  ctx = create(cfg);
  ASSERT_NE(ctx, nullptr);

  const std::vector<uint8_t> a = gudcanny_test::scene(w, h, 0), b = gudcanny_test::scene(w, h, 1),
                             c = gudcanny_test::scene(w, h, 2);
  std::vector<uint8_t> out(size_t(w) * h);
  // Nothing in flight.
  EXPECT_EQ(gudcanny_receive(ctx, out.data(), w, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EAGAIN);
  EXPECT_NE(std::string(err).find("no frame in flight"), std::string::npos) << err;
  // Bad submissions take nothing.
  EXPECT_EQ(gudcanny_submit(ctx, a.data(), w - 1, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(err).find("pitch"), std::string::npos) << err;
  EXPECT_EQ(gudcanny_submit(ctx, a.data(), -(w - 1), nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit(ctx, nullptr, w, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit(nullptr, a.data(), w, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  // Depth 2: a third submission waits for a receive.
  ASSERT_EQ(gudcanny_submit(ctx, a.data(), w, nullptr, 0), GUDCANNY_OK);
  ASSERT_EQ(gudcanny_submit(ctx, b.data(), w, nullptr, 0), GUDCANNY_OK);
  EXPECT_EQ(gudcanny_submit(ctx, c.data(), w, err, sizeof err), GUDCANNY_EAGAIN);
  EXPECT_NE(std::string(err).find("receive one"), std::string::npos) << err;
  EXPECT_EQ(gudcanny_pending(ctx), 2);
  // Bad receives leave the frame in flight.
  EXPECT_EQ(gudcanny_receive(ctx, out.data(), w - 1, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_receive(ctx, out.data(), -(w - 1), GUDCANNY_OUT_MAP, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_receive(ctx, out.data(), w, 2, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(err).find("how"), std::string::npos) << err;
  EXPECT_EQ(gudcanny_receive(ctx, out.data(), w, -1, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_receive(nullptr, out.data(), w, GUDCANNY_OUT_MAP, nullptr, nullptr, 0), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_pending(ctx), 2);
  // out NULL drops the map; the pairs still come; then b, in order.
  const Result want_a = gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, a);
  std::vector<gudcanny_pair> pairs(want_a.pairs.size(), gudcanny_pair{-7, -7, -7});
  ASSERT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, pairs.data(), nullptr, 0), GUDCANNY_OK);
  for (size_t i = 0; i < pairs.size(); ++i) EXPECT_EQ(pairs[i].high, want_a.pairs[i].high) << "strip " << i;
  ASSERT_EQ(gudcanny_submit(ctx, c.data(), w, nullptr, 0), GUDCANNY_OK);
  ASSERT_EQ(receive_frame(ctx, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, b), w, h, 1), GUDCANNY_OK);
  // Destroyed with a frame in flight: dropped.
  EXPECT_EQ(gudcanny_pending(ctx), 1);
  gudcanny_destroy(ctx);
}

}  // namespace

namespace {

// gudcanny_receive_regions on the cpu backend: the regions of gudcanny_roi_regions over the map, in order
// with maps received between them; and its argument errors (the frame stays in flight).
TEST(GudCannyAsync, ReceiveRegionsMatchesRoiRegions) {
  const int w = 200, h = 72;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CPU, 3);
  char err[256] = "";
  gudcanny_ctx* ctx = nullptr;
  ASSERT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  std::vector<gudcanny_test::Result> want;
  for (int t = 0; t < 3; ++t) {
    const std::vector<uint8_t> px = gudcanny_test::scene(w, h, t, 5);
    want.push_back(gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px));
    ASSERT_EQ(gudcanny_submit(ctx, px.data(), w, err, sizeof err), GUDCANNY_OK) << err;
  }
  int count = 0;
  gudcanny_rect r[1];
  EXPECT_EQ(gudcanny_receive_regions(ctx, -0.1, r, 1, &count, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_receive_regions(ctx, 0.1, r, 1, nullptr, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_receive_regions(ctx, 0.1, nullptr, 2, &count, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_pending(ctx), 3);
  EXPECT_EQ(gudcanny_test::receive_regions_and_check(ctx, want[0], w, h, 0.1, "frame 0"), GUDCANNY_OK);
  EXPECT_EQ(gudcanny_test::receive_and_check(ctx, want[1], w, h, "frame 1"), GUDCANNY_OK);
  EXPECT_EQ(gudcanny_test::receive_regions_and_check(ctx, want[2], w, h, 0.0, "frame 2"), GUDCANNY_OK);
  EXPECT_EQ(gudcanny_receive_regions(ctx, 0.1, r, 1, &count, nullptr, err, sizeof err), GUDCANNY_EAGAIN);
  gudcanny_destroy(ctx);
}

}  // namespace
