// The CAVLCU kernel (cavlc/frame_cuda.h) against its CPU twin code_frame_ref, bit for bit, for every
// variant: slot bytes and lengths, outputs canary-filled first (bytes past a slot's written words must
// keep the canary), workspace filled with garbage first. Blocks: x264-like sparse statistics, all-zero
// coded blocks, 16 non-zero blocks, levels up to the overflow limit, every nC range and category,
// skipped and I_PCM macroblocks. Frames: 1x1 up to 2160p with 1, 2, 7 slices, a slice per row, slices
// starting mid-row and random per-macroblock slice ids. Coefficient order (cavlc/mb.h coef_order): frames
// whose records are a random mix of scan and raster order (tests/common/raster.h) must give the output of
// code_frame_ref on the all-scan frame; out-of-range coef_order values stay inside the output arrays.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N. Under compute-sanitizer frames are kept small.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "canary.h"
#include "dev_buf.h"
#include "gpu_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cavlc/frame.h"
#include "cavlc/frame_cuda.h"
#include "cavlc/slice.h"
#include "gpu/device.h"
#include "random_mb.h"
#include "raster.h"

namespace {


using gpuec_test::kCanary;
constexpr uint16_t kLenCanary = gpuec_test::canary<uint16_t>();
constexpr int kSanitizerMaxMbs = 80 * 45;

uint32_t test_seed() { return gpuec_test::test_seed("frame_cuda_test"); }

using gpuec_test::under_sanitizer;

const cavlc::FrameCudaVariant kVariants[] = {cavlc::FrameCudaVariant::kFused, cavlc::FrameCudaVariant::kTwoPass};

enum class Layout { kOne, kTwo, kSeven, kPerRow, kRandomIds };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kOne: return "1 slice";
    case Layout::kTwo: return "2 slices";
    case Layout::kSeven: return "7 slices";
    case Layout::kPerRow: return "slice per row";
    case Layout::kRandomIds: return "random ids";
  }
  return "?";
}

std::vector<int32_t> slice_ids(Layout l, int w, int h, std::mt19937& rng) {
  const int n = w * h;
  std::vector<int32_t> id(static_cast<size_t>(n), 0);
  auto split = [&](int k) {  // k slices of equal macroblock counts: they start mid-row in general
    for (int a = 0; a < n; ++a) id[a] = static_cast<int32_t>(static_cast<int64_t>(a) * k / n);
  };
  switch (l) {
    case Layout::kOne: break;
    case Layout::kTwo: split(2); break;
    case Layout::kSeven: split(7); break;
    case Layout::kPerRow: for (int a = 0; a < n; ++a) id[a] = a / w; break;
    case Layout::kRandomIds: for (auto& v : id) v = static_cast<int32_t>(rng() % 3); break;
  }
  return id;
}

using gpuec_test::DevBuf;

