// The frame assembly's CPU twin (cavlc/assemble_frame.h) against the per-slice assembly
// assemble_slice_ref (tests/common/slice_assembly.h, itself checked against the slice coder): every slice of random
// frames in one call, with random skeletons and insertion points, I_PCM (alignment by output position),
// skipped macroblocks and all-skip slices, 1-macroblock slices, gaps between slices, empty leads and
// tails. The output is canary-filled first: nothing past packed_bytes(total) may be written.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "frame_arena.h"
#include "random_mb.h"
#include "test_seed.h"
#include "vle/bitwriter.h"

namespace {

using gpuec_test::kCanary;

uint32_t test_seed() { return gpuec_test::test_seed("assemble_frame_test"); }

// assemble_frame_ref on the arena == assemble_slice_ref slice by slice.
void check(const cavlc_test::FrameArena& f, const std::string& what) {
  std::vector<cavlc::SliceResult> want;
  std::vector<uint8_t> want_bytes;
  ASSERT_TRUE(f.expected(&want_bytes, &want)) << what << ": assemble_slice_ref failed";
  const uint64_t want_total = want.back().out_bit + ((want.back().bits + 31) & ~uint64_t{31});
  ASSERT_EQ(want_bytes.size(), vle::packed_bytes(want_total));

  std::vector<uint8_t> out(want_bytes.size() + 64, kCanary);
  std::vector<cavlc::SliceResult> got(f.slices.size(), {~uint64_t{0}, ~uint64_t{0}});
  const uint64_t total = cavlc::assemble_frame_ref(f.view(), out.data(), out.size(), got.data());
  ASSERT_EQ(total, want_total) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].out_bit, want[k].out_bit) << what << ": slice " << k;
    ASSERT_EQ(got[k].bits, want[k].bits) << what << ": slice " << k;
  }
  const uint64_t diff = cavlc_test::first_bit_difference(out.data(), want_bytes.data(), total);
  if (diff < total) {
    size_t k = 0;
    while (k + 1 < want.size() && want[k + 1].out_bit <= diff) ++k;
    FAIL() << what << ": first differing bit " << diff << " (slice " << k << ", bit " << diff - want[k].out_bit
           << " of " << want[k].bits << ", MBs [" << f.slices[k].first_mb << ", "
           << f.slices[k].first_mb + f.slices[k].mb_count << "))";
  }
  for (size_t i = want_bytes.size(); i < out.size(); ++i) ASSERT_EQ(out[i], kCanary) << what << ": byte " << i;
}

TEST(CavlcAssembleFrame, EqualsTheSliceAssemblyOnRandomFrames) {
  std::mt19937 rng(test_seed());
  struct Size {
    int w, h;
  };
  const Size sizes[] = {{1, 1}, {1, 9}, {9, 1}, {7, 3}, {22, 18}, {45, 30}};
  for (const Size& s : sizes) {
    for (cavlc_test::SliceLayout l : cavlc_test::kSliceLayouts) {
      for (int variant = 0; variant < 4; ++variant) {
        auto recs = cavlc_test::random_frame(rng, s.w * s.h, 1 + static_cast<int>(rng() % 50));
        const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(l, s.w, s.h, rng);
        int empty_pct = 10;
        std::string what = std::to_string(s.w) + "x" + std::to_string(s.h) + " MBs, " +
                           cavlc_test::slice_layout_name(l);
        switch (variant) {
          case 0: break;
          case 1: cavlc_test::make_pcm(recs, rng, 40); what += ", many I_PCM"; break;
          case 2: cavlc_test::make_skip_slices(recs, ranges, rng, 40); what += ", all-skip slices"; break;
          case 3: empty_pct = 100; cavlc_test::make_pcm(recs, rng, 10); what += ", empty leads and tails"; break;
        }
        cavlc_test::FrameArena f = cavlc_test::make_frame_arena(rng, s.w, s.h, std::move(recs), ranges, empty_pct);
        ASSERT_EQ(f.code_ref(), 0) << what;
        check(f, what);
        if (HasFailure()) return;
      }
    }
  }
}

