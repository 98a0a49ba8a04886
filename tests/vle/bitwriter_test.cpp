// Known answers and a random round trip for the CPU bit packer (vle/bitwriter.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "vle/bitwriter.h"

namespace {

std::string bit_string(const uint8_t* buf, uint64_t nbits) {
  std::string s;
  for (uint64_t i = 0; i < nbits; ++i) s += ((buf[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
  return s;
}

TEST(BitWriter, PutIsMsbFirstAndFlushPadsWithZeros) {
  uint8_t buf[4] = {0xAA, 0xAA, 0xAA, 0xAA};
  vle::BitWriter bw(buf, sizeof buf);
  bw.put(0x5, 3);   // 101
  bw.put(0x1, 1);   // 1
  bw.put(0x3, 6);   // 000011
  EXPECT_EQ(bw.bits(), 10u);
  bw.flush();
  EXPECT_EQ(bit_string(buf, 16), "1011000011000000");
  EXPECT_EQ(buf[2], 0xAA) << "flush wrote past the last partial byte";
  EXPECT_FALSE(bw.overflowed());
}

TEST(BitWriter, UeMatchesTable9_2) {
  // ue(v) codeNum 0..8 and a long one (H.264 Table 9-2).
  const char* expect[] = {"1", "010", "011", "00100", "00101", "00110", "00111", "0001000", "0001001"};
  for (uint32_t v = 0; v < 9; ++v) {
    uint8_t buf[8] = {};
    vle::BitWriter bw(buf, sizeof buf);
    bw.put_ue(v);
    const uint64_t n = bw.bits();
    bw.flush();
    EXPECT_EQ(bit_string(buf, n), expect[v]) << "codeNum " << v;
  }
  uint8_t buf[16] = {};
  vle::BitWriter bw(buf, sizeof buf);
  bw.put_ue(0xFFFFFFFEu);  // 31 zeros, then 32 bits of 0xFFFFFFFF
  EXPECT_EQ(bw.bits(), 63u);
  bw.flush();
  EXPECT_EQ(bit_string(buf, 63), std::string(31, '0') + std::string(32, '1'));
}

TEST(BitWriter, CapacityOverflowIsReportedAndNothingWrittenOutside) {
  uint8_t buf[3] = {0, 0, 0x77};
  vle::BitWriter bw(buf, 2);
  for (int i = 0; i < 5; ++i) bw.put(0xFF, 8);
  bw.flush();
  EXPECT_TRUE(bw.overflowed());
  EXPECT_EQ(bw.bits(), 40u) << "bits() keeps counting so callers can size a retry";
  EXPECT_EQ(buf[2], 0x77);
}

// copy_bits at every source/destination alignment and length 0..80 against a bit-by-bit model.
TEST(BitWriter, CopyBitsAnyAlignmentMatchesBitModel) {
  const uint32_t seed = 12345;
  std::mt19937 rng(seed);
  std::vector<uint8_t> src(32);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  const std::string src_bits = bit_string(src.data(), src.size() * 8);
  for (int dst_off = 0; dst_off < 8; ++dst_off)
    for (int src_off = 0; src_off < 8; ++src_off)
      for (int len = 0; len <= 80; ++len) {
        uint8_t out[32] = {};
        vle::BitWriter bw(out, sizeof out);
        bw.put(0, dst_off);
        bw.copy_bits(src.data(), src_off + 8, len);
        bw.put(1, 1);  // a marker after the copy catches length errors
        const uint64_t n = bw.bits();
        bw.flush();
        ASSERT_EQ(n, static_cast<uint64_t>(dst_off + len + 1));
        ASSERT_EQ(bit_string(out, n), std::string(dst_off, '0') + src_bits.substr(src_off + 8, len) + "1")
            << "seed " << seed << " dst_off " << dst_off << " src_off " << src_off << " len " << len;
      }
}

TEST(BitWriter, AlignZeroAndReadBits) {
  uint8_t buf[4] = {};
  vle::BitWriter bw(buf, sizeof buf);
  bw.put(1, 1);
  bw.align_zero();
  EXPECT_EQ(bw.bits(), 8u);
  bw.align_zero();
  EXPECT_EQ(bw.bits(), 8u);
  bw.put(0xABC, 12);
  bw.flush();
  EXPECT_EQ(vle::read_bits(buf, 8, 12), 0xABCu);
  EXPECT_EQ(vle::read_bits(buf, 0, 1), 1u);
  EXPECT_EQ(vle::read_bits(buf, 1, 7), 0u);
}

}  // namespace