// Runs every variant on the frame and compares with code_frame_ref; reports the first differing slot.
// With device_recs the kernel codes those instead (the same frame in other coefficient orders), still
// against code_frame_ref on recs.
void check_frame(const std::vector<gpuec_mb>& recs, int w, int h, const std::vector<int32_t>& sid,
                 const std::string& what, const std::vector<gpuec_mb>* device_recs = nullptr) {
  const int n = w * h;
  const size_t nslots = static_cast<size_t>(n) * cavlc::kMbSlots;
  std::vector<uint8_t> ref_bits(nslots * cavlc::kSlotBytes, kCanary);
  std::vector<uint16_t> ref_len(nslots, kLenCanary);
  ASSERT_EQ(cavlc::code_frame_ref(recs.data(), w, h, sid.data(), ref_bits.data(), ref_len.data()), 0) << what;

  DevBuf<gpuec_mb> d_recs(static_cast<size_t>(n));
  DevBuf<int32_t> d_sid(static_cast<size_t>(n));
  DevBuf<uint8_t> d_bits(nslots * cavlc::kSlotBytes);
  DevBuf<uint16_t> d_len(nslots);
  const size_t ws_bytes = cavlc::code_frame_cuda_workspace_bytes(w, h);
  ASSERT_GT(ws_bytes, 0u);
  DevBuf<uint8_t> d_ws(ws_bytes);
  const std::vector<gpuec_mb>& dev = device_recs ? *device_recs : recs;
  ASSERT_EQ(dev.size(), recs.size());
  ASSERT_EQ(cudaMemcpy(d_recs.p, dev.data(), n * sizeof(gpuec_mb), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_sid.p, sid.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_ws.p, 0x5C, ws_bytes), cudaSuccess);  // any contents

  std::vector<uint8_t> bits(ref_bits.size());
  std::vector<uint16_t> len(nslots);
  for (const auto v : kVariants) {
    for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the workspace as the first left it
      ASSERT_EQ(cudaMemset(d_bits.p, kCanary, ref_bits.size()), cudaSuccess);
      ASSERT_EQ(cudaMemset(d_len.p, kCanary, nslots * 2), cudaSuccess);
      const gpu::CudaError err =
          cavlc::code_frame_cuda_variant(v, d_recs.p, w, h, d_sid.p, d_bits.p, d_len.p, d_ws.p, ws_bytes, nullptr);
      ASSERT_FALSE(err) << what << ": " << err.str();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
      ASSERT_EQ(cudaMemcpy(bits.data(), d_bits.p, bits.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(len.data(), d_len.p, nslots * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      for (size_t s = 0; s < nslots; ++s) {
        const uint8_t* rb = ref_bits.data() + s * cavlc::kSlotBytes;
        const uint8_t* gb = bits.data() + s * cavlc::kSlotBytes;
        if (len[s] == ref_len[s] && std::memcmp(rb, gb, cavlc::kSlotBytes) == 0) continue;
        const int a = static_cast<int>(s / cavlc::kMbSlots), slot = static_cast<int>(s % cavlc::kMbSlots);
        int byte = 0;
        while (byte < cavlc::kSlotBytes && rb[byte] == gb[byte]) ++byte;
        auto totals = [&](int m) {
          uint8_t t[GPUEC_TC_COUNT];
          cavlc::mb_totals(recs[m], t);
          std::string o;
          for (int i = 0; i < GPUEC_TC_COUNT; ++i) o += std::to_string(t[i]) + (i + 1 < GPUEC_TC_COUNT ? "," : "");
          return o;
        };
        std::string nb;
        nb += "left: " + (a % w ? "slice " + std::to_string(sid[a - 1]) + " totals " + totals(a - 1) : "none");
        nb += "; top: " + (a >= w ? "slice " + std::to_string(sid[a - w]) + " totals " + totals(a - w) : "none");
        FAIL() << what << ", variant " << cavlc::frame_cuda_variant_name(v) << " run " << rep
               << ": first difference at mb " << a << " (x " << a % w << ", y " << a / w << ") slot " << slot
               << ": len ref " << ref_len[s] << " got " << len[s] << ", first differing byte " << byte
               << " (ref 0x" << std::hex << int(byte < cavlc::kSlotBytes ? rb[byte] : 0) << " got 0x"
               << int(byte < cavlc::kSlotBytes ? gb[byte] : 0) << std::dec << "); mb kind " << int(recs[a].kind)
               << " cbp 0x" << std::hex << int(recs[a].cbp) << std::dec << " coef_order " << int(dev[a].coef_order)
               << " slice " << sid[a] << " totals "
               << totals(a) << "; " << nb;
      }
    }
  }
}

TEST(CavlcFrameCuda, SparseStatisticsEveryDensity) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed());
  for (int density : {1, 5, 15, 30, 60, 100}) {
    const int w = 22, h = 18;
    const auto recs = cavlc_test::random_frame(rng, w * h, density);
    for (Layout l : {Layout::kOne, Layout::kRandomIds}) {
      check_frame(recs, w, h, slice_ids(l, w, h, rng), "CIF density " + std::to_string(density) + ", " + layout_name(l));
      if (HasFatalFailure() || HasFailure()) return;
    }
  }
}

TEST(CavlcFrameCuda, ExtremeBlocks) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 1);
  const int w = 22, h = 18;
  for (int round = 0; round < (under_sanitizer() ? 2 : 8); ++round) {
    std::vector<gpuec_mb> recs;
    for (int a = 0; a < w * h; ++a) recs.push_back(cavlc_test::extreme_mb(rng, a));
    check_frame(recs, w, h, slice_ids(Layout::kOne, w, h, rng), "extreme blocks round " + std::to_string(round));
    if (HasFailure()) return;
  }
}

