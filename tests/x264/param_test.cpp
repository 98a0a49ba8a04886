// The patched libx264's option plumbing: x264_param_parse("gpu-entropy") (what FFmpeg's -x264-params
// uses), its default, its errors, and that the option stays out of the SEI options string.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" {
#include "x264.h"
// Internal to libx264 (common/base.c): the options string written into the SEI.
char* x264_param2string(x264_param_t* p, int b_res);
}

namespace {

TEST(X264Param, DefaultIsOff) {
  x264_param_t p;
  x264_param_default(&p);
  EXPECT_EQ(p.i_gpu_entropy, X264_GPU_ENTROPY_OFF);
}

TEST(X264Param, ParseAcceptsEveryBackendName) {
  const struct { const char* name; int value; } cases[] = {
      {"off", X264_GPU_ENTROPY_OFF}, {"cpu", X264_GPU_ENTROPY_CPU},
      {"cuda", X264_GPU_ENTROPY_CUDA}, {"auto", X264_GPU_ENTROPY_AUTO}};
  for (const auto& c : cases) {
    x264_param_t p;
    x264_param_default(&p);
    EXPECT_EQ(x264_param_parse(&p, "gpu-entropy", c.name), 0) << c.name;
    EXPECT_EQ(p.i_gpu_entropy, c.value) << c.name;
  }
  x264_param_t p;
  x264_param_default(&p);
  EXPECT_EQ(x264_param_parse(&p, "gpu_entropy", "cpu"), 0) << "x264 accepts '_' for '-' in keys";
  EXPECT_EQ(p.i_gpu_entropy, X264_GPU_ENTROPY_CPU);
}

TEST(X264Param, ParseRejectsBadValues) {
  x264_param_t p;
  x264_param_default(&p);
  EXPECT_EQ(x264_param_parse(&p, "gpu-entropy", "gpu"), X264_PARAM_BAD_VALUE);
  EXPECT_EQ(x264_param_parse(&p, "gpu-entropy", ""), X264_PARAM_BAD_VALUE);
  EXPECT_EQ(p.i_gpu_entropy, X264_GPU_ENTROPY_OFF);
}

TEST(X264Param, OptionIsNotInTheSeiOptionsString) {
  x264_param_t off, on;
  x264_param_default(&off);
  x264_param_default(&on);
  ASSERT_EQ(x264_param_parse(&on, "gpu-entropy", "cpu"), 0);
  char* a = x264_param2string(&off, 0);
  char* b = x264_param2string(&on, 0);
  ASSERT_TRUE(a && b);
  EXPECT_STREQ(a, b);
  EXPECT_EQ(std::string(b).find("gpu"), std::string::npos) << b;
  std::free(a);
  std::free(b);
}

}  // namespace

