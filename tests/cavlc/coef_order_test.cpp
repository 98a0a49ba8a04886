// Records in raster coefficient order (cavlc/mb.h GPUEC_COEF_RASTER) code exactly as their scan-order
// originals: the frame coder (code_frame_ref: every slot byte, canary included, and every length) and the
// slice coder (encode_slice_ref: the whole slice with skeleton) on all-raster frames and on random mixes
// of scan and raster records, for x264-like, extreme and dense frames and several slice layouts. The
// raster copies come from tests/common/raster.h, whose zigzag is derived independently of the library's.
// Also: the library's zigzag table, scan_order_record, a known answer, and rejection of coef_order > 1.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "cavlc/cavlc.h"
#include "cavlc/frame.h"
#include "cavlc/slice.h"
#include "random_mb.h"
#include "raster.h"
#include "test_seed.h"
#include "vle/bitwriter.h"

namespace {

using gpuec_test::kCanary;
constexpr uint16_t kLenCanary = gpuec_test::canary<uint16_t>();

uint32_t test_seed() { return gpuec_test::test_seed("coef_order_test"); }

// Slice starts of layout 0 (one slice), 1 (7 slices, starting mid-row), 2 (a slice per row) and 3 (runs
// of 5 macroblocks). Slices are raster runs, as encode_slice_ref takes them.
constexpr int kLayouts = 4;
std::vector<int> slice_starts(int layout, int w, int h) {
  const int n = w * h;
  std::vector<int> s = {0};
  for (int a = 1; a < n; ++a) {
    const bool start = layout == 1 ? a * 7 / n != (a - 1) * 7 / n : layout == 2 ? a % w == 0 : layout == 3 && a % 5 == 3;
    if (start) s.push_back(a);
  }
  return s;
}

std::vector<int32_t> ids_of(const std::vector<int>& starts, int n) {
  std::vector<int32_t> id(static_cast<size_t>(n));
  for (size_t k = 0; k < starts.size(); ++k)
    for (int a = starts[k]; a < (k + 1 < starts.size() ? starts[k + 1] : n); ++a) id[a] = static_cast<int32_t>(k);
  return id;
}

struct Slots {
  int ret;
  std::vector<uint8_t> bits;
  std::vector<uint16_t> len;
};

Slots code_frame(const std::vector<gpuec_mb>& recs, int w, int h, const std::vector<int32_t>& ids) {
  const size_t nslots = static_cast<size_t>(w) * h * cavlc::kMbSlots;
  Slots s{0, std::vector<uint8_t>(nslots * cavlc::kSlotBytes, kCanary), std::vector<uint16_t>(nslots, kLenCanary)};
  s.ret = cavlc::code_frame_ref(recs.data(), w, h, ids.data(), s.bits.data(), s.len.data());
  return s;
}

// Compares every slot (bytes, canary included, and length); reports the first differing one.
void expect_same_slots(const Slots& want, const Slots& got, const std::vector<gpuec_mb>& recs,
                       const std::string& what) {
  ASSERT_EQ(want.ret, 0) << what;
  ASSERT_EQ(got.ret, 0) << what;
  for (size_t s = 0; s < want.len.size(); ++s) {
    const uint8_t* wb = want.bits.data() + s * cavlc::kSlotBytes;
    const uint8_t* gb = got.bits.data() + s * cavlc::kSlotBytes;
    if (want.len[s] == got.len[s] && std::memcmp(wb, gb, cavlc::kSlotBytes) == 0) continue;
    int byte = 0;
    while (byte < cavlc::kSlotBytes && wb[byte] == gb[byte]) ++byte;
    const gpuec_mb& m = recs[s / cavlc::kMbSlots];
    FAIL() << what << ": first difference at mb " << s / cavlc::kMbSlots << " slot " << s % cavlc::kMbSlots
           << ": len " << got.len[s] << ", scan order " << want.len[s] << ", first differing byte " << byte
           << "; mb kind " << int(m.kind) << " cbp 0x" << std::hex << int(m.cbp) << std::dec << " coef_order "
           << int(m.coef_order);
  }
}

// encode_slice_ref over one slice with a random skeleton and insertion points (the same for both frames).
struct SliceOut {
  int ret;
  int64_t bits;
  std::vector<uint8_t> bytes;
};

SliceOut encode_slice(std::vector<gpuec_mb> recs, int w, int first, int last, uint32_t seed) {
  std::mt19937 rng(seed);
  const cavlc_test::RandomSkeleton sk = cavlc_test::random_skeleton(rng, recs.data(), first, last);
  const std::vector<uint8_t>& skel = sk.bytes;
  const int64_t start = sk.start, end = sk.end;
  SliceOut o{0, 0, std::vector<uint8_t>(1 << 20, kCanary)};
  std::vector<cavlc::MbTotals> totals(recs.size());
  vle::BitWriter bw(o.bytes.data(), o.bytes.size());
  const cavlc::SliceLayout layout{w, first, start, end};
  o.ret = cavlc::encode_slice_ref(recs.data() + first, static_cast<size_t>(last - first + 1), layout, skel.data(),
                                  totals.data(), bw);
  o.bits = static_cast<int64_t>(bw.bits());
  bw.flush();
  return o;
}

// The frame coder and the slice coder give the scan-order frame's output for its all-raster copy and
// for a random mix, on every layout. Returns the number of coded records whose raster copy moved levels.
int check_frame(const std::vector<gpuec_mb>& recs, int w, int h, std::mt19937& rng, const std::string& what) {
  const int n = w * h;
  const std::vector<gpuec_mb> all_raster = cavlc_test::mixed_orders(recs, rng, 100);
  const std::vector<gpuec_mb> mixed = cavlc_test::mixed_orders(recs, rng);
  int moved = 0;
  for (const auto& m : recs) moved += cavlc_test::raster_differs(m);
  for (int l = 0; l < kLayouts; ++l) {
    const std::vector<int> starts = slice_starts(l, w, h);
    const std::vector<int32_t> ids = ids_of(starts, n);
    const std::string at = what + ", layout " + std::to_string(l);
    const Slots want = code_frame(recs, w, h, ids);
    expect_same_slots(want, code_frame(all_raster, w, h, ids), all_raster, at + ", all raster");
    expect_same_slots(want, code_frame(mixed, w, h, ids), mixed, at + ", mixed");
    if (testing::Test::HasFailure()) return moved;
    for (size_t k = 0; k < starts.size(); ++k) {
      const int first = starts[k], last = (k + 1 < starts.size() ? starts[k + 1] : n) - 1;
      const uint32_t seed = static_cast<uint32_t>(rng());
      const SliceOut s_want = encode_slice(recs, w, first, last, seed);
      for (const auto* v : {&all_raster, &mixed}) {
        const SliceOut s_got = encode_slice(*v, w, first, last, seed);
        EXPECT_EQ(s_want.ret, 0) << at;
        EXPECT_EQ(s_got.ret, 0) << at;
        EXPECT_EQ(s_got.bits, s_want.bits) << at << ", slice " << k << (v == &mixed ? ", mixed" : ", all raster");
        EXPECT_TRUE(s_got.bytes == s_want.bytes) << at << ", slice " << k << (v == &mixed ? ", mixed" : ", all raster");
        if (testing::Test::HasFailure()) return moved;
      }
    }
  }
  return moved;
}

TEST(CavlcCoefOrder, ZigzagIsTheFrameScan) {
  for (int i = 0; i < 16; ++i) EXPECT_EQ(cavlc::kRasterOfScan[i], cavlc_test::kZigzag.raster[i]) << "scan index " << i;
}

TEST(CavlcCoefOrder, ScanOrderRecordUndoesTheRasterCopy) {
  std::mt19937 rng(test_seed());
  int permuted = 0;
  for (int i = 0; i < 2000; ++i) {
    gpuec_mb m = i % 2 ? cavlc_test::random_mb(rng, i, 40) : cavlc_test::extreme_mb(rng, i);
    const gpuec_mb r = cavlc_test::to_raster(m);
    gpuec_mb scratch;
    std::memset(&scratch, kCanary, sizeof scratch);
    const gpuec_mb& s = cavlc::scan_order_record(r, scratch);
    if (m.kind == GPUEC_MB_NORMAL || m.kind == GPUEC_MB_I16x16) {
      ASSERT_EQ(&s, &scratch);
      ASSERT_EQ(std::memcmp(&s, &m, sizeof m), 0) << "record " << i << " kind " << int(m.kind);
      ++permuted;
    } else {
      ASSERT_EQ(&s, &r) << "skipped and I_PCM records are returned as they are";
    }
    ASSERT_EQ(&cavlc::scan_order_record(m, scratch), &m) << "scan-order records are returned as they are";
  }
  EXPECT_GT(permuted, 0);
}

// A raster block with one level 1 at raster position 8 (x 0, y 2) is scan index 3: block 0 codes
// coeff_token(1, 1) "01" at nC 0, sign "0", total_zeros 3 for TotalCoeff 1 "0011" (Table 9-7); blocks
// 1 and 2 see nC 1, block 3 nC 0, all empty: "1" each. At raster position 3 (x 3, y 0), scan index 6:
// total_zeros 6 "00010". In scan order index 8 would be raster position 9.
TEST(CavlcCoefOrder, KnownAnswer) {
  auto encode = [](const gpuec_mb& m) {
    std::vector<uint8_t> out(256);
    std::vector<cavlc::MbTotals> totals(1);
    vle::BitWriter bw(out.data(), out.size());
    const uint8_t skel[8] = {};
    if (cavlc::encode_slice_ref(&m, 1, cavlc::SliceLayout{1, 0, 0, 0}, skel, totals.data(), bw) != 0)
      return std::string("error");
    const uint64_t nbits = bw.bits();
    bw.flush();
    std::string s;
    for (uint64_t i = 0; i < nbits; ++i) s += ((out[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
    return s;
  };
  gpuec_mb m;
  std::memset(&m, 0, sizeof m);
  m.kind = GPUEC_MB_NORMAL;
  m.cbp = 0x01;
  m.coef_order = GPUEC_COEF_RASTER;
  m.u.coef.luma[0][8] = 1;
  EXPECT_EQ(encode(m), "01" "0" "0011" "1" "1" "1");
  m.u.coef.luma[0][8] = 0;
  m.u.coef.luma[0][3] = 1;
  EXPECT_EQ(encode(m), "01" "0" "00010" "1" "1" "1");
  m.coef_order = GPUEC_COEF_SCAN;  // index 3 is now scan index 3
  EXPECT_EQ(encode(m), "01" "0" "0011" "1" "1" "1");
}

TEST(CavlcCoefOrder, X264LikeFramesAndLayouts) {
  std::mt19937 rng(test_seed() + 1);
  int moved = 0;
  for (int density : {1, 10, 30, 60, 100}) {
    const int w = 22, h = 18;
    const auto recs = cavlc_test::random_frame(rng, w * h, density);
    moved += check_frame(recs, w, h, rng, "22x18 density " + std::to_string(density));
    if (HasFailure()) return;
  }
  struct Size { int w, h; };
  for (const Size s : {Size{1, 1}, Size{5, 1}, Size{1, 6}, Size{7, 3}, Size{11, 9}}) {
    const auto recs = cavlc_test::random_frame(rng, s.w * s.h, 40);
    moved += check_frame(recs, s.w, s.h, rng, std::to_string(s.w) + "x" + std::to_string(s.h));
    if (HasFailure()) return;
  }
  EXPECT_GT(moved, 100);
}

TEST(CavlcCoefOrder, ExtremeAndDenseFrames) {
  std::mt19937 rng(test_seed() + 2);
  const int w = 22, h = 18;
  int moved = 0;
  for (int round = 0; round < 4; ++round) {
    std::vector<gpuec_mb> recs;
    for (int a = 0; a < w * h; ++a) recs.push_back(cavlc_test::extreme_mb(rng, a));
    moved += check_frame(recs, w, h, rng, "extreme blocks round " + std::to_string(round));
    if (HasFailure()) return;
  }
  std::vector<gpuec_mb> dense;
  for (int a = 0; a < w * h; ++a) dense.push_back(cavlc_test::dense_mb(rng, a));
  moved += check_frame(dense, w, h, rng, "dense");
  EXPECT_GT(moved, 100);
}

TEST(CavlcCoefOrder, CoefOrderBeyondRasterIsRejected) {
  std::mt19937 rng(test_seed() + 3);
  const int w = 4, h = 3, n = w * h;
  std::vector<gpuec_mb> recs = cavlc_test::random_frame(rng, n, 30);
  recs[5].kind = GPUEC_MB_NORMAL;
  recs[5].cbp = 0x01;
  const std::vector<int32_t> ids(static_cast<size_t>(n), 0);
  for (int order : {2, 3, 128, 255}) {
    std::vector<gpuec_mb> bad(recs);
    bad[5].coef_order = static_cast<uint8_t>(order);
    uint8_t t[GPUEC_TC_COUNT];
    EXPECT_EQ(cavlc::mb_totals(bad[5], t), -1) << order;
    EXPECT_EQ(code_frame(bad, w, h, ids).ret, -1) << order;
    EXPECT_EQ(encode_slice(bad, w, 0, n - 1, 7).ret, -1) << order;
  }
  // Skipped and I_PCM records ignore the field.
  recs[3].kind = GPUEC_MB_SKIP;
  recs[3].cbp = 0;
  recs[7].kind = GPUEC_MB_PCM;
  std::vector<gpuec_mb> odd(recs);
  odd[3].coef_order = 2;
  odd[7].coef_order = 255;
  expect_same_slots(code_frame(recs, w, h, ids), code_frame(odd, w, h, ids), odd,
                    "skip / I_PCM with coef_order 2 / 255");
  const SliceOut want = encode_slice(recs, w, 0, n - 1, 9), got = encode_slice(odd, w, 0, n - 1, 9);
  EXPECT_EQ(got.ret, 0);
  EXPECT_EQ(got.bits, want.bits);
  EXPECT_TRUE(got.bytes == want.bytes);
}

}  // namespace
