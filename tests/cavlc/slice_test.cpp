// Known answers for slice coding (cavlc/slice.h): splice positions, I_PCM alignment from final
// positions, slice-aware nC, block order per macroblock kind, and rejection of malformed records.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cavlc/slice.h"

namespace {

std::string bits_of(const std::vector<uint8_t>& buf, uint64_t n) {
  std::string s;
  for (uint64_t i = 0; i < n; ++i) s += ((buf[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
  return s;
}

std::vector<uint8_t> bytes_of(const std::string& bits) {
  std::vector<uint8_t> v((bits.size() + 7) / 8 + 8, 0);
  for (size_t i = 0; i < bits.size(); ++i)
    if (bits[i] == '1') v[i >> 3] |= static_cast<uint8_t>(0x80 >> (i & 7));
  return v;
}

gpuec_mb record(int addr, uint8_t kind, uint8_t cbp, int64_t skel_bit) {
  gpuec_mb m;
  std::memset(&m, 0, sizeof m);
  m.mb_addr = addr;
  m.kind = kind;
  m.cbp = cbp;
  m.skel_bit = skel_bit;
  return m;
}

// Encodes recs as one slice over skeleton bit string `skel`; returns the output bits ("" on error).
std::string encode(const std::vector<gpuec_mb>& recs, int mb_width, int first_mb, const std::string& skel) {
  const std::vector<uint8_t> sk = bytes_of(skel);
  std::vector<uint8_t> out(1 << 16);
  std::vector<cavlc::MbTotals> totals(64);
  vle::BitWriter bw(out.data(), out.size());
  const cavlc::SliceLayout layout{mb_width, first_mb, 0, static_cast<int64_t>(skel.size())};
  if (cavlc::encode_slice_ref(recs.data(), recs.size(), layout, sk.data(), totals.data(), bw) != 0) return "";
  const uint64_t n = bw.bits();
  bw.flush();
  return bits_of(out, n);
}

const std::string kSkel = "1101001110010111000111010110010011110000";  // 40 arbitrary bits

TEST(CavlcSlice, ResidualIsSplicedAtRecordPositions) {
  // MB0: no residual (cbp 0); MB1 skipped; MB2: luma quadrant 0 coded, all four blocks empty. Left
  // neighbour MB1 is skipped (available, 0), no top row: nC 0, TotalCoeff 0 token "1" four times.
  std::vector<gpuec_mb> recs = {record(0, GPUEC_MB_NORMAL, 0, 13), record(1, GPUEC_MB_SKIP, 0, 0),
                                record(2, GPUEC_MB_NORMAL, 0x01, 29)};
  EXPECT_EQ(encode(recs, 4, 0, kSkel), kSkel.substr(0, 29) + "1111" + kSkel.substr(29));
}

TEST(CavlcSlice, PcmAlignmentFollowsTheFinalPosition) {
  // 4 residual bits before the PCM move it from skeleton bit 11 to output bit 15: one zero bit aligns.
  std::vector<gpuec_mb> recs = {record(0, GPUEC_MB_NORMAL, 0x01, 5), record(1, GPUEC_MB_PCM, 0x2F, 11)};
  std::string samples;
  for (int i = 0; i < 384; ++i) {
    recs[1].u.pcm[i] = static_cast<uint8_t>(i * 7 + 3);
    for (int b = 7; b >= 0; --b) samples += ((recs[1].u.pcm[i] >> b) & 1) ? '1' : '0';
  }
  const std::string skel = kSkel.substr(0, 20);
  EXPECT_EQ(encode(recs, 4, 0, skel), skel.substr(0, 5) + "1111" + skel.substr(5, 6) + "0" + samples + skel.substr(11));
  // Without the residual before it the PCM sits at bit 11: five zero bits.
  recs[0].cbp = 0;
  EXPECT_EQ(encode(recs, 4, 0, skel), skel.substr(0, 11) + "00000" + samples + skel.substr(11));
}

TEST(CavlcSlice, NeighboursInAnotherSliceAreUnavailable) {
  // Frame 2 MBs wide; MB1 has block 0 = {1, 0...} (TotalCoeff 1, one trailing one), blocks 1-3 empty.
  gpuec_mb mb1 = record(1, GPUEC_MB_NORMAL, 0x01, 0);
  mb1.u.coef.luma[0][0] = 1;
  // Slice starts at MB1: MB0 is unavailable. blk0: nC 0 -> "01" + sign "0" + total_zeros(1,0) "1";
  // blk1: left blk0 (1), no top -> nC 1 -> "1"; blk2: top blk0 (1), left in MB0 -> nC 1 -> "1";
  // blk3: (0 + 0 + 1) >> 1 = 0 -> "1".
  EXPECT_EQ(encode({mb1}, 2, 1, ""), "0101" "111");

  // Same MB1 with MB0 in the slice and every MB0 block at TotalCoeff 16: blk0's left neighbour is
  // MB0's block at raster (3,0) with 16, no top -> nC 16 -> 6-bit FLC 0000 01; blk2's left is 16 and
  // top is blk0 (1) -> (16 + 1 + 1) >> 1 = 9 -> TotalCoeff 0 FLC "000011"; blk1 (left blk0: nC 1)
  // and blk3 (left blk2, top blk1, both in MB1 and empty: nC 0) code "1".
  gpuec_mb mb0 = record(0, GPUEC_MB_NORMAL, 0x0F, 0);
  for (auto& blk : mb0.u.coef.luma)
    for (auto& c : blk) c = 1;
  const std::string mb0_bits = encode({mb0}, 2, 0, "");
  ASSERT_FALSE(mb0_bits.empty());
  mb1.skel_bit = 0;
  const std::string both = encode({mb0, mb1}, 2, 0, "");
  ASSERT_EQ(both.substr(0, mb0_bits.size()), mb0_bits);
  EXPECT_EQ(both.substr(mb0_bits.size()), "000001" "0" "1" "1" "000011" "1");
}

TEST(CavlcSlice, TopNeighbourAcrossRowsInTheSameSlice) {
  // Frame 1 MB wide, slice from MB0: MB1's top is MB0 (available). MB0 block raster (0,3) = blkIdx 10
  // has TotalCoeff 2; MB1 block 0's nC = 2 (top only) -> TotalCoeff 0 token for 2 <= nC < 4 is "11".
  gpuec_mb mb0 = record(0, GPUEC_MB_NORMAL, 0x04, 0);
  mb0.u.coef.luma[10][0] = 3;
  mb0.u.coef.luma[10][1] = -2;
  gpuec_mb mb1 = record(1, GPUEC_MB_NORMAL, 0x01, 0);
  const std::string mb0_bits = encode({mb0}, 1, 0, "");
  const std::string both = encode({mb0, mb1}, 1, 0, "");
  ASSERT_EQ(both.substr(0, mb0_bits.size()), mb0_bits);
  // blk0 nC 2 -> "11"; blk1: left blk0 (0), top MB0 raster (1,3) = blkIdx 11 (0) -> nC 0 -> "1";
  // blk2, blk3: nC 0 -> "1".
  EXPECT_EQ(both.substr(mb0_bits.size()), "11" "1" "1" "1");
  // Started at MB1 the top is in another slice: nC 0 for every block.
  EXPECT_EQ(encode({mb1}, 1, 1, ""), "1111");
}

TEST(CavlcSlice, Intra16x16AndChromaBlockOrder) {
  // No neighbours. Luma DC empty ("1"); chroma DC empty uses the nC = -1 table ("01"); chroma AC
  // empty at nC 0 ("1"). cbp chroma 1: DC only; 2: DC then the 8 AC blocks.
  EXPECT_EQ(encode({record(0, GPUEC_MB_I16x16, 0x00, 0)}, 1, 0, ""), "1");
  EXPECT_EQ(encode({record(0, GPUEC_MB_I16x16, 0x10, 0)}, 1, 0, ""), "1" "01" "01");
  EXPECT_EQ(encode({record(0, GPUEC_MB_I16x16, 0x20, 0)}, 1, 0, ""), "1" "01" "01" "11111111");
  // Intra16x16 with cbp luma 15: DC then 16 AC blocks (15 coefficients each); one AC level 1 in the
  // last coefficient of block 0: TotalCoeff 1, T1 1 -> "01", sign "0", total_zeros(1, 14) for a
  // 15-coefficient block -> tzVlcIndex 1 value 14 = "000000010" (Table 9-7); blkIdx 1 (left: 1) and
  // blkIdx 2 (top: 1) get nC 1, the rest nC 0: all code TotalCoeff 0 as "1".
  gpuec_mb m = record(0, GPUEC_MB_I16x16, 0x0F, 0);
  m.u.coef.luma[0][15] = 1;
  EXPECT_EQ(encode({m}, 1, 0, ""), std::string("1") + "01" "0" "000000010" + std::string(15, '1'));
}

TEST(CavlcSlice, MalformedRecordsAreRejected) {
  EXPECT_EQ(encode({record(1, GPUEC_MB_NORMAL, 0, 0)}, 4, 0, kSkel), "") << "address not first_mb";
  EXPECT_EQ(encode({record(0, GPUEC_MB_NORMAL, 0, 30), record(1, GPUEC_MB_NORMAL, 0, 20)}, 4, 0, kSkel), "")
      << "insertion points going backwards";
  EXPECT_EQ(encode({record(0, GPUEC_MB_NORMAL, 0, 41)}, 4, 0, kSkel), "") << "beyond the skeleton";
  EXPECT_EQ(encode({record(0, 7, 0, 0)}, 4, 0, kSkel), "") << "unknown kind";
  uint8_t t[GPUEC_TC_COUNT];
  EXPECT_EQ(cavlc::mb_totals(record(0, GPUEC_MB_NORMAL, 0x30, 0), t), -1) << "cbp chroma 3";
  EXPECT_EQ(cavlc::mb_totals(record(0, GPUEC_MB_I16x16, 0x05, 0), t), -1) << "Intra16x16 cbp luma 5";
}

TEST(CavlcSlice, TotalsFollowTheCodedBlocksOnly) {
  gpuec_mb m = record(0, GPUEC_MB_NORMAL, 0x02 | 0x10, 0);
  m.u.coef.luma[0][0] = 5;  // quadrant 0 not coded: counts 0
  m.u.coef.luma[4][0] = 5;  // quadrant 1 coded
  m.u.coef.luma[4][3] = -1;
  m.u.coef.chroma_dc[1][2] = 2;
  m.u.coef.chroma_ac[0][1] = 1;  // cbp chroma 1: AC not coded
  uint8_t t[GPUEC_TC_COUNT];
  ASSERT_EQ(cavlc::mb_totals(m, t), 0);
  EXPECT_EQ(t[GPUEC_TC_LUMA + 0], 0);
  EXPECT_EQ(t[GPUEC_TC_LUMA + 4], 2);
  EXPECT_EQ(t[GPUEC_TC_CHROMA_DC + 1], 1);
  EXPECT_EQ(t[GPUEC_TC_CHROMA_AC + 0], 0);
  m.u.coef.luma[5][0] = 3000;  // a level past the baseline limit in a coded block
  EXPECT_EQ(cavlc::mb_totals(m, t), 1);
  gpuec_mb pcm = record(0, GPUEC_MB_PCM, 0, 0);
  ASSERT_EQ(cavlc::mb_totals(pcm, t), 0);
  for (int i = 0; i < GPUEC_TC_COUNT; ++i) EXPECT_EQ(t[i], 16);
}

}  // namespace

// Slice groups (FMO): with a slice map, a neighbour in another slice is unavailable even when its
// address is after first_mb. On a checkerboard map the left and top neighbours of every macroblock are
// in the other slice, so each slice codes exactly as if every macroblock were a slice of its own.
TEST(CavlcSliceGroups, CheckerboardNeighboursAreUnavailable) {
  const int w = 4, h = 3, n = w * h;
  std::vector<int32_t> map(n);
  for (int a = 0; a < n; ++a) map[a] = ((a % w) + (a / w)) & 1;
  auto coded = [](int addr) {
    gpuec_mb m = record(addr, GPUEC_MB_NORMAL, 0x2F, 0);
    for (int b = 0; b < 16; ++b)
      for (int k = 0; k < 1 + (addr + b) % 5; ++k) m.u.coef.luma[b][k] = int16_t(((addr + b + k) % 3) - 1 ? 2 : -1);
    for (int b = 0; b < 8; ++b) m.u.coef.chroma_ac[b][1 + (addr + b) % 3] = 1;
    m.u.coef.chroma_dc[0][addr % 4] = 3;
    return m;
  };
  for (int32_t slice = 0; slice < 2; ++slice) {
    SCOPED_TRACE(slice);
    std::vector<gpuec_mb> recs;
    std::string alone;
    for (int a = 0; a < n; ++a) {
      if (map[a] != slice) continue;
      recs.push_back(coded(a));
      const std::string one = encode({coded(a)}, w, a, "");
      ASSERT_FALSE(one.empty());
      alone += one;
    }
    const std::vector<uint8_t> sk(8, 0);
    std::vector<uint8_t> out(1 << 16);
    std::vector<cavlc::MbTotals> totals(n);
    vle::BitWriter bw(out.data(), out.size());
    cavlc::SliceLayout layout{w, recs[0].mb_addr, 0, 0};
    layout.slice_of_mb = map.data();
    layout.slice_id = slice;
    layout.n_mbs = n;
    ASSERT_EQ(cavlc::encode_slice_ref(recs.data(), recs.size(), layout, sk.data(), totals.data(), bw), 0);
    const uint64_t bits = bw.bits();
    bw.flush();
    EXPECT_EQ(bits_of(out, bits), alone);
    // Without the map the same records are not a raster run: refused.
    cavlc::SliceLayout raster{w, recs[0].mb_addr, 0, 0};
    vle::BitWriter bw2(out.data(), out.size());
    EXPECT_EQ(cavlc::encode_slice_ref(recs.data(), recs.size(), raster, sk.data(), totals.data(), bw2), -1);
  }
}

// A map describing raster runs gives the same bits as the raster-run path; a record of another slice,
// an address out of order or outside the picture is refused.
TEST(CavlcSliceGroups, RasterRunMapEqualsRasterPathAndBadOrdersAreRefused) {
  const int w = 3, n = 9;
  std::vector<int32_t> map = {0, 0, 0, 0, 1, 1, 1, 1, 1};
  std::vector<gpuec_mb> recs;
  for (int a = 4; a < n; ++a) {
    gpuec_mb m = record(a, GPUEC_MB_NORMAL, 0x0F, 0);
    for (int b = 0; b < 16; ++b) m.u.coef.luma[b][(a + b) % 16] = int16_t(1 + (a * b) % 4);
    recs.push_back(m);
  }
  const std::string raster = encode(recs, w, 4, "");
  ASSERT_FALSE(raster.empty());
  const std::vector<uint8_t> sk(8, 0);
  std::vector<uint8_t> out(1 << 16);
  std::vector<cavlc::MbTotals> totals(n);
  auto with_map = [&](const std::vector<gpuec_mb>& r) {
    vle::BitWriter bw(out.data(), out.size());
    cavlc::SliceLayout layout{w, r[0].mb_addr, 0, 0};
    layout.slice_of_mb = map.data();
    layout.slice_id = 1;
    layout.n_mbs = n;
    if (cavlc::encode_slice_ref(r.data(), r.size(), layout, sk.data(), totals.data(), bw) != 0) return std::string();
    const uint64_t bits = bw.bits();
    bw.flush();
    return bits_of(out, bits);
  };
  EXPECT_EQ(with_map(recs), raster);
  auto swapped = recs;
  std::swap(swapped[1], swapped[2]);
  EXPECT_EQ(with_map(swapped), "");
  auto foreign = recs;
  foreign[2].mb_addr = 2;  // slice 0, and out of order
  EXPECT_EQ(with_map(foreign), "");
  auto outside = recs;
  outside.back().mb_addr = n;
  EXPECT_EQ(with_map(outside), "");
}
