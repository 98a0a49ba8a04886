// The GPU frame assembly (cavlc/assemble_frame_cuda.h) against its CPU twin, bit for bit, in the GPU
// pipeline: code_frame_cuda writes the slots into the device arena, assemble_frame_cuda assembles every
// slice; the reference is code_frame_ref + assemble_frame_ref. Output, results and total are canary-filled
// first (nothing past packed_bytes(total) may change), the workspace garbage-filled and every call run
// twice on the same workspace. Frames: 1x1 up to 240x135 macroblocks; 1, 2 and 7 slices, a slice per row,
// a slice per macroblock, random cuts and random slices with gaps; many I_PCM, all-skip slices, long runs
// of skipped macroblocks, empty leads and tails, dense macroblocks, scan tile boundaries; the real captures
// (GPUEC_CAPTURES or GPUEC_SHARED_DIR/captures; skipped when absent), checked also against the bit counts
// and hashes the stage recorded.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N. Under compute-sanitizer frames are kept small.
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "canary.h"
#include "capture_files.h"
#include "dev_buf.h"
#include "gpu_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cavlc/assemble_frame.h"
#include "cavlc/assemble_frame_cuda.h"
#include "cavlc/encode_frame_cuda.h"
#include "cavlc/frame.h"
#include "cavlc/frame_cuda.h"
#include "cavlc/slice.h"
#include "frame_arena.h"
#include "gpu/device.h"
#include "cavlc/capture.h"
#include "random_mb.h"
#include "vle/bitwriter.h"

namespace {

using gpuec_test::kCanary;
constexpr int kSanitizerMaxMbs = 80 * 45;

uint32_t test_seed() { return gpuec_test::test_seed("assemble_frame_cuda_test"); }

using gpuec_test::under_sanitizer;

using gpuec_test::DevBuf;

// The frame part on the device, slots coded there by code_frame_cuda.
struct DeviceFrame {
  DevBuf<uint8_t> arena;
  DevBuf<uint16_t> len;
  DevBuf<cavlc::MbLead> lead;
  DevBuf<cavlc::FrameSlice> slices;
  DevBuf<int32_t> sid;
  DevBuf<uint8_t> tc;  // TotalCoeff records (cavlc::tc_record) for encode_frame_cuda's tc_records
  const cavlc_test::FrameArena& f;

  explicit DeviceFrame(const cavlc_test::FrameArena& fa)
      : arena(fa.arena.size()),
        len(fa.slot_len.size()),
        lead(fa.lead.size()),
        slices(fa.slices.size()),
        sid(fa.slice_id.size()),
        tc(fa.recs.size() * cavlc::kTcRecordBytes),
        f(fa) {}

  // Uploads everything but the slots (canary there) and codes them. Returns false after a test failure.
  bool code() {
    if (!upload()) return false;
    const size_t ws_bytes = cavlc::code_frame_cuda_workspace_bytes(f.w, f.h);
    DevBuf<uint8_t> ws(ws_bytes);
    const gpu::CudaError err =
        cavlc::code_frame_cuda(reinterpret_cast<const gpuec_mb*>(arena.p + f.records_off), f.w, f.h, sid.p,
                               arena.p + f.slots_off, len.p, ws.p, ws_bytes, nullptr);
    EXPECT_FALSE(err) << err.str();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return !::testing::Test::HasFailure();
  }

