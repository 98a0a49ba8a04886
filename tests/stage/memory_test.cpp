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

// README "Memory per encoder", for a frame of M macroblocks, at create: pinned 924 bytes a macroblock
// (records 832, slice ids 4, leads 16, TotalCoeff records 32, slices 24, results 16; M + 1 of each, the
// small ones 256-byte aligned) plus the skeleton area S (64 M + 64 KiB) and the output area O (256 M +
// 64 KiB, with 64 readable bytes after it), 4 KiB pages; device 3622 bytes a macroblock (the 92 above minus
// the records' host-only 832, plus the arena: skeleton area, 256 zero bytes, records 832 and slots 2592; the
// slot lengths 54; the workspace 52 and alignment) plus S and O: device_at_open is that without alignment.
int64_t skeleton_area(int64_t m) { return round_up(64 * m + 64 * kKiB, 4096); }
int64_t output_area(int64_t m) { return round_up(256 * m + 64 * kKiB, 4096); }
Held documented_at_open(int64_t m) {
  const int64_t c = m + 1;
  const int64_t small = round_up(round_up(4 * c, 256) + 16 * c, 256) + 32 * c;
  Held h;
  h.pinned = 832 * c + small + 24 * c + 16 * c + 64 + skeleton_area(m) + output_area(m) + 64;
  h.device = 3622 * m + skeleton_area(m) + output_area(m);
  return h;
}

int64_t free_device_bytes() {
  size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  return static_cast<int64_t>(free_bytes);
}

// A part whose coded macroblocks are dense (every block coded, mostly 16 levels) and three in four I_PCM
// (384 bytes of samples): more output than the 256 bytes a macroblock of the area a stage starts with.
stage_test::Part dense_part(std::mt19937& rng, int w, int h) {
  stage_test::Part p = stage_test::make_part(rng, w, 0, w * h, {w * h / 2}, 90);
  int i = 0;
  for (gpuec_mb& m : p.recs) {
    if (m.kind == GPUEC_MB_SKIP) continue;
    const int64_t skel_bit = m.skel_bit;
    m = cavlc_test::dense_mb(rng, m.mb_addr);
    if (i++ % 4 != 3) {
      m.kind = GPUEC_MB_PCM;
      for (uint8_t& v : m.u.pcm) v = static_cast<uint8_t>(rng());
    }
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
  EXPECT_GE(open.device, want.device);
  EXPECT_LE(open.device, want.device + 4 * kKiB);  // alignment of the arena and the workspace
  EXPECT_EQ(open.pinned, want.pinned);

  // A sparse part first: everything is there already, nothing comes.
  stage_test::run_part(st, stage_test::make_part(rng, w, 0, w * h, {}, 5), "sparse 1080p");
  const Held first = held(st);
  EXPECT_EQ(first.pinned, open.pinned);
  EXPECT_EQ(first.device, open.device) << "an allocation inside the encode";
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

// A stage of a frame coded in parts of rows (x264's --sliced-threads) holds the whole frame's areas from its
// creation: parts of rows allocate nothing more.
TEST(StageMemory, PartsOfRowsAllocateNothing) {
  REQUIRE_GPU();
  std::mt19937 rng(gpuec_test::test_seed("memory_cuda_test") + 1);
  const int w = 120, h = 68, rows = 17;
  char note[256];
  gpuec_stage* st = gpuec_stage_create(w, h, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
  ASSERT_NE(st, nullptr) << note;
  const Held open = held(st);
  stage_test::run_part(st, stage_test::make_part(rng, w, w * rows, w * rows, {w * 3}, 30), "rows 17..33");
  const Held part = held(st);
  EXPECT_EQ(part.device, open.device);
  EXPECT_EQ(part.pinned, open.pinned);
  // The same rows again and a smaller part: nothing more.
  stage_test::run_part(st, stage_test::make_part(rng, w, w * rows, w * rows, {}, 30), "rows 17..33 again");
  stage_test::run_part(st, stage_test::make_part(rng, w, 0, w * 5, {}, 30), "rows 0..4");
  EXPECT_EQ(held(st).device, part.device);
  gpuec_stage_destroy(st);
}

#endif

}  // namespace
