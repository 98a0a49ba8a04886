// The stage's frame-part interface (gpuec/stage.h: gpuec_slice_defer, gpuec_frame_submit,
// gpuec_frame_complete, gpuec_frame_slice) against the slice coder (cavlc::encode_slice_ref) plus
// rbsp_slice_trailing_bits, with every backend this machine has: cpu always, cuda with a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include <chrono>
#include <string>

#include "raster.h"
#include "stage_parts.h"
#include "gpu_test.h"

namespace {

using stage_test::backends;
using stage_test::layouts;
using stage_test::make_part;
using stage_test::Part;
using stage_test::run_part;

#ifdef STAGE_TEST_CUDA
#define REQUIRE_BACKEND() REQUIRE_GPU()
#else
#define REQUIRE_BACKEND() (void)0
#endif

TEST(StageFrame, EveryBackendMatchesTheSliceCoder) {
  REQUIRE_BACKEND();
  const uint32_t seed = gpuec_test::test_seed("frame_test");
  std::mt19937 rng(seed);
  const int sizes[][2] = {{1, 1}, {2, 1}, {3, 5}, {11, 9}, {22, 18}, {45, 36}, {120, 68}};
  for (int backend : backends()) {
    for (const auto& sz : sizes) {
      char note[256];
      gpuec_stage* st = gpuec_stage_create(sz[0], sz[1], backend, 0, note, sizeof note);
      ASSERT_NE(st, nullptr) << note;
      EXPECT_EQ(gpuec_stage_backend(st), backend) << note;
      for (const auto& cuts : layouts(rng, sz[0], sz[0] * sz[1])) {
        for (int density : {5, 40})
          for (stage_test::Commit how : {stage_test::Commit::kWithBuffer, stage_test::Commit::kWithoutBuffer}) {
            const Part p = make_part(rng, sz[0], 0, sz[0] * sz[1], cuts, density);
            run_part(st, p,
                     std::string(gpuec_backend_name(backend)) + " " + std::to_string(sz[0]) + "x" +
                         std::to_string(sz[1]) + " MBs, " + std::to_string(cuts.size() + 1) + " slices, seed " +
                         std::to_string(seed) + (how == stage_test::Commit::kWithBuffer ? ", buffer" : ", no buffer"),
                     nullptr, false, how);
          }
      }
      char unreported[256];
      EXPECT_EQ(gpuec_stage_note(st, unreported, sizeof unreported), 0);
      gpuec_stage_destroy(st);
    }
  }
}

// Without GPUEC_CUDA_WAIT_AT_OPEN the cuda coder is created in the background: the stage says cuda at once,
// codes on the cpu meanwhile, and the first frame part after the coder is ready runs on the GPU (it then
// holds device memory). Every part gives the slice coder's bytes, before and after; destroying a stage whose
// coder is still being created waits for it.
TEST(StageFrame, CudaCoderFromTheBackgroundTakesOver) {
  REQUIRE_GPU();
  const uint32_t seed = gpuec_test::test_seed("frame_test") + 3;
  std::mt19937 rng(seed);
  unsetenv("GPUEC_CUDA_WAIT_AT_OPEN");
  char note[256];
  gpuec_stage_destroy(gpuec_stage_create(45, 36, GPUEC_BACKEND_CUDA, 0, note, sizeof note));
  gpuec_stage* st = gpuec_stage_create(45, 36, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  setenv("GPUEC_CUDA_WAIT_AT_OPEN", "1", 1);
  ASSERT_NE(st, nullptr) << note;
  EXPECT_STREQ(note, "");
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CUDA);
  int64_t device = 0, pinned = 0;
  int parts = 0, after = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (after < 3 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    const std::vector<std::vector<int>> cuts = layouts(rng, 45, 45 * 36);
    const Part p = make_part(rng, 45, 0, 45 * 36, cuts[size_t(parts) % cuts.size()], 20);
    run_part(st, p, "part " + std::to_string(parts) + ", seed " + std::to_string(seed));
    ++parts;
    gpuec_stage_memory(st, &device, &pinned);
    after += device > 0;
    EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CUDA);
  }
  EXPECT_EQ(after, 3) << "the cuda coder never took over (" << parts << " parts)";
  char unreported[256];
  EXPECT_EQ(gpuec_stage_note(st, unreported, sizeof unreported), 0) << unreported;
  gpuec_stage_destroy(st);
}

