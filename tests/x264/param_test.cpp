// The patched libx264's option plumbing: x264_param_parse("gpu-entropy") (what FFmpeg's -x264-params
// uses), its default, its errors, and that the option stays out of the SEI options string.
#include <gtest/gtest.h>

#include <cstdint>
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
