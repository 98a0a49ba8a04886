// The CAVLCU kernel (cavlc/frame_cuda.h) against its CPU twin code_frame_ref, bit for bit, for every
// variant: slot bytes and lengths, outputs canary-filled first (bytes past a slot's written words must
// keep the canary), workspace filled with garbage first. Blocks: x264-like sparse statistics, all-zero
// coded blocks, 16 non-zero blocks, levels up to the overflow limit, every nC range and category,
// skipped and I_PCM macroblocks. Frames: 1x1 up to 2160p with 1, 2, 7 slices, a slice per row, slices
// starting mid-row and random per-macroblock slice ids.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N. Under compute-sanitizer frames are kept small.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

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

namespace {


constexpr uint8_t kCanary = 0xA5;
constexpr uint16_t kLenCanary = 0xA5A5;
constexpr int kSanitizerMaxMbs = 80 * 45;

uint32_t test_seed() { return gpuec_test::test_seed("frame_cuda_test"); }

using gpuec_test::under_sanitizer;

const cavlc::FrameCudaVariant kVariants[] = {cavlc::FrameCudaVariant::kFused, cavlc::FrameCudaVariant::kTwoPass,
                                             cavlc::FrameCudaVariant::kFusedPersistent};

// Extreme blocks: all-zero coded blocks, 16 (15, 4) non-zero blocks, runs of +-1 (trailing ones), levels
// up to +-2063 (the largest magnitude that never overflows, cavlc.cpp kMinOverflowAbsLevel - 1), and
// the escape boundaries of every suffixLength.
void extreme_block(std::mt19937& rng, int16_t* c, int n) {
  const int mode = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    int v = 0;
    switch (mode) {
      case 0: v = 0; break;                                                          // coded, empty
      case 1: v = 1 + static_cast<int>(rng() % 4); break;                            // all non-zero
      case 2: v = rng() % 3 ? 1 : 0; break;                                          // +-1 patterns
      case 3: v = rng() % 2 ? 2063 - static_cast<int>(rng() % 8) : 0; break;         // huge
      case 4: {                                                                      // escape edges
        static const int kEdges[] = {1, 2, 3, 7, 8, 14, 15, 16, 22, 23, 30, 45, 46, 47, 48, 94, 95, 96, 190, 191, 192, 382, 383, 1000, 2047, 2048, 2063};
        v = rng() % 4 ? kEdges[rng() % (sizeof kEdges / sizeof kEdges[0])] : 0;
        break;
      }
      default: v = rng() % 5 == 0 ? 1 + static_cast<int>(rng() % 2063) : 0; break;  // sparse, any size
    }
    c[i] = static_cast<int16_t>(rng() % 2 ? v : -v);
  }
}

gpuec_mb extreme_mb(std::mt19937& rng, int addr) {
  gpuec_mb m = cavlc_test::random_mb(rng, addr, 30);
  if (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) return m;
  auto& c = m.u.coef;
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  std::memset(&m.u, 0, sizeof m.u);
  const int cbp_chroma = static_cast<int>(rng() % 3);
  const int cbp_luma = i16 ? (rng() % 4 ? 15 : 0) : static_cast<int>(rng() % 16);
  for (int b = 0; b < 16; ++b)
    if ((cbp_luma >> (b >> 2)) & 1) extreme_block(rng, i16 ? c.luma[b] + 1 : c.luma[b], i16 ? 15 : 16);
  if (i16) extreme_block(rng, c.luma_dc, 16);
  if (cbp_chroma)
    for (auto& dc : c.chroma_dc) extreme_block(rng, dc, 4);
  if (cbp_chroma == 2)
    for (auto& ac : c.chroma_ac) extreme_block(rng, ac + 1, 15);
  m.cbp = static_cast<uint8_t>(cbp_luma | cbp_chroma << 4);
  return m;
}

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

template <class T>
struct DevBuf {
  T* p = nullptr;
  explicit DevBuf(size_t n) { EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// Runs every variant on the frame and compares with code_frame_ref; reports the first differing slot.
void check_frame(const std::vector<gpuec_mb>& recs, int w, int h, const std::vector<int32_t>& sid,
                 const std::string& what) {
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
  ASSERT_EQ(cudaMemcpy(d_recs.p, recs.data(), n * sizeof(gpuec_mb), cudaMemcpyHostToDevice), cudaSuccess);
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
               << " cbp 0x" << std::hex << int(recs[a].cbp) << std::dec << " slice " << sid[a] << " totals "
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
    for (int a = 0; a < w * h; ++a) recs.push_back(extreme_mb(rng, a));
    check_frame(recs, w, h, slice_ids(Layout::kOne, w, h, rng), "extreme blocks round " + std::to_string(round));
    if (HasFailure()) return;
  }
}

TEST(CavlcFrameCuda, DenseFramesReachEveryNcTable) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 2);
  const int w = 22, h = 18;
  std::vector<gpuec_mb> recs;
  for (int a = 0; a < w * h; ++a) {  // all coded, mostly 16 non-zero: nC 8..16
    gpuec_mb m;
    std::memset(&m, 0, sizeof m);
    m.mb_addr = a;
    m.kind = a % 5 ? GPUEC_MB_NORMAL : GPUEC_MB_I16x16;
    auto& c = m.u.coef;
    for (int b = 0; b < 16; ++b)
      cavlc_test::random_block(rng, m.kind == GPUEC_MB_I16x16 ? c.luma[b] + 1 : c.luma[b],
                               m.kind == GPUEC_MB_I16x16 ? 15 : 16, 100, rng() % 3 != 0, false);
    cavlc_test::random_block(rng, c.luma_dc, 16, 100, true, false);
    for (auto& dc : c.chroma_dc) cavlc_test::random_block(rng, dc, 4, 100, true, false);
    for (auto& ac : c.chroma_ac) cavlc_test::random_block(rng, ac + 1, 15, 100, true, false);
    m.cbp = 0x2F;
    recs.push_back(m);
  }
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