// Records with their levels in raster order (gpuec_mb.coef_order), mixed with scan-order ones, give the
// slices the slice coder gives for the scan-order records.
TEST(StageFrame, RasterOrderRecordsGiveTheSameSlices) {
  REQUIRE_BACKEND();
  const uint32_t seed = gpuec_test::test_seed("frame_test") + 7;
  std::mt19937 rng(seed);
  const int sizes[][2] = {{1, 1}, {11, 9}, {45, 36}, {120, 68}};
  int moved = 0;
  for (int backend : backends()) {
    for (const auto& sz : sizes) {
      char note[256];
      gpuec_stage* st = gpuec_stage_create(sz[0], sz[1], backend, 0, note, sizeof note);
      ASSERT_NE(st, nullptr) << note;
      for (const auto& cuts : layouts(rng, sz[0], sz[0] * sz[1])) {
        for (int density : {5, 40, 100}) {
          const Part p = make_part(rng, sz[0], 0, sz[0] * sz[1], cuts, density);
          Part r = p;
          r.recs = cavlc_test::mixed_orders(p.recs, rng, 70);
          for (const gpuec_mb& m : p.recs) moved += cavlc_test::raster_differs(m);
          run_part(st, r, std::string(gpuec_backend_name(backend)) + " " + std::to_string(sz[0]) + "x" +
                              std::to_string(sz[1]) + " MBs, raster and scan records, seed " + std::to_string(seed),
                   &p);
          if (HasFailure()) break;
        }
      }
      gpuec_stage_destroy(st);
    }
  }
  EXPECT_GT(moved, 1000) << "too few records whose levels move between the orders: the test could not fail";
}

// fn(stage, rng, what) on a w x h stage of every backend of this program, rng seeded with the test seed;
// `what` names the backend and the seed, for the failure messages.
template <class Fn>
void for_each_stage(int w, int h, Fn fn) {
  const uint32_t seed = gpuec_test::test_seed("frame_test");
  std::mt19937 rng(seed);
  for (int backend : backends()) {
    char note[256];
    gpuec_stage* st = gpuec_stage_create(w, h, backend, 0, note, sizeof note);
    ASSERT_NE(st, nullptr) << note;
    fn(st, rng, std::string(gpuec_backend_name(backend)) + " (seed " + std::to_string(seed) + ")");
    gpuec_stage_destroy(st);
  }
}

// The commit's answers (gpuec_mb_commit): cavlc::mb_totals's totals; an overflowing record sent back and
// dropped, a malformed one refused, and the record committed next into the same slot coded as if they had
// never been there (the cpu backend codes at commit: the dropped bits must not reach the slice).
TEST(StageFrame, CommitGivesTheTotalsAndDropsOverflowingRecords) {
  REQUIRE_BACKEND();
  const int sizes[][2] = {{1, 1}, {3, 5}, {22, 18}};
  for (const auto& sz : sizes)
    for_each_stage(sz[0], sz[1], [&](gpuec_stage* st, std::mt19937& rng, const std::string& what) {
      for (const auto& cuts : layouts(rng, sz[0], sz[0] * sz[1]))
        for (int density : {5, 40, 100})
          for (stage_test::Commit how : {stage_test::Commit::kWithBuffer, stage_test::Commit::kWithoutBuffer}) {
            run_part(st, make_part(rng, sz[0], 0, sz[0] * sz[1], cuts, density),
                     what + " " + std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + ", probed commits" +
                         (how == stage_test::Commit::kWithBuffer ? ", buffer" : ", no buffer"),
                     nullptr, true, how);
            if (::testing::Test::HasFailure()) return;
          }
      int64_t overflows = 0;
      gpuec_stage_counts(st, nullptr, nullptr, &overflows);
      EXPECT_GT(overflows, 0) << what;
    });
}