// A known answer: an I_PCM macroblock after a 3-bit lead gets 5 alignment bits; the next slice starts at
// the next multiple of 32; a skipped macroblock's lead is ignored.
TEST(CavlcAssembleFrame, KnownAnswerWithPcmAndSkip) {
  std::vector<gpuec_mb> recs(3);
  std::memset(recs.data(), 0, recs.size() * sizeof(gpuec_mb));
  for (int a = 0; a < 3; ++a) recs[a].mb_addr = a;
  recs[0].kind = GPUEC_MB_PCM;
  for (int i = 0; i < 384; ++i) recs[0].u.pcm[i] = static_cast<uint8_t>(i * 7 + 1);
  recs[1].kind = GPUEC_MB_SKIP;
  recs[2].kind = GPUEC_MB_NORMAL;  // cbp 0: every slot empty
  // Arena: byte 0: skeleton 0b101'11010 (lead 3 bits, tail 5 bits), then records, slots, zeros.
  const size_t records_off = 256, slots_off = records_off + 3 * sizeof(gpuec_mb);
  std::vector<uint8_t> arena(slots_off + 3 * cavlc::kMbSlots * cavlc::kSlotBytes + 4, 0);
  arena[0] = 0xBA;
  arena[1] = 0xF0;  // slice 1: lead 4 bits 1111
  std::memcpy(arena.data() + records_off, recs.data(), 3 * sizeof(gpuec_mb));
  std::vector<uint16_t> len(3 * cavlc::kMbSlots, 0);
  const cavlc::MbLead lead[3] = {{0, 3, 0}, {12345, 77, 0}, {8, 4, 0}};
  const cavlc::FrameSlice slices[2] = {{0, 2, 3, 5, 0}, {2, 1, 12, 0, 0}};
  cavlc::FrameAssembly in{};
  in.arena = arena.data();
  in.records_bit = records_off * 8;
  in.slots_bit = slots_off * 8;
  in.zero_bit = (arena.size() - 4) * 8;
  in.records = reinterpret_cast<const gpuec_mb*>(arena.data() + records_off);
  in.slot_len = len.data();
  in.lead = lead;
  in.slices = slices;
  in.n_mbs = 3;
  in.n_slices = 2;
  // Slice 0: 101 00000 <384 samples> 11010 = 3 + 5 + 3072 + 5 = 3085 bits; padded to 3104.
  std::vector<uint8_t> want(vle::packed_bytes(3104 + 32), 0);
  want[0] = 0xA0;
  for (int i = 0; i < 384; ++i) want[1 + i] = recs[0].u.pcm[i];
  want[385] = 0xD0;     // 11010
  want[3104 / 8] = 0xF0;  // slice 1 at bit 3104: 1111
  std::vector<uint8_t> out(want.size() + 8, kCanary);
  cavlc::SliceResult res[2];
  ASSERT_EQ(cavlc::assemble_frame_ref(in, out.data(), out.size(), res), 3104u + 32u);
  EXPECT_EQ(res[0].out_bit, 0u);
  EXPECT_EQ(res[0].bits, 3085u);
  EXPECT_EQ(res[1].out_bit, 3104u);
  EXPECT_EQ(res[1].bits, 4u);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin()));
  for (size_t i = want.size(); i < out.size(); ++i) EXPECT_EQ(out[i], kCanary);
}

TEST(CavlcAssembleFrame, RejectsBadSlicesAndSmallOutputs) {
  std::mt19937 rng(test_seed() + 1);
  auto recs = cavlc_test::random_frame(rng, 12, 30);
  cavlc_test::FrameArena f = cavlc_test::make_frame_arena(rng, 4, 3, recs, {{0, 5}, {5, 4}, {9, 3}}, 0);
  ASSERT_EQ(f.code_ref(), 0);
  std::vector<cavlc::SliceResult> want;
  std::vector<uint8_t> want_bytes;
  ASSERT_TRUE(f.expected(&want_bytes, &want));
  std::vector<uint8_t> out(want_bytes.size() + 16, kCanary);
  std::vector<cavlc::SliceResult> res(3);
  auto run = [&](const std::vector<cavlc::FrameSlice>& slices, uint64_t out_bytes) {
    cavlc::FrameAssembly in = f.view();
    in.slices = slices.data();
    in.n_slices = static_cast<int32_t>(slices.size());
    return cavlc::assemble_frame_ref(in, out.data(), out_bytes, res.data());
  };
  auto s = f.slices;
  EXPECT_EQ(run(s, want_bytes.size()), want.back().out_bit + ((want.back().bits + 31) & ~uint64_t{31}));
  std::fill(out.begin(), out.end(), kCanary);
  EXPECT_EQ(run(s, want_bytes.size() - 4), UINT64_MAX);  // one word short: nothing written
  for (uint8_t b : out) ASSERT_EQ(b, kCanary);
  auto bad = s;
  bad[1].first_mb = 4;  // overlaps slice 0
  EXPECT_EQ(run(bad, out.size()), UINT64_MAX);
  bad = s;
  std::swap(bad[0], bad[2]);  // out of order
  EXPECT_EQ(run(bad, out.size()), UINT64_MAX);
  bad = s;
  bad[2].mb_count = 4;  // past the frame part
  EXPECT_EQ(run(bad, out.size()), UINT64_MAX);
  bad = s;
  bad[1].mb_count = 0;
  EXPECT_EQ(run(bad, out.size()), UINT64_MAX);
  bad = s;
  bad[0].first_mb = -1;
  EXPECT_EQ(run(bad, out.size()), UINT64_MAX);
  for (uint8_t b : out) ASSERT_EQ(b, kCanary);
}

}  // namespace