TEST(CavlcFrameCuda, DenseFramesReachEveryNcTable) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 2);
  const int w = 22, h = 18;
  std::vector<gpuec_mb> recs;
  for (int a = 0; a < w * h; ++a) recs.push_back(cavlc_test::dense_mb(rng, a));  // nC 8..16
  check_frame(recs, w, h, slice_ids(Layout::kOne, w, h, rng), "dense");
}

TEST(CavlcFrameCuda, FrameSizesAndSliceLayouts) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 3);
  struct Size { int w, h; };
  const Size sizes[] = {{1, 1}, {1, 9}, {9, 1}, {1, 40}, {40, 1}, {7, 3}, {22, 18}, {80, 45}, {120, 68}, {240, 135}};
  for (const Size& s : sizes) {
    if (under_sanitizer() && s.w * s.h > kSanitizerMaxMbs) continue;
    const auto recs = cavlc_test::random_frame(rng, s.w * s.h, 1 + static_cast<int>(rng() % 40));
    for (Layout l : {Layout::kOne, Layout::kTwo, Layout::kSeven, Layout::kPerRow, Layout::kRandomIds}) {
      check_frame(recs, s.w, s.h, slice_ids(l, s.w, s.h, rng),
                  std::to_string(s.w) + "x" + std::to_string(s.h) + " MBs, " + layout_name(l));
      if (HasFailure()) return;
    }
  }
}

// Random mixes of scan- and raster-order records (and all-raster frames) give the all-scan frame's
// code_frame_ref output: x264-like frames (I16x16 and chroma AC included), extreme and dense blocks,
// every slice layout, a few sizes.
TEST(CavlcFrameCuda, MixedScanAndRasterRecords) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 4);
  struct Frame {
    std::string name;
    int w, h;
    std::vector<gpuec_mb> recs;
  };
  std::vector<Frame> frames;
  for (int density : {5, 30, 100}) frames.push_back({"CIF density " + std::to_string(density), 22, 18,
                                                      cavlc_test::random_frame(rng, 22 * 18, density)});
  Frame extreme{"CIF extreme blocks", 22, 18, {}}, dense{"CIF dense", 22, 18, {}};
  for (int a = 0; a < 22 * 18; ++a) extreme.recs.push_back(cavlc_test::extreme_mb(rng, a));
  for (int a = 0; a < 22 * 18; ++a) dense.recs.push_back(cavlc_test::dense_mb(rng, a));
  frames.push_back(std::move(extreme));
  frames.push_back(std::move(dense));
  frames.push_back({"1x1", 1, 1, cavlc_test::random_frame(rng, 1, 60)});
  frames.push_back({"7x3", 7, 3, cavlc_test::random_frame(rng, 21, 40)});
  if (!under_sanitizer()) frames.push_back({"720p", 80, 45, cavlc_test::random_frame(rng, 80 * 45, 20)});
  int moved = 0;
  for (const Frame& f : frames) {
    for (const auto& m : f.recs) moved += cavlc_test::raster_differs(m);
    for (Layout l : {Layout::kOne, Layout::kTwo, Layout::kSeven, Layout::kPerRow, Layout::kRandomIds}) {
      const std::vector<int32_t> sid = slice_ids(l, f.w, f.h, rng);
      const std::string what = f.name + ", " + layout_name(l);
      const std::vector<gpuec_mb> mixed = cavlc_test::mixed_orders(f.recs, rng);
      check_frame(f.recs, f.w, f.h, sid, what + ", mixed scan / raster", &mixed);
      if (HasFailure()) return;
      if (l == Layout::kOne || l == Layout::kRandomIds) {
        const std::vector<gpuec_mb> raster = cavlc_test::mixed_orders(f.recs, rng, 100);
        check_frame(f.recs, f.w, f.h, sid, what + ", all raster", &raster);
        if (HasFailure()) return;
      }
    }
  }
  EXPECT_GT(moved, 1000);  // the raster copies do move levels: a kernel that ignored the order would fail
}