// x264 --sliced-threads: each thread context's stage sees whole rows in the middle of the frame.
TEST(StageFrame, PartsOfRowsInsideTheFrame) {
  REQUIRE_BACKEND();
  for_each_stage(20, 12, [&](gpuec_stage* st, std::mt19937& rng, const std::string& what) {
    for (int r0 : {0, 3, 11}) {
      const int rows = std::min(4, 12 - r0);
      for (const auto& cuts : layouts(rng, 20, rows * 20)) {
        const Part p = make_part(rng, 20, r0 * 20, rows * 20, cuts, 20);
        run_part(st, p, what + ": rows from " + std::to_string(r0));
      }
    }
  });
}

// A slice that the encoder abandons (begins again) and parts that are not whole rows still come out right.
TEST(StageFrame, AbandonedSliceAndPartsThatAreNotWholeRows) {
  REQUIRE_BACKEND();
  for_each_stage(9, 4, [&](gpuec_stage* st, std::mt19937& rng, const std::string& what) {
    for (stage_test::Commit how : {stage_test::Commit::kWithBuffer, stage_test::Commit::kWithoutBuffer}) {
      const Part p = make_part(rng, 9, 5, 20, {7}, 30);  // starts mid-row, ends mid-row
      // Abandon a first attempt at the first slice after three macroblocks.
      gpuec_slice_begin(st, p.slices[0].first_mb, p.slices[0].start_bit);
      for (int i = 0; i < 3; ++i) {
        const gpuec_mb& m = p.recs[static_cast<size_t>(i)];
        if (m.kind == GPUEC_MB_SKIP) {
          ASSERT_EQ(gpuec_mb_skip(st, m.mb_addr), GPUEC_OK);
        } else {
          *gpuec_mb_next(st) = m;
          uint8_t totals[GPUEC_TC_COUNT];
          ASSERT_EQ(stage_test::commit(st, totals, p, how), GPUEC_OK);
        }
      }
      run_part(st, p, what + ": mid-row part" + (how == stage_test::Commit::kWithBuffer ? ", buffer" : ", no buffer"),
               nullptr, false, how);
    }
  });
}

// An abandoned attempt whose macroblocks were coded where the second attempt skips them: the cpu coder,
// which keeps the kinds for the neighbours' commits, must see the second attempt's skips (a stale kind
// would give a skipped neighbour its old TotalCoeff, and the slice other bits).
TEST(StageFrame, AbandonedSliceWithOtherSkips) {
  REQUIRE_BACKEND();
  for_each_stage(9, 4, [&](gpuec_stage* st, std::mt19937& rng, const std::string& what) {
    Part p = make_part(rng, 9, 0, 27, {}, 30);
    // The second attempt: macroblocks 0 and 1 skipped, 2 coded with a block whose nC is its left neighbour's.
    auto left_dependent = [](const gpuec_mb& m) {
      return m.kind == GPUEC_MB_I16x16 || (m.kind == GPUEC_MB_NORMAL && (m.cbp & 1));
    };
    if (!left_dependent(p.recs[2])) {
      size_t j = 3, k = 3;
      while (j < p.recs.size() && !left_dependent(p.recs[j])) ++j;
      while (k < p.recs.size() && p.recs[k].kind == GPUEC_MB_SKIP) ++k;
      ASSERT_LT(j, p.recs.size()) << what << ": no macroblock to copy";
      const int64_t bit = p.recs[2].kind != GPUEC_MB_SKIP ? p.recs[2].skel_bit : p.recs[k].skel_bit;
      p.recs[2] = p.recs[j];
      p.recs[2].mb_addr = 2;
      p.recs[2].skel_bit = bit;
    }
    for (const int a : {0, 1}) {
      gpuec_mb& m = p.recs[static_cast<size_t>(a)];
      std::memset(&m, 0, sizeof m);
      m.mb_addr = a;
      m.kind = GPUEC_MB_SKIP;
    }
    // The first attempt codes the first two rows as I_PCM (TotalCoeff 16 everywhere), then begins again.
    gpuec_slice_begin(st, p.slices[0].first_mb, p.slices[0].start_bit);
    int64_t bit = p.slices[0].start_bit + 8;
    for (int i = 0; i < 18; ++i) {
      gpuec_mb m;
      std::memset(&m, 0, sizeof m);
      m.mb_addr = i;
      m.kind = GPUEC_MB_PCM;
      m.cbp = 0x2F;
      m.skel_bit = bit++;
      *gpuec_mb_next(st) = m;
      uint8_t totals[GPUEC_TC_COUNT];
      ASSERT_EQ(gpuec_mb_commit_bits(st, totals, p.skel.data()), GPUEC_OK) << what << " mb " << i;
    }
    run_part(st, p, what + ": the second attempt", nullptr, false, stage_test::Commit::kWithBuffer);
  });
}

