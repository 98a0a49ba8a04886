// The asynchronous calls of the C interface (canny/gudcanny.h) on the cuda backend against gudcanny_detect
// on the cpu backend, byte for byte: depths 1..4 with frames in flight while the caller overwrites its
// planes, gudcanny_detect between the calls, MARK output, 1080p (not under compute-sanitizer); and the
// fall-back to the cpu forced by GPUEC_GUDCANNY_FAIL_AT_FRAME / _AT_SUBMIT with frames in flight: every
// frame still right, the failure reported once, the cpu from then on. Skips without a GPU.
// Built twice: gudcanny_async_cuda_test (the real backend; gpu) and, with GUDCANNY_FAKE_CUDA,
// gudcanny_async_fake_test (gpuec_gudcanny_fake: the same calls over a CPU stand-in of the backend that
// computes a frame only when it is waited for; unit, small sizes, no GPU needed).
#define GUDCANNY_SUITE GudCannyAsync
#include "cuda_suite.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "canny/gudcanny.h"
#include "frames.h"

namespace {

using gudcanny_test::Plane;
using gudcanny_test::Result;

gudcanny_ctx* create_cuda(const gudcanny_config& cfg) {
  char err[256] = "";
  gudcanny_ctx* ctx = nullptr;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  if (ctx) {
    EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CUDA);
  }
  return ctx;
}

int receive_frame(gudcanny_ctx* ctx, const Result& want, int w, int h, int t, std::string* message = nullptr) {
  return gudcanny_test::receive_and_check(ctx, want, w, h, "frame " + std::to_string(t), message);
}

SUITE_TEST(MatchesCpuDetect) {
  REQUIRE_CUDA();
  const uint32_t seed = gpuec_test::test_seed("gudcanny_async_cuda_test");
  struct Case {
    int w, h, thresholds, frames;
  } cases[] = {{1, 1, GUDCANNY_STRIP, 4}, {33, 40, GUDCANNY_FRAME, 6}, {176, 144, GUDCANNY_STRIP, 7},
               {1920, 1080, GUDCANNY_STRIP, 5}, {1920, 1080, GUDCANNY_FRAME, 3}};
  for (const Case& c : cases) {
    if (gudcanny_test::small_only() && c.w * c.h > 352 * 288) continue;
    std::vector<std::vector<uint8_t>> px;
    std::vector<Result> want;
    for (int t = 0; t < c.frames; ++t) {
      px.push_back(gudcanny_test::scene(c.w, c.h, t, seed));
      want.push_back(gudcanny_test::detect(gudcanny_test::config(c.w, c.h, GUDCANNY_BACKEND_CPU, 1, 3, c.thresholds),
                                           GUDCANNY_BACKEND_CPU, px.back()));
    }
    for (int depth : {1, 2, 4}) {
      SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + (c.thresholds ? " frame" : " strip") +
                   " depth " + std::to_string(depth));
      const gudcanny_config cfg = gudcanny_test::config(c.w, c.h, GUDCANNY_BACKEND_CUDA, depth, 3, c.thresholds);
      gudcanny_ctx* ctx = create_cuda(cfg);
      ASSERT_NE(ctx, nullptr);
      int next_in = 0, next_out = 0;
      char err[256];
      while (next_out < c.frames) {
        while (next_in < c.frames && gudcanny_pending(ctx) < depth) {
          Plane p = gudcanny_test::make_plane(px[size_t(next_in)], c.w, c.h, next_in % 2 ? -c.w : c.w + 7);
          ASSERT_EQ(gudcanny_submit(ctx, p.data(), p.pitch, err, sizeof err), GUDCANNY_OK) << err;
          std::memset(p.mem.data(), 0xEE, p.mem.size());  // reused at once: the slot has its own copy
          ++next_in;
        }
        if (next_out == 1) {  // a synchronous frame between the asynchronous ones
          std::vector<uint8_t> out(px[0].size());
          ASSERT_EQ(gudcanny_detect(ctx, px[0].data(), c.w, out.data(), c.w, nullptr, err, sizeof err), GUDCANNY_OK)
              << err;
          EXPECT_EQ(out, want[0].edges) << "gudcanny_detect with frames in flight";
        }
        ASSERT_EQ(receive_frame(ctx, want[size_t(next_out)], c.w, c.h, next_out), GUDCANNY_OK);
        ++next_out;
      }
      EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, nullptr, 0), GUDCANNY_EAGAIN);
      EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CUDA);
      gudcanny_destroy(ctx);
    }
  }
}