// A coef_order other than scan (0) and raster (1) makes a record malformed: the output is unspecified
// (cavlc/frame_cuda.h) but the kernel does not fault and writes nothing past the bits / len arrays
// (canary-filled guard bands behind them; compute-sanitizer sees the rest).
TEST(CavlcFrameCuda, OutOfRangeCoefOrderStaysInBounds) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 5);
  const int w = 22, h = 18, n = w * h;
  std::vector<gpuec_mb> recs;
  for (int a = 0; a < n; ++a) recs.push_back(a % 2 ? cavlc_test::extreme_mb(rng, a) : cavlc_test::dense_mb(rng, a));
  for (auto& m : recs) m.coef_order = static_cast<uint8_t>(2 + rng() % 254);
  const std::vector<int32_t> sid = slice_ids(Layout::kSeven, w, h, rng);
  const size_t nslots = static_cast<size_t>(n) * cavlc::kMbSlots;
  DevBuf<gpuec_mb> d_recs(static_cast<size_t>(n));
  DevBuf<int32_t> d_sid(static_cast<size_t>(n));
  DevBuf<uint8_t> d_bits(nslots * cavlc::kSlotBytes + 4096);  // the slots, then a guard band
  DevBuf<uint16_t> d_len(nslots + 2048);
  const size_t ws_bytes = cavlc::code_frame_cuda_workspace_bytes(w, h);
  DevBuf<uint8_t> d_ws(ws_bytes);
  ASSERT_EQ(cudaMemcpy(d_recs.p, recs.data(), n * sizeof(gpuec_mb), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_sid.p, sid.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<uint8_t> bits(nslots * cavlc::kSlotBytes + 4096);
  std::vector<uint16_t> len(nslots + 2048);
  for (const auto v : kVariants) {
    ASSERT_EQ(cudaMemset(d_bits.p, kCanary, bits.size()), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_len.p, kCanary, len.size() * 2), cudaSuccess);
    const gpu::CudaError err =
        cavlc::code_frame_cuda_variant(v, d_recs.p, w, h, d_sid.p, d_bits.p, d_len.p, d_ws.p, ws_bytes, nullptr);
    ASSERT_FALSE(err) << err.str();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cavlc::frame_cuda_variant_name(v);
    ASSERT_EQ(cudaMemcpy(bits.data(), d_bits.p, bits.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(len.data(), d_len.p, len.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = nslots * cavlc::kSlotBytes; i < bits.size(); ++i)
      ASSERT_EQ(bits[i], kCanary) << cavlc::frame_cuda_variant_name(v) << ": guard byte " << i;
    for (size_t i = nslots; i < len.size(); ++i)
      ASSERT_EQ(len[i], kLenCanary) << cavlc::frame_cuda_variant_name(v) << ": guard len " << i;
  }
}

TEST(CavlcFrameCuda, RejectsArgumentsOutOfContract) {
  REQUIRE_GPU();
  const int w = 2, h = 2;
  DevBuf<gpuec_mb> recs(4);
  DevBuf<int32_t> sid(4);
  DevBuf<uint8_t> bits(4 * cavlc::kMbSlots * cavlc::kSlotBytes);
  DevBuf<uint16_t> len(4 * cavlc::kMbSlots);
  const size_t ws_bytes = cavlc::code_frame_cuda_workspace_bytes(w, h);
  DevBuf<uint8_t> ws(ws_bytes);
  EXPECT_EQ(cavlc::code_frame_cuda_workspace_bytes(0, 1), 0u);
  EXPECT_TRUE(cavlc::code_frame_cuda(recs.p, 0, h, sid.p, bits.p, len.p, ws.p, ws_bytes, nullptr));
  EXPECT_TRUE(cavlc::code_frame_cuda(recs.p, w, h, sid.p, bits.p, len.p, ws.p, ws_bytes - 1, nullptr));
  EXPECT_TRUE(cavlc::code_frame_cuda(nullptr, w, h, sid.p, bits.p, len.p, ws.p, ws_bytes, nullptr));
  EXPECT_TRUE(cavlc::code_frame_cuda(recs.p, w, h, sid.p, bits.p + 2, len.p, ws.p, ws_bytes, nullptr));
  EXPECT_TRUE(cavlc::code_frame_cuda(recs.p, 4096, 4096, sid.p, bits.p, len.p, ws.p, ws_bytes, nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