TEST(StageFrame, RejectsOutOfOrderUse) {
  gpuec_stage* st = gpuec_stage_create(4, 4, GPUEC_BACKEND_CPU, 0, nullptr, 0);
  ASSERT_NE(st, nullptr);
  uint8_t buf[64] = {};
  EXPECT_EQ(gpuec_slice_defer(st, buf, 8, 0), GPUEC_EINVAL);  // no slice begun
  EXPECT_EQ(gpuec_frame_submit(st), GPUEC_EINVAL);            // nothing deferred
  EXPECT_EQ(gpuec_frame_complete(st), 0);
  gpuec_slice_begin(st, 0, 8);
  EXPECT_EQ(gpuec_mb_skip(st, 1), GPUEC_EINVAL);  // address out of order
  EXPECT_EQ(gpuec_mb_skip(st, 0), GPUEC_OK);
  EXPECT_EQ(gpuec_frame_submit(st), GPUEC_EINVAL);  // slice still open
  EXPECT_EQ(gpuec_slice_defer(st, buf, 4, 7), GPUEC_EINVAL);  // ends before it starts
  EXPECT_EQ(gpuec_slice_defer(st, buf, 20, 7), 0);
  EXPECT_EQ(gpuec_frame_complete(st), GPUEC_EINVAL);  // not submitted
  EXPECT_EQ(gpuec_frame_submit(st), GPUEC_OK);
  EXPECT_EQ(gpuec_frame_complete(st), 1);
  EXPECT_EQ(gpuec_frame_complete(st), 0);  // already done
  gpuec_stage_destroy(st);
}

TEST(StageFrame, CudaRequestWithoutGpuFallsBackWithANote) {
  std::string why;
  if (gpu::device_count(&why) > 0) GTEST_SKIP() << "a GPU is present";
  char note[256];
  gpuec_stage* st = gpuec_stage_create(4, 4, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CPU);
  EXPECT_NE(std::string(note).find("cuda backend unavailable"), std::string::npos) << note;
  gpuec_stage_destroy(st);
  st = gpuec_stage_create(4, 4, GPUEC_BACKEND_AUTO, 0, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CPU);
  // auto says why it is not cuda (x264 then turns the stage off and writes the stream itself): the device
  // check's reason, not the cuda request's warning
  EXPECT_STRNE(note, "");
  EXPECT_EQ(std::string(note).find("cuda backend unavailable"), std::string::npos) << note;
  gpuec_stage_destroy(st);
}

TEST(StageFrame, CudaDeviceIndexOutOfRangeIsANote) {
  std::string why;
  const int n = gpu::device_count(&why);
  if (n == 0) GTEST_SKIP() << "no GPU: " << why;
  char note[256];
  gpuec_stage* st = gpuec_stage_create(4, 4, GPUEC_BACKEND_CUDA, n, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CPU);
  EXPECT_NE(std::string(note).find("device"), std::string::npos) << note;
  gpuec_stage_destroy(st);
  // auto on a device that does not exist: the cpu with the reason; on a real one: cuda, no note
  st = gpuec_stage_create(4, 4, GPUEC_BACKEND_AUTO, n, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CPU);
  EXPECT_EQ(std::string(note), "device " + std::to_string(n) + " asked for, " + std::to_string(n) + " present");
  gpuec_stage_destroy(st);
  st = gpuec_stage_create(4, 4, GPUEC_BACKEND_AUTO, 0, note, sizeof note);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(gpuec_stage_backend(st), GPUEC_BACKEND_CUDA);
  EXPECT_STREQ(note, "");
  gpuec_stage_destroy(st);
}

}  // namespace
