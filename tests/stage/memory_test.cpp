// gpuec_stage_memory (gpuec/stage.h) and the frame coder's memory() behind it (cavlc/frame_coder.h): the cpu
// backend holds no device or pinned memory; the cuda backend holds what README "Memory per encoder" says
// (checked against the formula there, and against the device's free memory before and after), grows with
// the first part and with a larger output (and codes that part again into the larger output: the bytes are
// still checked against the slice coder), and no longer grows once it has seen the largest part.
// Built twice: stage_memory_test (cpu) and stage_memory_cuda_test (STAGE_TEST_CUDA, skipped without a GPU).
#include <gtest/gtest.h>

#include <string>

#include "gpu_test.h"
#include "stage_parts.h"
#ifdef STAGE_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

struct Held {
  int64_t device = -1, pinned = -1;
};

Held held(const gpuec_stage* st) {
  Held h;
  gpuec_stage_memory(st, &h.device, &h.pinned);
  return h;
}

#ifndef STAGE_TEST_CUDA

TEST(StageMemory, TheCpuBackendHoldsNoDeviceOrPinnedMemory) {
  std::mt19937 rng(gpuec_test::test_seed("memory_test"));
  char note[256];
  gpuec_stage* st = gpuec_stage_create(120, 68, GPUEC_BACKEND_CPU, 0, note, sizeof note);
  ASSERT_NE(st, nullptr) << note;
  const Held open = held(st);
  EXPECT_EQ(open.device, 0);
  EXPECT_EQ(open.pinned, 0);
  stage_test::run_part(st, stage_test::make_part(rng, 120, 0, 120 * 68, {120 * 30}, 40), "cpu 1080p");
  const Held after = held(st);
  EXPECT_EQ(after.device, 0);
  EXPECT_EQ(after.pinned, 0);
  gpuec_stage_memory(st, nullptr, nullptr);  // NULL: not wanted
  int64_t device = -1;
  gpuec_stage_memory(st, &device, nullptr);
  EXPECT_EQ(device, 0);
  gpuec_stage_destroy(st);
}

#else

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr int64_t kDeviceAllocations = 7;  // small arrays, slices, results, output, arena, slot lengths, workspace

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// README "Memory per encoder", for a frame of M macroblocks, before the first part: pinned 924 bytes a
// macroblock (records 832, slice ids 4, leads 16, TotalCoeff records 32, slices 24, results 16; M + 1 of
// each, the small ones 256-byte aligned) plus the skeleton area S and the output area O (64 M + 64 KiB
// each, 4 KiB pages; the output with 64 readable bytes after it); device 92 bytes a macroblock plus O.
Held documented_at_open(int64_t m) {
  const int64_t c = m + 1;
  const int64_t small = round_up(round_up(4 * c, 256) + 16 * c, 256) + 32 * c;
  const int64_t area = round_up(64 * m + 64 * kKiB, 4096);
  Held h;
  h.pinned = 832 * c + small + 24 * c + 16 * c + 64 + area + area + 64;
  h.device = small + 24 * c + 16 * c + 64 + area;
  return h;
}

// After the first part of the whole frame: the arena (skeleton area, 256 zero bytes, records 832 and slots
// 2592 bytes a macroblock), the slot lengths (54 bytes a macroblock) and the workspace (52 bytes a
// macroblock and alignment) come on top: 3622 bytes a macroblock on the device with the 92 above.
int64_t documented_first_part_device(int64_t m) { return 3622 * m + 2 * round_up(64 * m + 64 * kKiB, 4096); }

int64_t free_device_bytes() {
  size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  return static_cast<int64_t>(free_bytes);
}

// A part whose coded macroblocks are dense (every block coded, mostly 16 levels): far more output than the
// output area a stage starts with.
stage_test::Part dense_part(std::mt19937& rng, int w, int h) {
  stage_test::Part p = stage_test::make_part(rng, w, 0, w * h, {w * h / 2}, 90);
  for (gpuec_mb& m : p.recs) {
    if (m.kind == GPUEC_MB_SKIP) continue;
    const int64_t skel_bit = m.skel_bit;
    m = cavlc_test::dense_mb(rng, m.mb_addr);
    m.skel_bit = skel_bit;
  }
  return p;
}