  // Uploads everything but the slots and their lengths (canary there).
  bool upload() {
    EXPECT_EQ(cudaMemcpy(arena.p, f.arena.data(), f.arena.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemset(arena.p + f.slots_off, kCanary, f.slot_bytes()), cudaSuccess);
    EXPECT_EQ(cudaMemset(len.p, kCanary, f.slot_len.size() * 2), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(lead.p, f.lead.data(), f.lead.size() * sizeof(cavlc::MbLead), cudaMemcpyHostToDevice),
              cudaSuccess);
    EXPECT_EQ(cudaMemcpy(slices.p, f.slices.data(), f.slices.size() * sizeof(cavlc::FrameSlice),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    EXPECT_EQ(cudaMemcpy(sid.p, f.slice_id.data(), f.slice_id.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<uint8_t> records(f.recs.size() * cavlc::kTcRecordBytes, 0);
    for (size_t a = 0; a < f.recs.size(); ++a) {
      uint8_t totals[GPUEC_TC_COUNT];
      if (cavlc::mb_totals(f.recs[a], totals) < 0) continue;  // skipped: zeros (mb_totals gives zeros too)
      cavlc::tc_record(totals, records.data() + a * cavlc::kTcRecordBytes);
    }
    EXPECT_EQ(cudaMemcpy(tc.p, records.data(), records.size(), cudaMemcpyHostToDevice), cudaSuccess);
    return !::testing::Test::HasFailure();
  }

  cavlc::FrameAssembly view() const { return f.view(arena.p, len.p, lead.p, slices.p); }
};

// The CPU twin's answer for the frame part (codes the slots into f's arena first).
struct Reference {
  std::vector<uint8_t> out;  // packed_bytes(total)
  std::vector<cavlc::SliceResult> res;
  uint64_t total = 0;
};
bool reference(cavlc_test::FrameArena& f, Reference* r, const std::string& what) {
  EXPECT_EQ(f.code_ref(), 0) << what;
  r->res.assign(f.slices.size(), {});
  r->out.assign(static_cast<size_t>(vle::packed_bytes(f.bound_bits())), 0);
  r->total = cavlc::assemble_frame_ref(f.view(), r->out.data(), r->out.size(), r->res.data());
  EXPECT_NE(r->total, UINT64_MAX) << what;
  if (r->total != UINT64_MAX) r->out.resize(static_cast<size_t>(vle::packed_bytes(r->total)));
  return !::testing::Test::HasFailure();
}

// One GPU assembly of the frame part into out[0, out_bytes), results and total.
using Launch = std::function<gpu::CudaError(uint8_t* out, uint64_t out_bytes, cavlc::SliceResult* res, uint64_t* total)>;

// Runs `launch` twice with out_bytes (a multiple of 4) of output and compares with the reference; with
// out_bytes < packed_bytes(total) only the sizes and the untouched bytes past out_bytes are checked.
void compare_runs(const DeviceFrame& d, const Reference& ref, uint64_t out_bytes, const Launch& launch,
                  const std::string& what) {
  const cavlc_test::FrameArena& f = d.f;
  const size_t n_slices = f.slices.size();
  const size_t margin = 64;
  DevBuf<uint8_t> out(out_bytes + margin);
  DevBuf<cavlc::SliceResult> res(n_slices);
  DevBuf<uint64_t> total(1);
  std::vector<uint8_t> got(out_bytes + margin);
  std::vector<cavlc::SliceResult> got_res(n_slices);
  const bool fits = vle::packed_bytes(ref.total) <= out_bytes;
  for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the workspace as the first left it
    ASSERT_EQ(cudaMemset(out.p, kCanary, out_bytes + margin), cudaSuccess);
    ASSERT_EQ(cudaMemset(res.p, 0xEE, n_slices * sizeof(cavlc::SliceResult)), cudaSuccess);
    ASSERT_EQ(cudaMemset(total.p, 0xEE, 8), cudaSuccess);
    const gpu::CudaError err = launch(out.p, out_bytes, res.p, total.p);
    ASSERT_FALSE(err) << what << ": " << err.str();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    uint64_t got_total = 0;
    ASSERT_EQ(cudaMemcpy(&got_total, total.p, 8, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got.data(), out.p, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got_res.data(), res.p, n_slices * sizeof(cavlc::SliceResult), cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(got_total, ref.total) << what << ", run " << rep;
    for (size_t k = 0; k < n_slices; ++k) {
      ASSERT_EQ(got_res[k].out_bit, ref.res[k].out_bit) << what << ", run " << rep << ": slice " << k;
      ASSERT_EQ(got_res[k].bits, ref.res[k].bits) << what << ", run " << rep << ": slice " << k;
    }
    const size_t written = fits ? ref.out.size() : static_cast<size_t>(out_bytes);
    if (fits) {
      const uint64_t diff = cavlc_test::first_bit_difference(got.data(), ref.out.data(), ref.total);
      if (diff < ref.total) {
        size_t k = 0;
        while (k + 1 < n_slices && ref.res[k + 1].out_bit <= diff) ++k;
        const uint64_t local = diff - ref.res[k].out_bit;
        std::string where = "slice " + std::to_string(k) + " (MBs [" + std::to_string(f.slices[k].first_mb) + ", " +
                            std::to_string(f.slices[k].first_mb + f.slices[k].mb_count) + "), " +
                            std::to_string(ref.res[k].bits) + " bits), slice bit " + std::to_string(local);
        FAIL() << what << ", run " << rep << ": first differing output bit " << diff << " of " << ref.total << ", "
               << where << "; output word 0x" << std::hex << (diff / 32) << std::dec;
      }
    }
    for (size_t i = written; i < got.size(); ++i)
      ASSERT_EQ(got[i], kCanary) << what << ", run " << rep << ": byte " << i << " past the "
                                 << written << " bytes that may be written";
  }
}

// assemble_frame_cuda on the slots code_frame_cuda wrote (d.code()), a workspace of garbage.
void run_and_compare(const DeviceFrame& d, const Reference& ref, uint64_t out_bytes, const std::string& what) {
  const size_t ws_bytes = cavlc::assemble_frame_cuda_workspace_bytes(d.f.n_mbs, static_cast<int>(d.f.slices.size()));
  ASSERT_GT(ws_bytes, 0u);
  DevBuf<uint8_t> ws(ws_bytes);
  ASSERT_EQ(cudaMemset(ws.p, 0x5C, ws_bytes), cudaSuccess);  // any contents
  const cavlc::FrameAssembly in = d.view();
  compare_runs(d, ref, out_bytes,
               [&](uint8_t* out, uint64_t ob, cavlc::SliceResult* res, uint64_t* total) {
                 return cavlc::assemble_frame_cuda(in, out, ob, res, total, ws.p, ws_bytes, nullptr);
               },
               what);
}

// One encode_frame_cuda workspace for the whole test program, zeroed once when it grows: every call must
// leave it ready for the next one (different frame sizes, variants and slice layouts in between).
struct EncodeWorkspace {
  uint8_t* p = nullptr;
  size_t bytes = 0;
  uint8_t* get(size_t need) {
    if (need > bytes) {
      cudaFree(p);
      p = nullptr;
      bytes = 0;
      if (cudaMalloc(reinterpret_cast<void**>(&p), need) != cudaSuccess) return nullptr;
      if (cavlc::encode_frame_cuda_workspace_clear(p, need, nullptr)) return nullptr;
      bytes = need;
    }
    return p;
  }
};
EncodeWorkspace& encode_workspace() {
  static EncodeWorkspace w;
  return w;
}

constexpr cavlc::FrameCudaVariant kEncodeVariants[] = {cavlc::FrameCudaVariant::kFused,
                                                       cavlc::FrameCudaVariant::kTwoPass};

// encode_frame_cuda (coding and assembly in one submission) from the uploaded frame (d.upload()): the slots
// and their lengths are canary-filled before every run.
void run_encode_and_compare(const DeviceFrame& d, const Reference& ref, uint64_t out_bytes,
                            cavlc::FrameCudaVariant v, const std::string& what, bool host_totals = false) {
  const cavlc_test::FrameArena& f = d.f;
  const size_t ws_bytes = cavlc::encode_frame_cuda_workspace_bytes(f.n_mbs);
  ASSERT_GT(ws_bytes, 0u);
  uint8_t* ws = encode_workspace().get(ws_bytes);
  ASSERT_NE(ws, nullptr);
  const cavlc::FrameAssembly in = d.view();
  compare_runs(d, ref, out_bytes,
               [&](uint8_t* out, uint64_t ob, cavlc::SliceResult* res, uint64_t* total) {
                 EXPECT_EQ(cudaMemset(d.arena.p + f.slots_off, kCanary, f.slot_bytes()), cudaSuccess);
                 EXPECT_EQ(cudaMemset(d.len.p, kCanary, f.slot_len.size() * 2), cudaSuccess);
                 return cavlc::encode_frame_cuda(v, in, f.w, d.sid.p, d.len.p, out, ob, res, total, ws,
                                                 encode_workspace().bytes, nullptr, host_totals ? d.tc.p : nullptr);
               },
               what + ", encode_frame_cuda " + cavlc::frame_cuda_variant_name(v) +
                   (host_totals ? " with the host's TotalCoeff records" : ""));
}

// The frame part through both GPU paths: code_frame_cuda + assemble_frame_cuda, and encode_frame_cuda
// (every variant). n_mbs must be a multiple of f.w for the latter (always here: whole frames).
void check_all(DeviceFrame& d, const Reference& ref, uint64_t out_bytes, const std::string& what) {
  if (!d.code()) return;
  run_and_compare(d, ref, out_bytes, what);
  for (cavlc::FrameCudaVariant v : kEncodeVariants) {
    if (::testing::Test::HasFailure()) return;
    run_encode_and_compare(d, ref, out_bytes, v, what);
  }
  if (::testing::Test::HasFailure()) return;
  run_encode_and_compare(d, ref, out_bytes, cavlc::FrameCudaVariant::kTwoPass, what, true);
}

void check_frame(cavlc_test::FrameArena& f, const std::string& what) {
  Reference ref;
  if (!reference(f, &ref, what)) return;
  DeviceFrame d(f);
  check_all(d, ref, vle::packed_bytes(f.bound_bits()), what);
}

std::string size_name(int w, int h) { return std::to_string(w) + "x" + std::to_string(h) + " MBs"; }

TEST(CavlcAssembleFrameCuda, FrameSizesAndSliceLayouts) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed());
  struct Size {
    int w, h;
  };
  const Size sizes[] = {{1, 1}, {1, 9}, {9, 1}, {7, 3}, {22, 18}, {80, 45}, {120, 68}, {240, 135}};
  int variant = 0;
  for (const Size& s : sizes) {
    if (under_sanitizer() && s.w * s.h > kSanitizerMaxMbs) continue;
    for (cavlc_test::SliceLayout l : cavlc_test::kSliceLayouts) {
      auto recs = cavlc_test::random_frame(rng, s.w * s.h, 1 + static_cast<int>(rng() % 40));
      const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(l, s.w, s.h, rng);
      std::string what = size_name(s.w, s.h) + ", " + cavlc_test::slice_layout_name(l);
      int empty_pct = 10;
      switch (variant++ % 5) {  // a different mix for every size and layout
        case 0: break;
        case 1: cavlc_test::make_pcm(recs, rng, 40); what += ", many I_PCM"; break;
        case 2: cavlc_test::make_skip_slices(recs, ranges, rng, 40); what += ", all-skip slices"; break;
        case 3: cavlc_test::make_skips(recs, rng, 97); what += ", long skip runs"; break;
        case 4: empty_pct = 100; cavlc_test::make_pcm(recs, rng, 10); what += ", empty leads and tails"; break;
      }
      cavlc_test::FrameArena f = cavlc_test::make_frame_arena(rng, s.w, s.h, std::move(recs), ranges, empty_pct);
      check_frame(f, what);
      if (HasFailure()) return;
    }
  }
}

// Macroblock counts around the scan tile (256 macroblocks) and the look-back window (32 tiles).
TEST(CavlcAssembleFrameCuda, ScanTileBoundaries) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 1);
  struct Size {
    int w, h;
  };
  const Size sizes[] = {{255, 1}, {256, 1}, {257, 1}, {1, 511}, {512, 1}, {513, 1}, {64, 128}, {129, 64}, {97, 89}};
  for (const Size& s : sizes) {
    if (under_sanitizer() && s.w * s.h > kSanitizerMaxMbs) continue;
    for (cavlc_test::SliceLayout l : {cavlc_test::SliceLayout::kOne, cavlc_test::SliceLayout::kPerMb,
                                      cavlc_test::SliceLayout::kRandomGaps}) {
      auto recs = cavlc_test::random_frame(rng, s.w * s.h, 20);
      const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(l, s.w, s.h, rng);
      cavlc_test::FrameArena f = cavlc_test::make_frame_arena(rng, s.w, s.h, std::move(recs), ranges, 10);
      check_frame(f, size_name(s.w, s.h) + ", " + cavlc_test::slice_layout_name(l));
      if (HasFailure()) return;
    }
  }
}

TEST(CavlcAssembleFrameCuda, PcmSkipsAndDenseMacroblocks) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 2);
  const int w = under_sanitizer() ? 22 : 120, h = under_sanitizer() ? 18 : 68;
  for (int round = 0; round < 6; ++round) {
    auto recs = cavlc_test::random_frame(rng, w * h, round < 3 ? 100 : 30);
    const auto l = round % 2 ? cavlc_test::SliceLayout::kRandomCuts : cavlc_test::SliceLayout::kPerRow;
    const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(l, w, h, rng);
    std::string what = size_name(w, h) + ", " + cavlc_test::slice_layout_name(l) + ", round " + std::to_string(round);
    if (round == 1 || round == 4) {
      cavlc_test::make_pcm(recs, rng, 90);
      what += ", I_PCM almost everywhere";
    }
    if (round >= 2) {
      cavlc_test::make_skip_slices(recs, ranges, rng, 50);
      cavlc_test::make_skips(recs, rng, 30);
      what += ", skips";
    }
    cavlc_test::FrameArena f =
        cavlc_test::make_frame_arena(rng, w, h, std::move(recs), ranges, round == 5 ? 100 : static_cast<int>(rng() % 50));
    check_frame(f, what);
    if (HasFailure()) return;
  }
  // Every macroblock of the frame skipped: only the tails and the padding.
  auto recs = cavlc_test::random_frame(rng, w * h, 30);
  cavlc_test::make_skips(recs, rng, 100);
  for (cavlc_test::SliceLayout l : {cavlc_test::SliceLayout::kOne, cavlc_test::SliceLayout::kSeven}) {
    cavlc_test::FrameArena f =
        cavlc_test::make_frame_arena(rng, w, h, recs, cavlc_test::slice_ranges(l, w, h, rng), 10);
    check_frame(f, size_name(w, h) + ", every macroblock skipped, " + cavlc_test::slice_layout_name(l));
    if (HasFailure()) return;
  }
}

// An output buffer smaller than the frame: nothing past out_bytes changes, the sizes are still right.
TEST(CavlcAssembleFrameCuda, SmallOutputBuffer) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 3);
  auto recs = cavlc_test::random_frame(rng, 22 * 18, 30);
  const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(cavlc_test::SliceLayout::kSeven, 22, 18, rng);
  cavlc_test::FrameArena f = cavlc_test::make_frame_arena(rng, 22, 18, std::move(recs), ranges, 10);
  Reference ref;
  if (!reference(f, &ref, "small output")) return;
  DeviceFrame d(f);
  if (!d.code()) return;
  for (uint64_t out_bytes : {uint64_t{0}, uint64_t{4}, uint64_t{ref.out.size() / 2 & ~size_t{3}},
                             uint64_t{ref.out.size() - 4}, uint64_t{ref.out.size()}}) {
    const std::string what = "out_bytes " + std::to_string(out_bytes) + " of " + std::to_string(ref.out.size());
    run_and_compare(d, ref, out_bytes, what);
    for (cavlc::FrameCudaVariant v : kEncodeVariants) {
      if (HasFailure()) return;
      run_encode_and_compare(d, ref, out_bytes, v, what);
    }
    if (HasFailure()) return;
    run_encode_and_compare(d, ref, out_bytes, cavlc::FrameCudaVariant::kTwoPass, what, true);
    if (HasFailure()) return;
  }
}