SUITE_TEST(MarkMatchesCpu) {
  REQUIRE_CUDA();
  const int w = gudcanny_test::small_only() ? 352 : 1920, h = gudcanny_test::small_only() ? 288 : 1080;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CUDA, 2);
  const std::vector<uint8_t> px = gudcanny_test::scene(w, h, 2);
  const Result want = gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px);
  gudcanny_ctx* ctx = create_cuda(cfg);
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(gudcanny_submit(ctx, px.data(), w, nullptr, 0), GUDCANNY_OK);
  const int out_pitch = w + 64;
  std::vector<uint8_t> out(size_t(out_pitch) * h, 0x44);
  for (int y = 0; y < h; ++y) std::memcpy(&out[size_t(y) * out_pitch], &px[size_t(y) * w], size_t(w));
  std::vector<gudcanny_pair> pairs(want.pairs.size() + 1, gudcanny_pair{-7, -7, -7});
  ASSERT_EQ(gudcanny_receive(ctx, out.data(), out_pitch, GUDCANNY_OUT_MARK, pairs.data(), nullptr, 0), GUDCANNY_OK);
  gudcanny_test::expect_same(want, out, w, h, out_pitch, pairs, "mark", 0x44, &px);
  gudcanny_destroy(ctx);
}

// Runs `frames` frames with one frame of delay (submit t, receive t-1), with GPUEC_GUDCANNY_`var`=`at` set
// while the context is made; every frame must equal the cpu's, exactly one call must return
// GUDCANNY_FELL_BACK (the one named `fell_back_in`, for frame `fell_back_at`), with the variable in its
// message, and the backend must be cuda before it and cpu from then on.
void forced_failure(const char* var, int at, const std::string& fell_back_in, int fell_back_at) {
  const int w = 352, h = 288, frames = 6;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CUDA, 2);
  const std::string name = std::string("GPUEC_GUDCANNY_") + var;
  ASSERT_EQ(setenv(name.c_str(), std::to_string(at).c_str(), 1), 0);
  gudcanny_ctx* ctx = create_cuda(cfg);
  unsetenv(name.c_str());
  ASSERT_NE(ctx, nullptr);
  std::vector<Result> want;
  int reports = 0;
  auto note = [&](int rc, const std::string& call, int t, const std::string& msg) {
    if (rc != GUDCANNY_FELL_BACK) return;
    ++reports;
    EXPECT_EQ(call, fell_back_in);
    EXPECT_EQ(t, fell_back_at);
    EXPECT_NE(msg.find(name + "=" + std::to_string(at)), std::string::npos) << msg;
    EXPECT_NE(msg.find("the output is unchanged"), std::string::npos) << msg;
  };
  for (int t = 0; t <= frames; ++t) {
    if (t < frames) {
      const std::vector<uint8_t> px = gudcanny_test::scene(w, h, t, 3);
      want.push_back(gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px));
      std::vector<uint8_t> copy = px;
      char err[512] = "";
      const int rc = gudcanny_submit(ctx, copy.data(), w, err, sizeof err);
      ASSERT_GE(rc, 0) << err;
      std::memset(copy.data(), 0, copy.size());
      note(rc, "submit", t, err);
    }
    if (t == 0) continue;
    std::string msg;
    const int rc = receive_frame(ctx, want[size_t(t - 1)], w, h, t - 1, &msg);
    ASSERT_GE(rc, 0) << msg;
    note(rc, "receive", t - 1, msg);
    EXPECT_EQ(gudcanny_backend(ctx), reports ? GUDCANNY_BACKEND_CPU : GUDCANNY_BACKEND_CUDA) << "after frame " << t - 1;
  }
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  gudcanny_destroy(ctx);
}

// Frame 2 fails when it is waited for, with frame 3 in flight on the GPU: both come out right.
SUITE_TEST(FailureAtWaitKeepsFramesInFlight) {
  REQUIRE_CUDA();
  forced_failure("FAIL_AT_FRAME", 2, "receive", 2);
}

// Frame 3 fails at its launch, with frame 2 in flight: frame 2 is done on the cpu from its kept plane.
SUITE_TEST(FailureAtSubmitKeepsFramesInFlight) {
  REQUIRE_CUDA();
  forced_failure("FAIL_AT_SUBMIT", 3, "submit", 3);
}

// gudcanny_detect fails (frame 1) while frame 0 is in flight: both right.
SUITE_TEST(FailureInDetectKeepsFramesInFlight) {
  REQUIRE_CUDA();
  const int w = 176, h = 144;
  const gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_CUDA, 2);
  ASSERT_EQ(setenv("GPUEC_GUDCANNY_FAIL_AT_FRAME", "1", 1), 0);
  gudcanny_ctx* ctx = create_cuda(cfg);
  unsetenv("GPUEC_GUDCANNY_FAIL_AT_FRAME");
  ASSERT_NE(ctx, nullptr);
  const std::vector<uint8_t> a = gudcanny_test::scene(w, h, 0), b = gudcanny_test::scene(w, h, 1);
  ASSERT_EQ(gudcanny_submit(ctx, a.data(), w, nullptr, 0), GUDCANNY_OK);
  std::vector<uint8_t> out(b.size());
  char err[512];
  ASSERT_EQ(gudcanny_detect(ctx, b.data(), w, out.data(), w, nullptr, err, sizeof err), GUDCANNY_FELL_BACK);
  EXPECT_NE(std::string(err).find("GPUEC_GUDCANNY_FAIL_AT_FRAME=1"), std::string::npos) << err;
  EXPECT_EQ(out, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, b).edges);
  EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CPU);
  ASSERT_EQ(receive_frame(ctx, gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, a), w, h, 0), GUDCANNY_OK);
  gudcanny_destroy(ctx);
}

}  // namespace