TEST(StageMemory, TheCudaBackendHoldsWhatTheReadmeSays) {
  REQUIRE_GPU();
  std::mt19937 rng(gpuec_test::test_seed("memory_cuda_test"));
  const int w = 120, h = 68;  // 1080p
  const int64_t m = int64_t{w} * h;
  char note[256];
  {  // the CUDA context and the kernels' modules come first, so that the free memory below moves only with
     // the stages' own allocations
    gpuec_stage* warm = gpuec_stage_create(11, 9, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
    ASSERT_NE(warm, nullptr) << note;
    ASSERT_EQ(gpuec_stage_backend(warm), GPUEC_BACKEND_CUDA) << note;
    stage_test::run_part(warm, dense_part(rng, 11, 9), "warm-up");
    gpuec_stage_destroy(warm);
  }
  const int64_t free0 = free_device_bytes();
  gpuec_stage* st = gpuec_stage_create(w, h, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr) << note;
  const Held open = held(st);
  const Held want = documented_at_open(m);
  EXPECT_EQ(open.device, want.device);
  EXPECT_EQ(open.pinned, want.pinned);

  // A sparse part first: its output fits the first output area, so the arena is all that comes.
  stage_test::run_part(st, stage_test::make_part(rng, w, 0, w * h, {}, 5), "sparse 1080p");
  const Held first = held(st);
  EXPECT_EQ(first.pinned, open.pinned);
  EXPECT_GE(first.device, documented_first_part_device(m));
  EXPECT_LE(first.device, documented_first_part_device(m) + 4 * kKiB);  // alignment of the arena and workspace
  // Dense parts: the output area grows (the part is coded again into it, bytes checked), then stays.
  const stage_test::Part dense = dense_part(rng, w, h);
  stage_test::run_part(st, dense, "dense 1080p, the output area grows");
  const Held grown = held(st);
  EXPECT_GT(grown.device, first.device);
  EXPECT_GT(grown.pinned, first.pinned);
  EXPECT_EQ(grown.device - first.device, grown.pinned - first.pinned) << "host and device output areas are one size";
  stage_test::run_part(st, dense, "dense 1080p again");
  stage_test::run_part(st, stage_test::make_part(rng, w, 0, w * h, {w * 10, w * 40}, 40), "1080p, 3 slices");
  const Held steady = held(st);
  EXPECT_EQ(steady.device, grown.device) << "no allocation once the largest part and output were seen";
  EXPECT_EQ(steady.pinned, grown.pinned);

  // The device's own account: what the stage says it holds, within the runtime's rounding.
  const int64_t used = free0 - free_device_bytes();
  EXPECT_GE(used, steady.device - 2 * kMiB) << "the stage holds less device memory than it reports";
  EXPECT_LE(used, steady.device + kDeviceAllocations * 2 * kMiB + 4 * kMiB)
      << "the stage holds more device memory than it reports";
  std::printf("1080p stage: %.2f MiB device (the device: %.2f MiB), %.2f MiB pinned\n",
              double(steady.device) / kMiB, double(used) / kMiB, double(steady.pinned) / kMiB);
  gpuec_stage_destroy(st);
  EXPECT_LE(free0 - free_device_bytes(), 2 * kMiB) << "destroy gives the memory back";
}

// A stage of a frame coded in parts of rows (x264's --sliced-threads) holds the slot area of its largest
// part, not of the frame.
TEST(StageMemory, PartsOfRowsHoldTheSlotAreaOfThePart) {
  REQUIRE_GPU();
  std::mt19937 rng(gpuec_test::test_seed("memory_cuda_test") + 1);
  const int w = 120, h = 68, rows = 17;
  char note[256];
  gpuec_stage* st = gpuec_stage_create(w, h, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr) << note;
  const Held open = held(st);
  stage_test::run_part(st, stage_test::make_part(rng, w, w * rows, w * rows, {w * 3}, 30), "rows 17..33");
  const Held part = held(st);
  // Arena (with the skeleton area, which is the frame's), slot lengths and workspace of 17 rows only.
  const int64_t want = 3530 * int64_t{w} * rows + round_up(64 * int64_t{w} * h + 64 * kKiB, 4096);
  EXPECT_GE(part.device - open.device, want);
  EXPECT_LE(part.device - open.device, want + 4 * kKiB) << "more than the slot area of 17 rows";
  // The same rows again and a smaller part: nothing more.
  stage_test::run_part(st, stage_test::make_part(rng, w, w * rows, w * rows, {}, 30), "rows 17..33 again");
  stage_test::run_part(st, stage_test::make_part(rng, w, 0, w * 5, {}, 30), "rows 0..4");
  EXPECT_EQ(held(st).device, part.device);
  gpuec_stage_destroy(st);
}

#endif

}  // namespace