TEST(CavlcAssembleFrameCuda, RejectsArgumentsOutOfContract) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 4);
  cavlc_test::FrameArena f =
      cavlc_test::make_frame_arena(rng, 2, 2, cavlc_test::random_frame(rng, 4, 30), {{0, 2}, {2, 2}}, 10);
  ASSERT_EQ(f.code_ref(), 0);
  DeviceFrame d(f);
  ASSERT_TRUE(d.code());
  const size_t ws_bytes = cavlc::assemble_frame_cuda_workspace_bytes(4, 2);
  ASSERT_GT(ws_bytes, 0u);
  EXPECT_EQ(cavlc::assemble_frame_cuda_workspace_bytes(0, 1), 0u);
  EXPECT_EQ(cavlc::assemble_frame_cuda_workspace_bytes(1, 0), 0u);
  DevBuf<uint8_t> ws(ws_bytes), out(1024);
  DevBuf<cavlc::SliceResult> res(2);
  DevBuf<uint64_t> total(1);
  const cavlc::FrameAssembly good = d.view();
  auto call = [&](const cavlc::FrameAssembly& in, uint8_t* o, uint64_t ob, void* w, size_t wb) {
    return static_cast<bool>(cavlc::assemble_frame_cuda(in, o, ob, res.p, total.p, w, wb, nullptr));
  };
  EXPECT_FALSE(call(good, out.p, 1024, ws.p, ws_bytes));
  EXPECT_TRUE(call(good, out.p, 1024, ws.p, ws_bytes - 1));
  EXPECT_TRUE(call(good, out.p, 1024, ws.p + 16, ws_bytes));  // workspace not 256-byte aligned
  EXPECT_TRUE(call(good, out.p + 2, 1020, ws.p, ws_bytes));   // out not 4-byte aligned
  EXPECT_TRUE(call(good, out.p, 1022, ws.p, ws_bytes));       // out_bytes not a multiple of 4
  EXPECT_TRUE(call(good, nullptr, 1024, ws.p, ws_bytes));
  EXPECT_TRUE(cavlc::assemble_frame_cuda(good, out.p, 1024, nullptr, total.p, ws.p, ws_bytes, nullptr));
  EXPECT_TRUE(cavlc::assemble_frame_cuda(good, out.p, 1024, res.p, nullptr, ws.p, ws_bytes, nullptr));
  cavlc::FrameAssembly bad = good;
  bad.n_mbs = 0;
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.n_slices = 0;
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.arena = good.arena + 1;  // misaligned (and records no longer at records_bit)
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.records_bit += 8;  // records not at arena + records_bit / 8
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.slot_len = nullptr;
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.lead = nullptr;
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.slices = nullptr;
  EXPECT_TRUE(call(bad, out.p, 1024, ws.p, ws_bytes));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CavlcEncodeFrameCuda, RejectsArgumentsOutOfContract) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 6);
  cavlc_test::FrameArena f =
      cavlc_test::make_frame_arena(rng, 2, 2, cavlc_test::random_frame(rng, 4, 30), {{0, 2}, {2, 2}}, 10);
  DeviceFrame d(f);
  ASSERT_TRUE(d.upload());
  const size_t ws_bytes = cavlc::encode_frame_cuda_workspace_bytes(4);
  ASSERT_GT(ws_bytes, 0u);
  EXPECT_EQ(cavlc::encode_frame_cuda_workspace_bytes(0), 0u);
  DevBuf<uint8_t> ws(ws_bytes), out(1024);
  ASSERT_FALSE(cavlc::encode_frame_cuda_workspace_clear(ws.p, ws_bytes, nullptr));
  DevBuf<cavlc::SliceResult> res(2);
  DevBuf<uint64_t> total(1);
  const cavlc::FrameAssembly good = d.view();
  using V = cavlc::FrameCudaVariant;
  auto call = [&](V v, const cavlc::FrameAssembly& in, int w, uint16_t* len, uint8_t* o, uint64_t ob, void* wsp,
                  size_t wb) {
    return static_cast<bool>(cavlc::encode_frame_cuda(v, in, w, d.sid.p, len, o, ob, res.p, total.p, wsp, wb, nullptr));
  };
  EXPECT_FALSE(call(V::kFused, good, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  EXPECT_FALSE(call(V::kTwoPass, good, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(call(static_cast<V>(2), good, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));  // no such variant
  EXPECT_FALSE(cavlc::encode_frame_cuda(V::kTwoPass, good, 2, d.sid.p, d.len.p, out.p, 1024, res.p, total.p, ws.p,
                                        ws_bytes, nullptr, d.tc.p));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(cavlc::encode_frame_cuda(V::kFused, good, 2, d.sid.p, d.len.p, out.p, 1024, res.p, total.p, ws.p,
                                       ws_bytes, nullptr, d.tc.p));  // TotalCoeff records: two-pass only
  EXPECT_TRUE(cavlc::encode_frame_cuda(V::kTwoPass, good, 2, d.sid.p, d.len.p, out.p, 1024, res.p, total.p, ws.p,
                                       ws_bytes, nullptr, d.tc.p + 2));  // misaligned
  EXPECT_TRUE(call(V::kFused, good, 3, d.len.p, out.p, 1024, ws.p, ws_bytes));  // 4 MBs are not rows of 3
  EXPECT_TRUE(call(V::kFused, good, 0, d.len.p, out.p, 1024, ws.p, ws_bytes));
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p + 2, out.p, 1024, ws.p, ws_bytes));  // slot_len != in.slot_len
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p, out.p, 1024, ws.p, ws_bytes - 1));
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p, out.p, 1024, ws.p + 16, ws_bytes));
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p, out.p + 2, 1020, ws.p, ws_bytes));
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p, out.p, 1022, ws.p, ws_bytes));
  EXPECT_TRUE(call(V::kFused, good, 2, d.len.p, nullptr, 1024, ws.p, ws_bytes));
  EXPECT_TRUE(cavlc::encode_frame_cuda(V::kFused, good, 2, nullptr, d.len.p, out.p, 1024, res.p, total.p, ws.p,
                                       ws_bytes, nullptr));
  cavlc::FrameAssembly bad = good;
  bad.slots_bit += 8;  // slots not 32-bit aligned
  EXPECT_TRUE(call(V::kFused, bad, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.records_bit += 256;  // records not at arena + records_bit / 8
  EXPECT_TRUE(call(V::kFused, bad, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.records = reinterpret_cast<const gpuec_mb*>(reinterpret_cast<const uint8_t*>(good.records) + 8);
  bad.records_bit += 64;  // consistent with the arena but not 32-byte aligned
  EXPECT_TRUE(call(V::kFused, bad, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  bad = good;
  bad.n_slices = 0;
  EXPECT_TRUE(call(V::kFused, bad, 2, d.len.p, out.p, 1024, ws.p, ws_bytes));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// ---- Real captures (the loading follows tests/cavlc/capture_test.cpp) ----

using cavlc_test::capture_files;
using cavlc_test::captures_dir;

bool load(const std::string& path, std::vector<cavlc::CapturedSlice>* slices, std::string* err) {
  return cavlc_test::load_capture(path, "assemble-frame-test", slices, err);
}

// The frames of a capture (a slice with first_mb 0 starts one) as frame parts: the captured skeletons,
// insertion points rebased onto them (as capture_test.cpp does for assemble_slice_ref).
std::vector<cavlc_test::FrameArena> frames_of(const std::vector<cavlc::CapturedSlice>& slices, std::mt19937& rng) {
  std::vector<cavlc_test::FrameArena> frames;
  std::vector<const cavlc::CapturedSlice*> cur;
  auto finish = [&] {
    if (cur.empty()) return;
    cavlc_test::FrameArena f;
    f.w = static_cast<int>(cur[0]->head.mb_width);
    f.h = static_cast<int>(cur[0]->head.mb_height);
    int first = 0;
    for (size_t k = 0; k < cur.size(); ++k) {
      const cavlc::CapturedSlice& s = *cur[k];
      const int64_t base = (s.head.start_bit / 8) * 8;
      for (gpuec_mb m : s.recs) {
        m.skel_bit -= base;
        f.recs.push_back(m);
        f.slice_id.push_back(static_cast<int32_t>(k));
      }
      const int count = static_cast<int>(s.recs.size());
      f.ranges.push_back({first, count});
      f.skel.push_back(s.skeleton);
      f.skel.back().resize(f.skel.back().size() + 4, 0);
      f.spans.push_back({first, first + count - 1, s.head.start_bit - base, s.head.end_bit - base});
      first += count;
    }
    f.n_mbs = static_cast<int>(f.recs.size());
    cavlc_test::build_arena(f, rng);
    frames.push_back(std::move(f));
    cur.clear();
  };
  for (const auto& s : slices) {
    if (s.head.first_mb == 0) finish();
    cur.push_back(&s);
  }
  finish();
  return frames;
}

TEST(CavlcAssembleFrameCuda, RealCaptures) {
  REQUIRE_GPU();
  const std::vector<std::string> files = capture_files();
  if (files.empty())
    GTEST_SKIP() << "skipped: no captures in " << captures_dir() << " (tools/scripts/make-captures.sh)";
  std::mt19937 rng(test_seed() + 5);
  size_t nframes = 0, nslices = 0;
  for (const std::string& path : files) {
    std::vector<cavlc::CapturedSlice> slices;
    std::string err;
    ASSERT_TRUE(load(path, &slices, &err)) << err;
    size_t k0 = 0;  // index of the frame's first slice in `slices`
    std::vector<cavlc_test::FrameArena> frames = frames_of(slices, rng);
    for (size_t fi = 0; fi < frames.size(); ++fi) {
      cavlc_test::FrameArena& f = frames[fi];
      const std::string what = path + " frame " + std::to_string(fi);
      ASSERT_EQ(f.n_mbs, f.w * f.h) << what << ": the frame's slices do not cover it";
      if (under_sanitizer() && (fi >= 4 || f.n_mbs > kSanitizerMaxMbs)) {
        k0 += f.slices.size();
        continue;
      }
      Reference ref;
      if (!reference(f, &ref, what)) return;
      for (size_t k = 0; k < f.slices.size(); ++k) {  // the CPU twin reproduces what the stage wrote
        const cavlc::CapturedSlice& s = slices[k0 + k];
        ASSERT_EQ(static_cast<int64_t>(ref.res[k].bits), s.head.out_bits) << what << " slice " << k;
        ASSERT_EQ(cavlc::capture_hash(ref.out.data() + ref.res[k].out_bit / 8, s.head.out_bits), s.head.out_hash)
            << what << " slice " << k;
      }
      DeviceFrame d(f);
      check_all(d, ref, vle::packed_bytes(f.bound_bits()), what);
      if (HasFailure()) return;
      k0 += f.slices.size();
      nslices += f.slices.size();
      ++nframes;
    }
  }
  std::printf("%zu capture files, %zu frames, %zu slices: GPU assembly == CPU twin == stage output\n", files.size(),
              nframes, nslices);
}

}  // namespace
