// Known-answer and property tests of the CAVLC residual block coder (cavlc/cavlc.h, cavlc/tables.h).
//
// Expected bit strings were derived by hand from ITU-T H.264 Tables 9-5, 9-7/9-8, 9-9(a), 9-10 and the
// level rules of 9.2.2.1; each test's comment gives the derivation, one syntax element per group:
//   coeff_token | trailing-one signs (highest frequency first, 1 = negative) | levels | total_zeros | runs
// Spaces in expected strings are ignored. levelCode = 2L-2 (L > 0) or -2L-1 (L < 0); "reduced" marks the
// first level after the trailing ones when TrailingOnes < 3 (its magnitude is coded minus one).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "cavlc/cavlc.h"
#include "cavlc_slow_decode.h"
#include "cavlc/tables.h"
#include "vle/bitwriter.h"

namespace {

using cavlc::tables::Vlc;

std::string strip(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

std::string zeros(int n) { return std::string(static_cast<size_t>(n), '0'); }

// A block of n coefficients in scan order: the listed values first, zeros after.
std::vector<int16_t> block(int n, std::initializer_list<int> values) {
  std::vector<int16_t> c(static_cast<size_t>(n), 0);
  size_t i = 0;
  for (int v : values) c.at(i++) = static_cast<int16_t>(v);
  return c;
}

std::string bit_string(const uint8_t* buf, uint64_t nbits) {
  std::string s;
  for (uint64_t i = 0; i < nbits; ++i) s += ((buf[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
  return s;
}

// Writes one block and returns its bits as '0'/'1'. Checks the invariants every block must satisfy:
// write_block returns TotalCoeff, block_bits equals the number of bits written.
std::string encode(const std::vector<int16_t>& c, int nC) {
  const int n = static_cast<int>(c.size());
  uint8_t buf[64] = {};
  vle::BitWriter bw(buf, sizeof buf);
  const int tc = cavlc::write_block(bw, c.data(), n, nC);
  const uint64_t nbits = bw.bits();
  bw.flush();
  EXPECT_FALSE(bw.overflowed());
  EXPECT_EQ(tc, cavlc::total_coeff(c.data(), n));
  EXPECT_EQ(static_cast<uint64_t>(cavlc::block_bits(c.data(), n, nC)), nbits);
  return bit_string(buf, nbits);
}

#define EXPECT_BLOCK(expected, coeffs, nC) EXPECT_EQ(strip(expected), encode(coeffs, nC))

// ---------------------------------------------------------------------------------------------------
// Table sanity: every code table is prefix-free (Kraft sum <= 1); the total_zeros tables 2..15 and all
// run_before rows are complete (Kraft sum exactly 1). Catches a mistyped entry before any block test.

bool is_prefix(Vlc a, Vlc b) {  // a is a prefix of b (a.len <= b.len)
  return a.len <= b.len && (b.val >> (b.len - a.len)) == a.val;
}

double check_code_set(const std::vector<Vlc>& codes, const std::string& what) {
  double kraft = 0;
  for (size_t i = 0; i < codes.size(); ++i) {
    kraft += 1.0 / static_cast<double>(1u << codes[i].len);
    for (size_t j = 0; j < codes.size(); ++j)
      if (i != j) {
        EXPECT_FALSE(is_prefix(codes[i], codes[j])) << what << ": code " << i << " prefixes " << j;
      }
  }
  EXPECT_LE(kraft, 1.0) << what;
  return kraft;
}

TEST(CavlcTables, CoeffTokenTablesArePrefixFree) {
  using cavlc::tables::kCoeffToken;
  for (int t = 0; t < cavlc::tables::kNumCoeffTokenTables; ++t) {
    std::vector<Vlc> codes;
    for (int tc = 0; tc <= 16; ++tc)
      for (int t1 = 0; t1 < 4; ++t1) {
        const Vlc v = kCoeffToken[t][tc][t1];
        const bool exists = t1 <= tc && t1 <= 3 && (t != 4 || tc <= 4) && (tc > 0 || t1 == 0);
        EXPECT_EQ(exists, v.len > 0) << "table " << t << " tc " << tc << " t1 " << t1;
        if (v.len) codes.push_back(v);
      }
    check_code_set(codes, "coeff_token table " + std::to_string(t));
  }
}

TEST(CavlcTables, TotalZerosAndRunBeforeTables) {
  using namespace cavlc::tables;
  for (int tc = 1; tc <= 15; ++tc) {
    std::vector<Vlc> codes(kTotalZeros4x4[tc - 1], kTotalZeros4x4[tc - 1] + 17 - tc);
    for (const Vlc& v : codes) EXPECT_GT(v.len, 0) << "tzVlcIndex " << tc;
    const double kraft = check_code_set(codes, "total_zeros 4x4 tzVlcIndex " + std::to_string(tc));
    if (tc > 1) {
      EXPECT_EQ(kraft, 1.0) << "tzVlcIndex " << tc;  // tzVlcIndex 1 leaves 0000 0000 0 unused
    }
  }
  for (int tc = 1; tc <= 3; ++tc) {
    std::vector<Vlc> codes(kTotalZerosChromaDC[tc - 1], kTotalZerosChromaDC[tc - 1] + 5 - tc);
    EXPECT_EQ(check_code_set(codes, "total_zeros 2x2 " + std::to_string(tc)), 1.0);
  }
  for (int zl = 1; zl <= 7; ++zl) {
    const int nruns = zl == 7 ? 15 : zl + 1;
    std::vector<Vlc> codes(kRunBefore[zl - 1], kRunBefore[zl - 1] + nruns);
    const double kraft = check_code_set(codes, "run_before zerosLeft " + std::to_string(zl));
    if (zl < 7) {
      EXPECT_EQ(kraft, 1.0) << zl;  // the > 6 row leaves 0000 0000 000 unused
    }
  }
}

TEST(CavlcTables, TableIndexHelpers) {
  using cavlc::tables::coeff_token_table;
  EXPECT_EQ(coeff_token_table(-1), 4);
  EXPECT_EQ(coeff_token_table(0), 0);
  EXPECT_EQ(coeff_token_table(1), 0);
  EXPECT_EQ(coeff_token_table(2), 1);
  EXPECT_EQ(coeff_token_table(3), 1);
  EXPECT_EQ(coeff_token_table(4), 2);
  EXPECT_EQ(coeff_token_table(7), 2);
  EXPECT_EQ(coeff_token_table(8), 3);
  EXPECT_EQ(coeff_token_table(16), 3);
  EXPECT_EQ(cavlc::predict_nc(true, 4, true, 6), 5);
  EXPECT_EQ(cavlc::predict_nc(true, 3, true, 4), 4);  // (3 + 4 + 1) >> 1
  EXPECT_EQ(cavlc::predict_nc(false, 9, true, 2), 2);
  EXPECT_EQ(cavlc::predict_nc(true, 9, false, 2), 9);
  EXPECT_EQ(cavlc::predict_nc(false, 9, false, 2), 0);
}

// ---------------------------------------------------------------------------------------------------
// Known answers.

// The CAVLCU paper's worked example, luma 4x4, nA = 4, nB = 6 -> nC = 5 (table 4 <= nC < 8).
// Non-zeros 5@0 1@1 -1@3 1@4 1@6: TotalCoeff 5, TrailingOnes 3 (1@6, 1@4, -1@3).
//   coeff_token (5,3) 1010 | signs + + - 001 | level 1 (T1 == 3: not reduced) levelCode 0, sL 0: 1;
//   sL -> 1 | level 5 levelCode 8, sL 1: prefix 4 0000 1, suffix 0 | total_zeros 2 (tzVlc 5): 0011 |
//   run_before: 1@6 run 1 zerosLeft 2: 01; 1@4 run 0 zL 1: 1; -1@3 run 1 zL 1: 0; zL 0: stop.
TEST(CavlcBlock, PaperWorkedExample) {
  const int nC = cavlc::predict_nc(true, 4, true, 6);
  ASSERT_EQ(nC, 5);
  EXPECT_BLOCK("1010 001 1 000010 0011 01 1 0", block(16, {5, 1, 0, -1, 1, 0, 1}), nC);
}

// TotalCoeff 0: only coeff_token, for every nC range and every category.
TEST(CavlcBlock, TotalCoeffZeroEveryRange) {
  for (int n : {15, 16}) {
    const auto empty = block(n, {});
    EXPECT_BLOCK("1", empty, 0);
    EXPECT_BLOCK("1", empty, 1);
    EXPECT_BLOCK("11", empty, 2);
    EXPECT_BLOCK("11", empty, 3);
    EXPECT_BLOCK("1111", empty, 4);
    EXPECT_BLOCK("1111", empty, 7);
    EXPECT_BLOCK("0000 11", empty, 8);
    EXPECT_BLOCK("0000 11", empty, 16);
  }
  EXPECT_BLOCK("01", block(4, {}), -1);
}

// Intra16x16 DC (16 coeffs), nC 0. Non-zeros 3@0 -1@2 1@3: TC 3, T1 2.
//   (3,2) nC 0..1: 0000 101 | signs + - : 01 | 3 reduced to 2, levelCode 2, sL 0: 001 |
//   total_zeros 1 (tzVlc 3): 111 | 1@3 run 0 zL 1: 1; -1@2 run 1 zL 1: 0.
TEST(CavlcBlock, Intra16x16DC) {
  EXPECT_BLOCK("0000101 01 001 111 1 0", block(16, {3, 0, -1, 1}), 0);
}

// Intra16x16 AC (15 coeffs), nC 2 and 3 (table 2 <= nC < 4). Non-zeros -2@0 1@3: TC 2, T1 1.
//   (2,1): 0011 1 | + : 0 | -2 reduced to -1, levelCode 1, sL 0: 01 | total_zeros 2 (tzVlc 2): 101 |
//   1@3 run 2 zL 2: 00.
TEST(CavlcBlock, Intra16x16AC) {
  const auto c = block(15, {-2, 0, 0, 1});
  EXPECT_BLOCK("00111 0 01 101 00", c, 2);
  EXPECT_BLOCK("00111 0 01 101 00", c, 3);
}

// Intra16x16 AC with all 15 coefficients non-zero (TotalCoeff == maxNumCoeff: no total_zeros, no runs),
// nC 6. All 2: TC 15, T1 0 -> sL starts at 1 (TC > 10, T1 < 3).
//   (15,0) nC 4..7: 0000 0001 01 | first 2 reduced to 1, levelCode 0, sL 1: 1 0; |2| <= 3 keeps sL 1 |
//   14 x level 2, levelCode 2, sL 1: prefix 1 01, suffix 0 -> 010.
TEST(CavlcBlock, Intra16x16ACFifteenCoefficients) {
  std::string levels = "10";
  for (int i = 0; i < 14; ++i) levels += "010";
  EXPECT_BLOCK("0000000101" + levels,
               block(15, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}), 6);
}

// Luma 4x4 with TotalCoeff 16 (no total_zeros), nC 0 and nC 8 (FLC). All 1: T1 3, 13 levels of 1.
//   nC 0: (16,3) 0000 0000 0000 1000 | +++ 000 | first level 1 not reduced, sL 0: 1, sL -> 1 |
//   12 x level 1 at sL 1: 10.   nC 8: FLC (15 << 2) | 3 = 1111 11.
TEST(CavlcBlock, Luma4x4SixteenCoefficients) {
  const auto c = block(16, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  std::string levels = "1";
  for (int i = 0; i < 12; ++i) levels += "10";
  EXPECT_BLOCK("0000000000001000 000" + levels, c, 0);
  EXPECT_BLOCK("111111 000" + levels, c, 8);
}

// Luma 4x4, nC >= 8 (6-bit FLC). Non-zeros 1@0 -1@1: TC 2, T1 2.
//   FLC ((2-1) << 2) | 2 = 0001 10 | -1@1 then 1@0: 10 | total_zeros 0 (tzVlc 2): 111 | zL 0: no runs.
TEST(CavlcBlock, Luma4x4FixedLengthTable) {
  const auto c = block(16, {1, -1});
  EXPECT_BLOCK("000110 10 111", c, 8);
  EXPECT_BLOCK("000110 10 111", c, 16);
  // Same block, other ranges: (2,2) is 001 (nC 0..1), 011 (2..3), 1101 (4..7).
  EXPECT_BLOCK("001 10 111", c, 1);
  EXPECT_BLOCK("011 10 111", c, 3);
  EXPECT_BLOCK("1101 10 111", c, 4);
}

// Chroma DC 2x2 (4 coeffs), nC -1, total_zeros from Table 9-9(a).
TEST(CavlcBlock, ChromaDC) {
  // 4@1 -1@3: TC 2, T1 1. (2,1): 0001 10 | -: 1 | 4 reduced to 3, levelCode 4, sL 0: 0000 1 |
  // total_zeros 2 (2x2, tzVlc 2): 00 | -1@3 run 1 zL 2: 01; zL 1, 4@1 is the last: stop.
  EXPECT_BLOCK("000110 1 00001 00 01", block(4, {0, 4, 0, -1}), -1);
  // 1 1 1 1: TC 4, T1 3. (4,3): 0000 000 | 000 | level 1 not reduced: 1 | TC == 4: no total_zeros.
  EXPECT_BLOCK("0000000 000 1", block(4, {1, 1, 1, 1}), -1);
  // 2@3: TC 1, T1 0. (1,0): 0001 11 | 2 reduced to 1, levelCode 0: 1 | total_zeros 3 (2x2, 1): 000.
  EXPECT_BLOCK("000111 1 000", block(4, {0, 0, 0, 2}), -1);
  // -1@1: (1,1): 1 | -: 1 | total_zeros 1 (2x2, 1): 01.
  EXPECT_BLOCK("1 1 01", block(4, {0, -1}), -1);
  // 5@0 -3@2 1@3: TC 3, T1 1. (3,1): 0000 011 | +: 0 | -3 reduced to -2, levelCode 3, sL 0: 0001;
  // sL -> 1, |-3| <= 3 | 5: levelCode 8, sL 1: 0000 1 0 | total_zeros 1 (2x2, 3): 0 |
  // 1@3 run 0 zL 1: 1; -3@2 run 1 zL 1: 0.
  EXPECT_BLOCK("0000011 0 0001 000010 0 1 0", block(4, {5, 0, -3, 1}), -1);
  // The remaining nC == -1 codes; a leading 2 is reduced to 1 (levelCode 0: 1 at sL 0), then sL 1:
  // 2 = 010, -2 first (reduced to -1, levelCode 1) = 01.
  // 2@0 2@1: (2,0) 0001 00 | 1 | 010 | tz 0 (2x2, 2): 1.
  EXPECT_BLOCK("000100 1 010 1", block(4, {2, 2}), -1);
  // -1@0 1@1: (2,2) 001 | 1@1 +, -1@0 -: 01 | tz 0: 1.
  EXPECT_BLOCK("001 01 1", block(4, {-1, 1}), -1);
  // 2 2 -2: (3,0) 0000 11 | -2: 01 | 010 | 010 | tz 0 (2x2, 3): 1.
  EXPECT_BLOCK("000011 01 010 010 1", block(4, {2, 2, -2}), -1);
  // 2 -1 1: T1 2, (3,2) 0000 010 | 1@2 +, -1@1 -: 01 | 2 reduced: 1 | tz 0: 1.
  EXPECT_BLOCK("0000010 01 1 1", block(4, {2, -1, 1}), -1);
  // 1 1 1: (3,3) 0001 01 | 000 | tz 0: 1.
  EXPECT_BLOCK("000101 000 1", block(4, {1, 1, 1}), -1);
  // 2 2 2 2: (4,0) 0000 10 | 1 | 010 010 010.
  EXPECT_BLOCK("000010 1 010 010 010", block(4, {2, 2, 2, 2}), -1);
  // 2 2 2 -1: (4,1) 0000 0011 | 1 | 1 | 010 010.
  EXPECT_BLOCK("00000011 1 1 010 010", block(4, {2, 2, 2, -1}), -1);
  // 2 2 1 1: (4,2) 0000 0010 | 00 | 1 | 010.
  EXPECT_BLOCK("00000010 00 1 010", block(4, {2, 2, 1, 1}), -1);
}

// Chroma AC (15 coeffs), nC 1. 1@2: TC 1, T1 1. (1,1): 01 | +: 0 | total_zeros 2 (tzVlc 1): 010.
TEST(CavlcBlock, ChromaAC) {
  EXPECT_BLOCK("01 0 010", block(15, {0, 0, 1}), 1);
  EXPECT_BLOCK("01 0 010", block(15, {0, 0, 1}), 0);
}

// Trailing ones 0..3 with signs, nC 0, luma 4x4.
TEST(CavlcBlock, TrailingOnes) {
  // T1 0: 2@0: (1,0) 0001 01 | 2 reduced, levelCode 0: 1 | tz 0 (tzVlc 1): 1.
  EXPECT_BLOCK("000101 1 1", block(16, {2}), 0);
  // T1 1: -1@0: (1,1) 01 | -: 1 | tz 0: 1.
  EXPECT_BLOCK("01 1 1", block(16, {-1}), 0);
  // T1 2: -1@0 1@1: (2,2) 001 | 1@1 +, -1@0 -: 01 | tz 0 (tzVlc 2): 111.
  EXPECT_BLOCK("001 01 111", block(16, {-1, 1}), 0);
  // T1 3 of four ones: 1@0 1@1 -1@2 -1@3: (4,3) 0000 11 | - - +: 110 | 1@0 is a level (not reduced,
  // T1 == 3): 1 | tz 0 (tzVlc 4): 0001 1.
  EXPECT_BLOCK("000011 110 1 00011", block(16, {1, 1, -1, -1}), 0);
  // A one below a larger level is a level, not a trailing one: 1@0 3@1 -1@2: TC 3, T1 1.
  // (3,1) 0000 0110 | -: 1 | 3 reduced to 2, levelCode 2, sL 0: 001; sL -> 1 | 1: levelCode 0, sL 1:
  // 10 | tz 0 (tzVlc 3): 0101.
  EXPECT_BLOCK("00000110 1 001 10 0101", block(16, {1, 3, -1}), 0);
}

// level_prefix 14 / 15 at suffixLength 0, a lone reduced level (levelCode = 2|L|-4 or 2|L|-3), nC 0:
// (1,0) 0001 01 | level | tz 0: 1.
TEST(CavlcBlock, LevelPrefixEscapesAtSuffixLengthZero) {
  // -8: levelCode 13: prefix 13 (13 zeros, 1), no suffix.
  EXPECT_BLOCK("000101" + zeros(13) + "1" + "1", block(16, {-8}), 0);
  // 9: levelCode 14: prefix 14 and 4-bit suffix 0000.
  EXPECT_BLOCK("000101" + zeros(14) + "1 0000" + "1", block(16, {9}), 0);
  // -16: levelCode 29: prefix 14, suffix 15 = 1111.
  EXPECT_BLOCK("000101" + zeros(14) + "1 1111" + "1", block(16, {-16}), 0);
  // 17: levelCode 30: prefix 15, 12-bit suffix 30 - 15 - 15 = 0.
  EXPECT_BLOCK("000101" + zeros(15) + "1 0000 0000 0000" + "1", block(16, {17}), 0);
  // -17: levelCode 31: prefix 15, suffix 1.
  EXPECT_BLOCK("000101" + zeros(15) + "1 0000 0000 0001" + "1", block(16, {-17}), 0);
}

// level_prefix 14 / 15 at suffixLength > 0.
TEST(CavlcBlock, LevelPrefixEscapesAtSuffixLengthAboveZero) {
  // sL 1: 2@1 is coded first (reduced, levelCode 0: 1) and sets sL 1. (2,0) nC 0: 0000 0111; tz 0
  // (tzVlc 2): 111.
  //   15@0: levelCode 28, sL 1: prefix 14, suffix 0: 14 zeros 1 0.
  EXPECT_BLOCK("00000111 1" + zeros(14) + "1 0" + "111", block(16, {15, 2}), 0);
  //   16@0: levelCode 30 >> 1 = 15: escape, suffix 30 - (15 << 1) = 0 in 12 bits.
  EXPECT_BLOCK("00000111 1" + zeros(15) + "1 0000 0000 0000" + "111", block(16, {16, 2}), 0);
  //   -16@0: levelCode 31: suffix 1.
  EXPECT_BLOCK("00000111 1" + zeros(15) + "1 0000 0000 0001" + "111", block(16, {-16, 2}), 0);
  // sL 3: coding order 2@3 (reduced: 1, sL 1), 4@2 (levelCode 6: 0001 0, sL 2), 7@1 (levelCode 12:
  // 0001 00, sL 3), then L@0. (4,0) nC 0: 0000 0001 11; tz 0 (tzVlc 4): 0001 1.
  //   60: levelCode 118, sL 3: prefix 14, suffix 6: 14 zeros 1 110.
  EXPECT_BLOCK("0000000111 1 00010 000100" + zeros(14) + "1 110" + "00011", block(16, {60, 7, 4, 2}), 0);
  //   61: levelCode 120 >> 3 = 15: escape, suffix 120 - 120 = 0.
  EXPECT_BLOCK("0000000111 1 00010 000100" + zeros(15) + "1 000000000000" + "00011", block(16, {61, 7, 4, 2}),
               0);
}

// suffixLength 0 -> 1 -> ... -> 6, with mixed signs. Coding order (high frequency first):
// 2, 4, -7, 13, -25, 49, -100, 3 at positions 7..0: TC 8, T1 0. (8,0) nC 0: 0000 0000 0100 0.
//   2 reduced, levelCode 0, sL 0: 1                     -> sL 1
//   4: levelCode 6, sL 1: prefix 3, suffix 0: 0001 0      -> 4 > 3: sL 2
//   -7: levelCode 13, sL 2: prefix 3, suffix 01: 0001 01  -> 7 > 6: sL 3
//   13: levelCode 24, sL 3: prefix 3, suffix 000          -> 13 > 12: sL 4
//   -25: levelCode 49, sL 4: prefix 3, suffix 0001        -> 25 > 24: sL 5
//   49: levelCode 96, sL 5: prefix 3, suffix 00000        -> 49 > 48: sL 6
//   -100: levelCode 199, sL 6: prefix 3, suffix 000111    -> stays 6
//   3: levelCode 4, sL 6: prefix 0, suffix 000100
//   tz 0 (tzVlc 8): 0000 01.
TEST(CavlcBlock, SuffixLengthProgression) {
  EXPECT_BLOCK("0000000001000 1 00010 000101 0001000 00010001 000100000 0001000111 1000100 000001",
               block(16, {3, -100, 49, -25, 13, -7, 4, 2}), 0);
}

// Thresholds are strict: |level| == 3 << (sL - 1) keeps sL. Coding order 2, 3, 4, 6, 7, 12, 13 at
// positions 6..0: TC 7, T1 0. (7,0) nC 0: 0000 0000 0101 1.
//   2 reduced: 1 (sL 1) | 3: levelCode 4: 001 0 (sL 1) | 4: levelCode 6: 0001 0 (sL 2) |
//   6: levelCode 10: 001 10 (sL 2) | 7: levelCode 12: 0001 00 (sL 3) | 12: levelCode 22: 001 110 (sL 3) |
//   13: levelCode 24: 0001 000 | tz 0 (tzVlc 7): 0000 01.
TEST(CavlcBlock, SuffixLengthThresholdsAreStrict) {
  EXPECT_BLOCK("0000000001011 1 0010 00010 00110 000100 001110 0001000 000001",
               block(16, {13, 12, 7, 6, 4, 3, 2}), 0);
}

// The suffixLength update after the reduced first level uses its real magnitude: 4@1 is coded as 3
// (levelCode 4, sL 0: 0000 1), but |4| > 3 moves sL 0 -> 1 -> 2, so 2@0 is levelCode 2 at sL 2: 1 10.
// (2,0) nC 0: 0000 0111 | ... | tz 0 (tzVlc 2): 111.
TEST(CavlcBlock, SuffixLengthUsesUnreducedMagnitude) {
  EXPECT_BLOCK("00000111 00001 110 111", block(16, {2, 4}), 0);
}

// TotalCoeff > 10 with TrailingOnes < 3 starts at suffixLength 1.
// 3 -1 1 1 1 1 1 1 2 -1 1 at positions 0..10: TC 11, T1 2 (1@10, -1@9). (11,2) nC 0: 0000 0000 0010 01 |
// + -: 01 | 2@8 reduced to 1, levelCode 0, sL 1: 10 | 1 x 6 at sL 1: 10 | -1@1: levelCode 1: 11 |
// 3@0: levelCode 4: prefix 2, suffix 0: 0010 | tz 0 (tzVlc 11): 0000.
TEST(CavlcBlock, ManyCoefficientsStartAtSuffixLengthOne) {
  EXPECT_BLOCK("00000000001001 01 10 10 10 10 10 10 10 11 0010 0000",
               block(16, {3, -1, 1, 1, 1, 1, 1, 1, 2, -1, 1}), 0);
  // With TrailingOnes == 3 it starts at 0: 2 then ten ones at positions 0..10: TC 11, T1 3.
  // (11,3) nC 0: 0000 0000 0011 00 | 000 | 1@7 (not reduced) sL 0: 1 (sL 1) | six 1 at sL 1: 10 |
  // 2@0: levelCode 2, sL 1: 01 0 | tz 0: 0000.
  EXPECT_BLOCK("00000000001100 000 1 101010101010 010 0000", block(16, {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), 0);
}

// run_before through the zerosLeft rows 6, 5, 3, 2, 1 and the > 6 row.
TEST(CavlcBlock, RunBefore) {
  // 1@0 1@15: TC 2, T1 2. (2,2) nC 0: 001 | ++: 00 | tz 14 (tzVlc 2): 0000 00 |
  // 1@15 run 14, zL 14 (> 6 row): 0000 0000 001.
  EXPECT_BLOCK("001 00 000000 00000000001", block(16, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), 0);
  // Non-zeros at 12, 10, 9, 6, 4, 2, 0: 1 -1 1 (T1 3, signs 010), then 1 -1 1 1 at 6, 4, 2, 0.
  // (7,3) nC 0: 0000 0010 0 | 010 | 1@6 not reduced: 1 (sL 1) | -1: 11 | 1: 10 | 1: 10 |
  // tz 6 (tzVlc 7): 010 | runs: 12->10 run 1 zL 6: 000; 10->9 run 0 zL 5: 11; 9->6 run 2 zL 5: 011;
  // 6->4 run 1 zL 3: 10; 4->2 run 1 zL 2: 01; 2->0 run 1 zL 1: 0.
  EXPECT_BLOCK("000000100 010 1 11 10 10 010 000 11 011 10 01 0",
               block(16, {1, 0, 1, 0, -1, 0, 1, 0, 0, 1, -1, 0, 1}), 0);
  // zerosLeft > 6 row with runs 1, 2, 3 and then row 4: non-zeros 1@15 1@13 1@10 1@6 1@1 1@0.
  // TC 6, T1 3, tz 10. (6,3) nC 0: 0000 0100 | 000 | 1@6 not reduced: 1 (sL 1) | 1@1: 10 | 1@0: 10 |
  // tz 10 (tzVlc 6): 0000 00 | 15->13 run 1 zL 10: 110; 13->10 run 2 zL 9: 101; 10->6 run 3 zL 7: 100;
  // 6->1 run 4 zL 4: 000; zL 0: stop.
  EXPECT_BLOCK("00000100 000 1 10 10 000000 110 101 100 000",
               block(16, {1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1}), 0);
}

// Back-to-back blocks at arbitrary bit offsets are the concatenation of the single-block codes.
TEST(CavlcBlock, ConsecutiveBlocksConcatenate) {
  const auto a = block(16, {5, 1, 0, -1, 1, 0, 1});
  const auto b = block(4, {5, 0, -3, 1});
  uint8_t buf[32] = {};
  vle::BitWriter bw(buf, sizeof buf);
  bw.put(0x5, 3);
  cavlc::write_block(bw, a.data(), 16, 5);
  cavlc::write_block(bw, b.data(), 4, -1);
  const uint64_t nbits = bw.bits();
  bw.flush();
  EXPECT_EQ(bit_string(buf, nbits), "101" + encode(a, 5) + encode(b, -1));
}

// ---------------------------------------------------------------------------------------------------
// Level overflow (level_prefix would exceed 15): x264 writes prefix 15 and the low 12 bits.

// Lone level at suffixLength 0 (reduced): escape suffix = levelCode - 30 with levelCode 2|L|-4 (L > 0)
// or 2|L|-3 (L < 0); the largest codable are 2064 (suffix 4094) and -2064 (4095).
TEST(CavlcOverflow, LoneLevelAtSuffixLengthZero) {
  const std::string head = "000101" + zeros(15) + "1";  // (1,0) nC 0, then level_prefix 15
  struct Case { int level; bool overflow; const char* suffix; };
  for (const Case& c : {Case{2064, false, "111111111110"}, Case{-2064, false, "111111111111"},
                        Case{2065, true, "000000000000"}, Case{-2065, true, "000000000001"},
                        Case{2066, true, "000000000010"}}) {
    const auto blk = block(16, {c.level});
    EXPECT_EQ(cavlc::level_overflow(blk.data(), 16), c.overflow) << c.level;
    EXPECT_BLOCK(head + c.suffix + "1", blk, 0);
  }
}

// Level at suffixLength 1, not reduced (2@1 is coded first): suffix = levelCode - 30, levelCode 2L-2
// or -2L-1; the largest codable are 2063 (4094) and -2063 (4095).
TEST(CavlcOverflow, LevelAtSuffixLengthOne) {
  const std::string head = "00000111 1" + zeros(15) + "1";  // (2,0) nC 0, 2@1, then prefix 15
  struct Case { int level; bool overflow; const char* suffix; };
  for (const Case& c : {Case{2063, false, "111111111110"}, Case{-2063, false, "111111111111"},
                        Case{2064, true, "000000000000"}, Case{-2064, true, "000000000001"}}) {
    const auto blk = block(16, {c.level, 2});
    EXPECT_EQ(cavlc::level_overflow(blk.data(), 16), c.overflow) << c.level;
    EXPECT_BLOCK(head + c.suffix + "111", blk, 0);
  }
}

TEST(CavlcOverflow, OtherCases) {
  // suffixLength 2 (after 2, 4): suffix = levelCode - 60 -> 2078 is the largest codable (2*2078-2-60 =
  // 4094), 2079 overflows.
  auto blk = block(16, {2078, 4, 2});
  EXPECT_FALSE(cavlc::level_overflow(blk.data(), 16));
  blk[0] = 2079;
  EXPECT_TRUE(cavlc::level_overflow(blk.data(), 16));
  // Trailing ones == 3: the first level is not reduced, at suffixLength 0: 2064 (levelCode 4126) overflows.
  blk = block(16, {2064, 1, 1, 1});
  EXPECT_TRUE(cavlc::level_overflow(blk.data(), 16));
  blk[0] = 2063;
  EXPECT_FALSE(cavlc::level_overflow(blk.data(), 16));
  // Extremes, empty, chroma DC.
  blk = block(16, {-32768, 32767});
  EXPECT_TRUE(cavlc::level_overflow(blk.data(), 16));
  EXPECT_EQ(cavlc::block_bits(blk.data(), 16, 0), static_cast<int>(strip(encode(blk, 0)).size()));
  EXPECT_FALSE(cavlc::level_overflow(block(16, {}).data(), 16));
  EXPECT_TRUE(cavlc::level_overflow(block(4, {0, 0, 3000}).data(), 4));
  EXPECT_FALSE(cavlc::level_overflow(block(4, {0, 0, 2000}).data(), 4));
}

// ---------------------------------------------------------------------------------------------------
// Property test: an independent decoder (clause 9.2, searching the same tables for coeff_token,
// total_zeros and run_before) recovers every block that does not overflow.

class BitReader {
 public:
  explicit BitReader(const std::string& s) : s_(s) {}
  bool at_end() const { return pos_ == s_.size(); }
  size_t pos() const { return pos_; }
  bool read(int n, uint32_t& v) {
    v = 0;
    for (int i = 0; i < n; ++i) {
      if (pos_ >= s_.size()) return false;
      v = (v << 1) | static_cast<uint32_t>(s_[pos_++] - '0');
    }
    return true;
  }
  // The unique code of `codes` that the stream continues with; its index, or -1.
  int match(const Vlc* codes, int count) {
    int found = -1;
    for (int i = 0; i < count; ++i) {
      const Vlc c = codes[i];
      if (!c.len || pos_ + c.len > s_.size()) continue;
      uint32_t v = 0;
      for (int b = 0; b < c.len; ++b) v = (v << 1) | static_cast<uint32_t>(s_[pos_ + b] - '0');
      if (v == c.val) {
        if (found >= 0) return -1;  // ambiguous: the table would not be prefix-free
        found = i;
      }
    }
    if (found >= 0) pos_ += codes[found].len;
    return found;
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

bool decode_block(BitReader& br, int n, int nC, std::vector<int16_t>& out) {
  out.assign(static_cast<size_t>(n), 0);
  return gpuec_test::slow_decode_block(br, n, nC, out.data()) >= 0;
}

using gpuec_test::random_level;

// Block lengths around the writer's internal 32/64-bit boundaries (every length from 1 to 140 bits
// and beyond), each written after 0..31 other bits: block_bits matches and the decoder recovers it.
TEST(CavlcProperty, EveryBlockLengthRoundTrips) {
  std::vector<bool> seen(600, false);
  const int values[] = {1, -1, 2, -3, 5, -9, 17, -40, 100, -3000};
  int offset = 0;
  for (int n : {16, 15, 4})
    for (int nC : {0, 2, 5, 8, -1}) {
      if ((n == 4) != (nC == -1)) continue;
      for (int count = 0; count <= n; ++count)
        for (int a : values)
          for (int b : values) {
            std::vector<int16_t> c(static_cast<size_t>(n), 0);
            for (int i = 0; i < count; ++i) {  // every other position from the top, then wrapping
              c[static_cast<size_t>(n - 1 - (2 * i) % n)] = static_cast<int16_t>(i % 3 ? a : b);
            }
            const std::string bits = encode(c, nC);
            seen[std::min<size_t>(bits.size(), seen.size() - 1)] = true;
            if (cavlc::level_overflow(c.data(), n)) continue;
            uint8_t buf[128] = {};
            vle::BitWriter bw(buf, sizeof buf);
            offset = (offset + 7) % 32;
            bw.put(0, offset);
            cavlc::write_block(bw, c.data(), n, nC);
            const uint64_t nbits = bw.bits();
            bw.flush();
            const std::string with_offset = bit_string(buf, nbits);
            ASSERT_EQ(with_offset, zeros(offset) + bits);
            BitReader br(bits);
            std::vector<int16_t> back;
            ASSERT_TRUE(decode_block(br, n, nC, back)) << bits;
            EXPECT_TRUE(br.at_end());
            ASSERT_EQ(back, c) << bits;
          }
    }
  for (int len : {1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129})
    EXPECT_TRUE(seen[static_cast<size_t>(len)]) << "no block of " << len << " bits";
}

TEST(CavlcProperty, RandomBlocksRoundTrip) {
  const uint32_t seed = 0x6b0c1a5u;
  std::printf("CavlcProperty seed: 0x%x\n", seed);
  RecordProperty("seed", std::to_string(seed));
  std::mt19937 rng(seed);
  const int kBlocks = 6000;
  int overflowed = 0, decoded = 0;
  for (int iter = 0; iter < kBlocks; ++iter) {
    const gpuec_test::RandomCatBlock b = gpuec_test::random_cat_block(rng, {50, 200, 500, 800, 1000});
    const int n = b.n, nC = b.nC;
    const std::vector<int16_t>& c = b.c;
    SCOPED_TRACE("block " + std::to_string(iter) + " n " + std::to_string(n) + " nC " + std::to_string(nC));

    const std::string bits = encode(c, nC);  // checks block_bits and TotalCoeff
    if (HasFailure()) return;
    BitReader br(bits);
    std::vector<int16_t> back;
    const bool ok = decode_block(br, n, nC, back);
    if (cavlc::level_overflow(c.data(), n)) {
      ++overflowed;
      EXPECT_FALSE(ok && br.at_end() && back == c) << "overflowing block decoded exactly";
      continue;
    }
    ++decoded;
    ASSERT_TRUE(ok) << "decode failed at bit " << br.pos() << " of " << bits;
    EXPECT_TRUE(br.at_end()) << "decoder stopped at bit " << br.pos() << " of " << bits.size();
    ASSERT_EQ(back, c) << bits;
  }
  std::printf("CavlcProperty: %d blocks, %d decoded exactly, %d overflowing\n", kBlocks, decoded, overflowed);
  EXPECT_GT(overflowed, 10);
  EXPECT_GT(decoded, kBlocks * 3 / 4);
}

}  // namespace
