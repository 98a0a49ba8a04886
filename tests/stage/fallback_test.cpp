// The cuda backend's fallback (gpuec/stage.h): GPUEC_CUDA_FAIL_AT_FRAME makes the N-th frame part fail on
// purpose; every part must still come out right, the failure is reported exactly once, and every stage
// of the process (this one and later ones) codes on the CPU from then on. Its own test program: the
// failure is process-wide by design.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "stage_parts.h"
#include "gpu_test.h"

namespace {

TEST(StageFallback, ForcedFailureKeepsEveryPartCorrectAndReportsOnce) {
  REQUIRE_GPU();
  ASSERT_EQ(setenv("GPUEC_CUDA_FAIL_AT_FRAME", "2", 1), 0);
  const uint32_t seed = gpuec_test::test_seed("fallback_test");
  std::mt19937 rng(seed);
  char note[256];
  gpuec_stage* st = gpuec_stage_create(22, 18, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr) << note;
  ASSERT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CUDA) << note;
  int notes = 0;
  for (int part = 0; part < 6; ++part) {
    const stage_test::Part p = stage_test::make_part(rng, 22, 0, 22 * 18, {100, 200}, 30);
    stage_test::run_part(st, p, "part " + std::to_string(part) + ", seed " + std::to_string(seed));
    char text[256];
    if (gpuec_stage_note(st, text, sizeof text)) {
      ++notes;
      EXPECT_EQ(part, 2) << "the failure was forced at part 2";
      EXPECT_NE(std::string(text).find("GPUEC_CUDA_FAIL_AT_FRAME=2"), std::string::npos) << text;
    }
    EXPECT_EQ(gpuec_stage_backend(st), part < 2 ? GPUEC_BACKEND_CUDA : GPUEC_BACKEND_CPU) << "after part " << part;
  }
  EXPECT_EQ(notes, 1);
  // The failed cuda coder stays with the stage until it goes, and is counted (gpuec_stage_memory).
  int64_t device = 0, pinned = 0;
  gpuec_stage_memory(st, &device, &pinned);
  EXPECT_GT(device, 0);
  EXPECT_GT(pinned, 0);
  gpuec_stage_destroy(st);
  // A stage created after the failure does not try CUDA again.
  st = gpuec_stage_create(22, 18, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CPU);
  EXPECT_NE(std::string(note).find("failed earlier"), std::string::npos) << note;
  stage_test::run_part(st, stage_test::make_part(rng, 22, 0, 22 * 18, {}, 10), "after the failure");
  gpuec_stage_memory(st, &device, &pinned);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(pinned, 0);
  gpuec_stage_destroy(st);
}

}  // namespace
