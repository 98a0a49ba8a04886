// The frame coder (cavlc/frame.h, the CAVLCU kernel's CPU twin) and the slice assembly
// (tests/common/slice_assembly.h) against the slice coder that the
// end-to-end tests validate against stock x264: per slice, the concatenation of every macroblock's
// slots must equal the residual encode_slice_ref writes. Random x264-like frames, several layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "slice_assembly.h"
#include "cavlc/frame.h"
#include "cavlc/slice.h"
#include "random_mb.h"
#include "vle/bitwriter.h"

namespace {

// The slice as the frame coder's slots give it: every macroblock's slots in order, and for an I_PCM
// macroblock zero bits to a byte boundary and its 384 samples (what the slice assembly will do).
std::string frame_bits(const std::vector<gpuec_mb>& recs, const std::vector<uint8_t>& bits,
                       const std::vector<uint16_t>& len, int first, int last) {
  std::string s;
  for (int a = first; a <= last; ++a) {
    if (recs[a].kind == GPUEC_MB_PCM) {
      while (s.size() % 8) s += '0';
      for (uint8_t v : recs[a].u.pcm)
        for (int b = 7; b >= 0; --b) s += ((v >> b) & 1) ? '1' : '0';
      continue;
    }
    for (int k = 0; k < cavlc::kMbSlots; ++k) {
      const size_t slot = static_cast<size_t>(a) * cavlc::kMbSlots + k;
      for (int i = 0; i < len[slot]; ++i)
        s += ((bits[slot * cavlc::kSlotBytes + (i >> 3)] >> (7 - (i & 7))) & 1) ? '1' : '0';
    }
  }
  return s;
}

// encode_slice_ref's output for MBs [first, last] over an empty skeleton.
std::string slice_bits(const std::vector<gpuec_mb>& recs, int mb_width, int first, int last, int nmb) {
  std::vector<gpuec_mb> s(recs.begin() + first, recs.begin() + last + 1);
  for (auto& m : s) m.skel_bit = 0;
  std::vector<uint8_t> out(1 << 22);
  std::vector<cavlc::MbTotals> totals(static_cast<size_t>(nmb));
  vle::BitWriter bw(out.data(), out.size());
  const uint8_t skel[8] = {};
  const cavlc::SliceLayout layout{mb_width, first, 0, 0};
  EXPECT_EQ(cavlc::encode_slice_ref(s.data(), s.size(), layout, skel, totals.data(), bw), 0);
  const uint64_t n = bw.bits();
  bw.flush();
  std::string r;
  for (uint64_t i = 0; i < n; ++i) r += ((out[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
  return r;
}

void check_layout(int mb_width, int mb_height, const std::vector<int>& slice_starts, uint32_t seed, int density) {
  const int nmb = mb_width * mb_height;
  std::mt19937 rng(seed);
  std::vector<gpuec_mb> recs = cavlc_test::random_frame(rng, nmb, density);
  std::vector<int32_t> ids(static_cast<size_t>(nmb));
  for (size_t k = 0; k < slice_starts.size(); ++k)
    for (int a = slice_starts[k]; a < (k + 1 < slice_starts.size() ? slice_starts[k + 1] : nmb); ++a)
      ids[static_cast<size_t>(a)] = static_cast<int32_t>(k);
  std::vector<uint8_t> bits(static_cast<size_t>(nmb) * cavlc::kMbSlots * cavlc::kSlotBytes);
  std::vector<uint16_t> len(static_cast<size_t>(nmb) * cavlc::kMbSlots);
  ASSERT_EQ(cavlc::code_frame_ref(recs.data(), mb_width, mb_height, ids.data(), bits.data(), len.data()), 0);
  for (size_t k = 0; k < slice_starts.size(); ++k) {
    const int first = slice_starts[k], last = (k + 1 < slice_starts.size() ? slice_starts[k + 1] : nmb) - 1;
    ASSERT_EQ(frame_bits(recs, bits, len, first, last), slice_bits(recs, mb_width, first, last, nmb))
        << mb_width << "x" << mb_height << " slice " << k << " [" << first << ", " << last << "], seed " << seed;
  }
}

TEST(CavlcFrame, MatchesTheSliceCoderOnOneSlice) {
  for (uint32_t seed = 1; seed <= 20; ++seed) check_layout(11, 9, {0}, seed, 30);
}

TEST(CavlcFrame, MatchesTheSliceCoderOnManySliceLayouts) {
  check_layout(22, 18, {0, 99, 200, 301}, 7, 40);             // slices starting mid-row
  check_layout(22, 18, {0, 22, 44, 66, 88, 110, 132}, 8, 20);  // a slice per row (first 7 rows)
  std::vector<int> per_row;
  for (int r = 0; r < 18; ++r) per_row.push_back(r * 22);
  check_layout(22, 18, per_row, 9, 25);
  check_layout(1, 1, {0}, 10, 50);
  check_layout(5, 1, {0, 3}, 11, 50);
  check_layout(1, 6, {0, 2, 3}, 12, 50);
}

TEST(CavlcFrame, SlotsAreWholeWordsAndUntouchedBeyond) {
  const int w = 4, h = 3, nmb = w * h;
  std::mt19937 rng(99);
  std::vector<gpuec_mb> recs = cavlc_test::random_frame(rng, nmb, 60);
  std::vector<int32_t> ids(nmb, 0);
  std::vector<uint8_t> bits(static_cast<size_t>(nmb) * cavlc::kMbSlots * cavlc::kSlotBytes, 0xA5);
  std::vector<uint16_t> len(static_cast<size_t>(nmb) * cavlc::kMbSlots, 0xFFFF);
  ASSERT_EQ(cavlc::code_frame_ref(recs.data(), w, h, ids.data(), bits.data(), len.data()), 0);
  for (size_t s = 0; s < len.size(); ++s) {
    ASSERT_LE(len[s], 641u);
    const size_t used = (len[s] + 31u) / 32u * 4u;
    for (size_t i = 0; i < cavlc::kSlotBytes; ++i) {
      const uint8_t b = bits[s * cavlc::kSlotBytes + i];
      if (i >= used) {
        ASSERT_EQ(b, 0xA5) << "slot " << s << " byte " << i;
      } else if (i * 8 >= len[s]) {
        ASSERT_EQ(b, 0) << "padding of slot " << s;
      }
    }
  }
}

TEST(CavlcFrame, RejectsRecordsOutOfOrder) {
  std::mt19937 rng(5);
  std::vector<gpuec_mb> recs = cavlc_test::random_frame(rng, 4, 30);
  recs[2].mb_addr = 3;
  std::vector<int32_t> ids(4, 0);
  std::vector<uint8_t> bits(4 * cavlc::kMbSlots * cavlc::kSlotBytes);
  std::vector<uint16_t> len(4 * cavlc::kMbSlots);
  EXPECT_EQ(cavlc::code_frame_ref(recs.data(), 2, 2, ids.data(), bits.data(), len.data()), -1);
}

}  // namespace

namespace {

// Frame coder + assembly equals the slice coder, skeleton and I_PCM included, for every slice of
// random frames with random skeletons and insertion points.
TEST(CavlcAssemble, FrameSlotsPlusAssemblyEqualTheSliceCoder) {
  for (uint32_t seed = 100; seed < 130; ++seed) {
    std::mt19937 rng(seed);
    const int w = 1 + static_cast<int>(rng() % 30), h = 1 + static_cast<int>(rng() % 12), nmb = w * h;
    std::vector<gpuec_mb> recs = cavlc_test::random_frame(rng, nmb, 10 + static_cast<int>(rng() % 50));
    // Slices: random cut points.
    std::vector<int> starts = {0};
    for (int a = 1; a < nmb; ++a)
      if (rng() % 17 == 0) starts.push_back(a);
    std::vector<int32_t> ids(static_cast<size_t>(nmb));
    for (size_t k = 0; k < starts.size(); ++k)
      for (int a = starts[k]; a < (k + 1 < starts.size() ? starts[k + 1] : nmb); ++a) ids[a] = static_cast<int32_t>(k);
    std::vector<uint8_t> slots(static_cast<size_t>(nmb) * cavlc::kMbSlots * cavlc::kSlotBytes);
    std::vector<uint16_t> len(static_cast<size_t>(nmb) * cavlc::kMbSlots);
    ASSERT_EQ(cavlc::code_frame_ref(recs.data(), w, h, ids.data(), slots.data(), len.data()), 0);
    for (size_t k = 0; k < starts.size(); ++k) {
      const int first = starts[k], last = (k + 1 < starts.size() ? starts[k + 1] : nmb) - 1;
      // A skeleton with random bits; insertion points increasing, starting past a random header.
      const cavlc_test::RandomSkeleton sk = cavlc_test::random_skeleton(rng, recs.data(), first, last);
      const std::vector<uint8_t>& skel = sk.bytes;
      const int64_t start = sk.start, end = sk.end;
      ASSERT_LT(end, 4096 * 8);
      std::vector<uint8_t> want(1 << 20), got(1 << 20, 0xA5);
      std::vector<cavlc::MbTotals> totals(static_cast<size_t>(nmb));
      vle::BitWriter bw(want.data(), want.size());
      const cavlc::SliceLayout layout{w, first, start, end};
      ASSERT_EQ(cavlc::encode_slice_ref(recs.data() + first, static_cast<size_t>(last - first + 1), layout,
                                        skel.data(), totals.data(), bw), 0);
      const int64_t want_bits = static_cast<int64_t>(bw.bits());
      bw.flush();
      const cavlc_test::SliceSpan span{first, last, start, end};
      const int64_t got_bits = cavlc_test::assemble_slice_ref(recs.data(), slots.data(), len.data(), span, skel.data(),
                                                         got.data(), got.size());
      ASSERT_EQ(got_bits, want_bits) << "seed " << seed << " slice " << k;
      ASSERT_TRUE(std::equal(want.begin(), want.begin() + (want_bits + 7) / 8, got.begin()))
          << "seed " << seed << " slice " << k;
    }
  }
}

TEST(CavlcAssemble, RejectsInsertionPointsOutOfOrder) {
  std::mt19937 rng(3);
  std::vector<gpuec_mb> recs(2);
  for (int a = 0; a < 2; ++a) {
    recs[a] = cavlc_test::random_mb(rng, a, 30);
    recs[a].kind = GPUEC_MB_NORMAL;
    recs[a].cbp = 0;
  }
  recs[0].skel_bit = 40;
  recs[1].skel_bit = 30;
  std::vector<uint8_t> slots(2 * cavlc::kMbSlots * cavlc::kSlotBytes), skel(16), out(64);
  std::vector<uint16_t> len(2 * cavlc::kMbSlots, 0);
  EXPECT_EQ(cavlc_test::assemble_slice_ref(recs.data(), slots.data(), len.data(), {0, 1, 0, 100}, skel.data(), out.data(),
                                      out.size()), -1);
}

}  // namespace