namespace {

struct LogCapture {
  std::string text;
};

void capture_log(void* priv, int level, const char* fmt, va_list args) {
  if (level > X264_LOG_INFO) return;
  char line[1024];
  std::vsnprintf(line, sizeof line, fmt, args);
  static_cast<LogCapture*>(priv)->text += line;
}

void ignore_nal(x264_t*, x264_nal_t*, void*) {}

// Encodes `frames` synthetic 176x144 frames through the library API; returns the stream bytes.
std::string encode_api(const char* gpu_entropy, int frames, LogCapture* log, bool with_nalu_process = false) {
  x264_param_t p;
  x264_param_default_preset(&p, "medium", nullptr);
  p.i_width = 176;
  p.i_height = 144;
  p.i_csp = X264_CSP_I420;
  p.i_threads = 1;
  p.rc.i_rc_method = X264_RC_CQP;
  p.rc.i_qp_constant = 20;
  p.pf_log = capture_log;
  p.p_log_private = log;
  p.i_log_level = X264_LOG_INFO;
  if (with_nalu_process) p.nalu_process = ignore_nal;
  EXPECT_EQ(x264_param_parse(&p, "gpu-entropy", gpu_entropy), 0);
  EXPECT_EQ(x264_param_apply_profile(&p, "baseline"), 0);
  x264_t* h = x264_encoder_open(&p);
  if (!h) return "open failed";
  x264_picture_t pic, out;
  x264_picture_alloc(&pic, X264_CSP_I420, 176, 144);
  std::string stream;
  uint32_t rng = 12345;
  for (int f = 0; f <= frames; ++f) {
    x264_nal_t* nal = nullptr;
    int n = 0, size;
    if (f < frames) {
      for (int plane = 0; plane < 3; ++plane) {
        const int w = plane ? 88 : 176, hh = plane ? 72 : 144;
        for (int y = 0; y < hh; ++y)
          for (int x = 0; x < w; ++x) {
            rng = rng * 1664525u + 1013904223u;
            pic.img.plane[plane][y * pic.img.i_stride[plane] + x] =
                static_cast<uint8_t>(((x + 3 * f) * 5 ^ y * 3) + (rng >> 29));
          }
      }
      pic.i_pts = f;
      size = x264_encoder_encode(h, &nal, &n, &pic, &out);
    } else {
      while ((size = x264_encoder_delayed_frames(h) ? x264_encoder_encode(h, &nal, &n, nullptr, &out) : 0) > 0)
        for (int i = 0; i < n; ++i) stream.append(reinterpret_cast<char*>(nal[i].p_payload), nal[i].i_payload);
      break;
    }
    EXPECT_GE(size, 0);
    for (int i = 0; i < n; ++i) stream.append(reinterpret_cast<char*>(nal[i].p_payload), nal[i].i_payload);
  }
  x264_picture_clean(&pic);
  x264_encoder_close(h);
  return stream;
}

TEST(X264Api, StageOnIsByteIdenticalThroughTheLibrary) {
  LogCapture off_log, on_log;
  const std::string off = encode_api("off", 6, &off_log);
  const std::string on = encode_api("cpu", 6, &on_log);
  ASSERT_GT(off.size(), 1000u);
  EXPECT_TRUE(off == on) << "sizes " << off.size() << " / " << on.size();
  EXPECT_EQ(off_log.text.find("gpu-entropy"), std::string::npos) << off_log.text;
  EXPECT_NE(on_log.text.find("gpu-entropy: cpu stage on"), std::string::npos) << on_log.text;
  EXPECT_NE(on_log.text.find("gpu-entropy: cpu stage coded 6 slices, 594 macroblocks"), std::string::npos)
      << on_log.text;
}

TEST(X264Api, NaluProcessCallbackFallsBackOnce) {
  LogCapture log;
  encode_api("cpu", 2, &log, true);
  const std::string want = "gpu-entropy: the nalu_process callback needs finished slices; the stage is off";
  const size_t at = log.text.find(want);
  ASSERT_NE(at, std::string::npos) << log.text;
  EXPECT_EQ(log.text.find(want, at + 1), std::string::npos) << "said more than once";
  EXPECT_EQ(log.text.find("stage coded"), std::string::npos) << log.text;
}

// 4:4:4, 4:2:2 and 4:0:0 input: the fallback's reason names the chroma format (these formats force a profile
// above baseline, and the profile used to be named instead).
TEST(X264Api, ChromaFormatFallbackNamesTheFormat) {
  const struct {
    int csp;
    const char* want;
  } cases[] = {
      {X264_CSP_I444, "gpu-entropy: only 4:2:0 8-bit is supported, not 4:4:4 input; the stage is off"},
      {X264_CSP_I422, "gpu-entropy: only 4:2:0 8-bit is supported, not 4:2:2 input; the stage is off"},
      {X264_CSP_I400, "gpu-entropy: only 4:2:0 8-bit is supported, not 4:0:0 (gray) input; the stage is off"},
  };
  for (const auto& c : cases) {
    LogCapture log;
    x264_param_t p;
    x264_param_default_preset(&p, "medium", nullptr);
    p.i_width = 176;
    p.i_height = 144;
    p.i_csp = c.csp;
    p.b_cabac = 0;  // CAVLC: the chroma format is the one reason left
    p.i_threads = 1;
    p.rc.i_rc_method = X264_RC_CQP;
    p.rc.i_qp_constant = 20;
    p.pf_log = capture_log;
    p.p_log_private = &log;
    p.i_log_level = X264_LOG_INFO;
    EXPECT_EQ(x264_param_parse(&p, "gpu-entropy", "cpu"), 0);
    x264_t* h = x264_encoder_open(&p);
    ASSERT_NE(h, nullptr) << c.want;
    x264_encoder_close(h);
    EXPECT_NE(log.text.find(c.want), std::string::npos) << log.text;
  }
}

}  // namespace
