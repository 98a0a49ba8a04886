// cavlc/tables.h: the CAVLC code tables of H.264 baseline 4:2:0 (ITU-T H.264 clause 9.2), as constexpr
// data shared by the CPU writer (cavlc.cpp) and, later, the CUDA kernel.
//
// Every variable-length code is stored as a Vlc {len, val}: the code is the low `len` bits of `val`,
// written most significant bit first (vle::BitWriter::put(val, len)). len == 0 marks a combination that
// has no code (e.g. TrailingOnes > TotalCoeff). All codes of these tables are at most 16 bits long and
// their values fit in 8 bits (the longest codes are mostly leading zeros), so one Vlc is 2 bytes.
//
// The tables are written as the bit strings of the spec (spaces ignored) and converted to {len, val} at
// compile time by bits(); a typo such as a stray character fails the build. tests/cavlc/block_test.cpp
// checks that every table is prefix-free and that the complete ones have a Kraft sum of exactly 1.
//
// CUDA: this header holds only constexpr data and constexpr functions, no std:: containers. Functions
// meant for device code are marked CAVLC_HD (__host__ __device__ under nvcc). Note that nvcc does not let
// device code index a host constexpr array with a run-time index; the kernel should copy the arrays it
// needs into __constant__ (or shared) memory, e.g. cudaMemcpyToSymbol(d_coeff_token, kCoeffToken,
// sizeof(kCoeffToken)); the layouts below are plain arrays of 2-byte PODs so that a byte copy is exact.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CAVLC_HD __host__ __device__
#else
#define CAVLC_HD
#endif

namespace cavlc {
namespace tables {

// One variable-length code: the low `len` bits of `val`, MSB first. {0, 0} = no code.
struct Vlc {
  uint8_t len;
  uint8_t val;
};

namespace detail {
// Deliberately not constexpr: reaching it during constant evaluation makes the build fail.
void bad_character_in_bit_string();
void code_longer_than_16_bits();
}  // namespace detail

// "0001 01" -> {6, 0b000101}. Only '0', '1' and ' ' are allowed. Compile-time helper for the tables.
constexpr Vlc bits(const char* s) {
  unsigned len = 0, val = 0;
  for (; *s; ++s) {
    if (*s == ' ') continue;
    if (*s != '0' && *s != '1') detail::bad_character_in_bit_string();
    val = (val << 1) | static_cast<unsigned>(*s - '0');
    ++len;
  }
  if (len > 16 || val > 0xff) detail::code_longer_than_16_bits();
  return Vlc{static_cast<uint8_t>(len), static_cast<uint8_t>(val)};
}

constexpr Vlc kNone{0, 0};

// ---- coeff_token: ITU-T H.264 Table 9-5 ------------------------------------------------------------
// Indexed [table][TotalCoeff 0..16][TrailingOnes 0..3]; table = coeff_token_table(nC):
//   0: 0 <= nC < 2,  1: 2 <= nC < 4,  2: 4 <= nC < 8,  3: 8 <= nC (6-bit FLC),  4: nC == -1 (chroma DC
//   4:2:0, TotalCoeff <= 4). The nC == -2 column (chroma DC 4:2:2) is not needed in baseline 4:2:0.
constexpr int kNumCoeffTokenTables = 5;

CAVLC_HD constexpr int coeff_token_table(int nC) {
  return nC < 0 ? 4 : nC < 2 ? 0 : nC < 4 ? 1 : nC < 8 ? 2 : 3;
}

// 8 <= nC: a 6-bit fixed-length code xxxxyy, xxxx = TotalCoeff - 1 and yy = TrailingOnes; TotalCoeff 0
// is 0000 11 (the pattern TotalCoeff 1, TrailingOnes 3 cannot occur, so its code is reused).
constexpr Vlc flc(int total_coeff, int trailing_ones) {
  return total_coeff == 0 ? Vlc{6, 3}
                          : trailing_ones > total_coeff
                                ? kNone
                                : Vlc{6, static_cast<uint8_t>(((total_coeff - 1) << 2) | trailing_ones)};
}

// clang-format off
constexpr Vlc kCoeffToken[kNumCoeffTokenTables][17][4] = {
  { // Table 9-5, 0 <= nC < 2            TrailingOnes: 0, 1, 2, 3
    {bits("1"),                   kNone,                       kNone,                       kNone},
    {bits("0001 01"),             bits("01"),                  kNone,                       kNone},
    {bits("0000 0111"),           bits("0001 00"),             bits("001"),                 kNone},
    {bits("0000 0011 1"),         bits("0000 0110"),           bits("0000 101"),            bits("0001 1")},
    {bits("0000 0001 11"),        bits("0000 0011 0"),         bits("0000 0101"),           bits("0000 11")},
    {bits("0000 0000 111"),       bits("0000 0001 10"),        bits("0000 0010 1"),         bits("0000 100")},
    {bits("0000 0000 0111 1"),    bits("0000 0000 110"),       bits("0000 0001 01"),        bits("0000 0100")},
    {bits("0000 0000 0101 1"),    bits("0000 0000 0111 0"),    bits("0000 0000 101"),       bits("0000 0010 0")},
    {bits("0000 0000 0100 0"),    bits("0000 0000 0101 0"),    bits("0000 0000 0110 1"),    bits("0000 0001 00")},
    {bits("0000 0000 0011 11"),   bits("0000 0000 0011 10"),   bits("0000 0000 0100 1"),    bits("0000 0000 100")},
    {bits("0000 0000 0010 11"),   bits("0000 0000 0010 10"),   bits("0000 0000 0011 01"),   bits("0000 0000 0110 0")},
    {bits("0000 0000 0001 111"),  bits("0000 0000 0001 110"),  bits("0000 0000 0010 01"),   bits("0000 0000 0011 00")},
    {bits("0000 0000 0001 011"),  bits("0000 0000 0001 010"),  bits("0000 0000 0001 101"),  bits("0000 0000 0010 00")},
    {bits("0000 0000 0000 1111"), bits("0000 0000 0000 001"),  bits("0000 0000 0001 001"),  bits("0000 0000 0001 100")},
    {bits("0000 0000 0000 1011"), bits("0000 0000 0000 1110"), bits("0000 0000 0000 1101"), bits("0000 0000 0001 000")},
    {bits("0000 0000 0000 0111"), bits("0000 0000 0000 1010"), bits("0000 0000 0000 1001"), bits("0000 0000 0000 1100")},
    {bits("0000 0000 0000 0100"), bits("0000 0000 0000 0110"), bits("0000 0000 0000 0101"), bits("0000 0000 0000 1000")},
  },
  { // Table 9-5, 2 <= nC < 4
    {bits("11"),                  kNone,                       kNone,                       kNone},
    {bits("0010 11"),             bits("10"),                  kNone,                       kNone},
    {bits("0001 11"),             bits("0011 1"),              bits("011"),                 kNone},
    {bits("0000 111"),            bits("0010 10"),             bits("0010 01"),             bits("0101")},
    {bits("0000 0111"),           bits("0001 10"),             bits("0001 01"),             bits("0100")},
    {bits("0000 0100"),           bits("0000 110"),            bits("0000 101"),            bits("0011 0")},
    {bits("0000 0011 1"),         bits("0000 0110"),           bits("0000 0101"),           bits("0010 00")},
    {bits("0000 0001 111"),       bits("0000 0011 0"),         bits("0000 0010 1"),         bits("0001 00")},
    {bits("0000 0001 011"),       bits("0000 0001 110"),       bits("0000 0001 101"),       bits("0000 100")},
    {bits("0000 0000 1111"),      bits("0000 0001 010"),       bits("0000 0001 001"),       bits("0000 0010 0")},
    {bits("0000 0000 1011"),      bits("0000 0000 1110"),      bits("0000 0000 1101"),      bits("0000 0001 100")},
    {bits("0000 0000 1000"),      bits("0000 0000 1010"),      bits("0000 0000 1001"),      bits("0000 0001 000")},
    {bits("0000 0000 0111 1"),    bits("0000 0000 0111 0"),    bits("0000 0000 0110 1"),    bits("0000 0000 1100")},
    {bits("0000 0000 0101 1"),    bits("0000 0000 0101 0"),    bits("0000 0000 0100 1"),    bits("0000 0000 0110 0")},
    {bits("0000 0000 0011 1"),    bits("0000 0000 0010 11"),   bits("0000 0000 0011 0"),    bits("0000 0000 0100 0")},
    {bits("0000 0000 0010 01"),   bits("0000 0000 0010 00"),   bits("0000 0000 0010 10"),   bits("0000 0000 0000 1")},
    {bits("0000 0000 0001 11"),   bits("0000 0000 0001 10"),   bits("0000 0000 0001 01"),   bits("0000 0000 0001 00")},
  },
  { // Table 9-5, 4 <= nC < 8
    {bits("1111"),                kNone,                       kNone,                       kNone},
    {bits("0011 11"),             bits("1110"),                kNone,                       kNone},
    {bits("0010 11"),             bits("0111 1"),              bits("1101"),                kNone},
    {bits("0010 00"),             bits("0110 0"),              bits("0111 0"),              bits("1100")},
    {bits("0001 111"),            bits("0101 0"),              bits("0101 1"),              bits("1011")},
    {bits("0001 011"),            bits("0100 0"),              bits("0100 1"),              bits("1010")},
    {bits("0001 001"),            bits("0011 10"),             bits("0011 01"),             bits("1001")},
    {bits("0001 000"),            bits("0010 10"),             bits("0010 01"),             bits("1000")},
    {bits("0000 1111"),           bits("0001 110"),            bits("0001 101"),            bits("0110 1")},
    {bits("0000 1011"),           bits("0000 1110"),           bits("0001 010"),            bits("0011 00")},
    {bits("0000 0111 1"),         bits("0000 1010"),           bits("0000 1101"),           bits("0001 100")},
    {bits("0000 0101 1"),         bits("0000 0111 0"),         bits("0000 1001"),           bits("0000 1100")},
    {bits("0000 0100 0"),         bits("0000 0101 0"),         bits("0000 0110 1"),         bits("0000 1000")},
    {bits("0000 0011 01"),        bits("0000 0011 1"),         bits("0000 0100 1"),         bits("0000 0110 0")},
    {bits("0000 0010 01"),        bits("0000 0011 00"),        bits("0000 0010 11"),        bits("0000 0010 10")},
    {bits("0000 0001 01"),        bits("0000 0010 00"),        bits("0000 0001 11"),        bits("0000 0001 10")},
    {bits("0000 0000 01"),        bits("0000 0001 00"),        bits("0000 0000 11"),        bits("0000 0000 10")},
  },
  { // Table 9-5, 8 <= nC: 6-bit FLC (see flc())
    {flc(0, 0),  kNone,      kNone,      kNone},
    {flc(1, 0),  flc(1, 1),  kNone,      kNone},
    {flc(2, 0),  flc(2, 1),  flc(2, 2),  kNone},
    {flc(3, 0),  flc(3, 1),  flc(3, 2),  flc(3, 3)},
    {flc(4, 0),  flc(4, 1),  flc(4, 2),  flc(4, 3)},
    {flc(5, 0),  flc(5, 1),  flc(5, 2),  flc(5, 3)},
    {flc(6, 0),  flc(6, 1),  flc(6, 2),  flc(6, 3)},
    {flc(7, 0),  flc(7, 1),  flc(7, 2),  flc(7, 3)},
    {flc(8, 0),  flc(8, 1),  flc(8, 2),  flc(8, 3)},
    {flc(9, 0),  flc(9, 1),  flc(9, 2),  flc(9, 3)},
    {flc(10, 0), flc(10, 1), flc(10, 2), flc(10, 3)},
    {flc(11, 0), flc(11, 1), flc(11, 2), flc(11, 3)},
    {flc(12, 0), flc(12, 1), flc(12, 2), flc(12, 3)},
    {flc(13, 0), flc(13, 1), flc(13, 2), flc(13, 3)},
    {flc(14, 0), flc(14, 1), flc(14, 2), flc(14, 3)},
    {flc(15, 0), flc(15, 1), flc(15, 2), flc(15, 3)},
    {flc(16, 0), flc(16, 1), flc(16, 2), flc(16, 3)},
  },
  { // Table 9-5, nC == -1 (chroma DC 2x2); TotalCoeff > 4 cannot occur
    {bits("01"),                  kNone,                       kNone,                       kNone},
    {bits("0001 11"),             bits("1"),                   kNone,                       kNone},
    {bits("0001 00"),             bits("0001 10"),             bits("001"),                 kNone},
    {bits("0000 11"),             bits("0000 011"),            bits("0000 010"),            bits("0001 01")},
    {bits("0000 10"),             bits("0000 0011"),           bits("0000 0010"),           bits("0000 000")},
  },
};

// ---- total_zeros, 4x4 blocks: ITU-T H.264 Tables 9-7 (tzVlcIndex 1..7) and 9-8 (tzVlcIndex 8..15) ---
// Indexed [tzVlcIndex - 1][total_zeros], tzVlcIndex = TotalCoeff (1..15), total_zeros 0..16-TotalCoeff.
// Used for every block with maxNumCoeff 15 or 16 (a 15-coefficient block never reaches the last column).
constexpr Vlc kTotalZeros4x4[15][16] = {
  // Table 9-7
  /*  1 */ {bits("1"), bits("011"), bits("010"), bits("0011"), bits("0010"), bits("0001 1"), bits("0001 0"),
            bits("0000 11"), bits("0000 10"), bits("0000 011"), bits("0000 010"), bits("0000 0011"),
            bits("0000 0010"), bits("0000 0001 1"), bits("0000 0001 0"), bits("0000 0000 1")},
  /*  2 */ {bits("111"), bits("110"), bits("101"), bits("100"), bits("011"), bits("0101"), bits("0100"),
            bits("0011"), bits("0010"), bits("0001 1"), bits("0001 0"), bits("0000 11"), bits("0000 10"),
            bits("0000 01"), bits("0000 00")},
  /*  3 */ {bits("0101"), bits("111"), bits("110"), bits("101"), bits("0100"), bits("0011"), bits("100"),
            bits("011"), bits("0010"), bits("0001 1"), bits("0001 0"), bits("0000 01"), bits("0000 1"),
            bits("0000 00")},
  /*  4 */ {bits("0001 1"), bits("111"), bits("0101"), bits("0100"), bits("110"), bits("101"), bits("100"),
            bits("0011"), bits("011"), bits("0010"), bits("0001 0"), bits("0000 1"), bits("0000 0")},
  /*  5 */ {bits("0101"), bits("0100"), bits("0011"), bits("111"), bits("110"), bits("101"), bits("100"),
            bits("011"), bits("0010"), bits("0000 1"), bits("0001"), bits("0000 0")},
  /*  6 */ {bits("0000 01"), bits("0000 1"), bits("111"), bits("110"), bits("101"), bits("100"), bits("011"),
            bits("010"), bits("0001"), bits("001"), bits("0000 00")},
  /*  7 */ {bits("0000 01"), bits("0000 1"), bits("101"), bits("100"), bits("011"), bits("11"), bits("010"),
            bits("0001"), bits("001"), bits("0000 00")},
  // Table 9-8
  /*  8 */ {bits("0000 01"), bits("0001"), bits("0000 1"), bits("011"), bits("11"), bits("10"), bits("010"),
            bits("001"), bits("0000 00")},
  /*  9 */ {bits("0000 01"), bits("0000 00"), bits("0001"), bits("11"), bits("10"), bits("001"), bits("01"),
            bits("0000 1")},
  /* 10 */ {bits("0000 1"), bits("0000 0"), bits("001"), bits("11"), bits("10"), bits("01"), bits("0001")},
  /* 11 */ {bits("0000"), bits("0001"), bits("001"), bits("010"), bits("1"), bits("011")},
  /* 12 */ {bits("0000"), bits("0001"), bits("01"), bits("1"), bits("001")},
  /* 13 */ {bits("000"), bits("001"), bits("1"), bits("01")},
  /* 14 */ {bits("00"), bits("01"), bits("1")},
  /* 15 */ {bits("0"), bits("1")},
};

// ---- total_zeros, chroma DC 2x2 (maxNumCoeff 4): ITU-T H.264 Table 9-9(a) ---------------------------
// Indexed [tzVlcIndex - 1][total_zeros], tzVlcIndex = TotalCoeff (1..3), total_zeros 0..4-TotalCoeff.
constexpr Vlc kTotalZerosChromaDC[3][4] = {
  /* 1 */ {bits("1"), bits("01"), bits("001"), bits("000")},
  /* 2 */ {bits("1"), bits("01"), bits("00")},
  /* 3 */ {bits("1"), bits("0")},
};

// ---- run_before: ITU-T H.264 Table 9-10 ------------------------------------------------------------
// Indexed [min(zerosLeft, 7) - 1][run_before]; row 6 is the "zerosLeft > 6" column (run_before 0..14).
CAVLC_HD constexpr int run_before_row(int zeros_left) { return zeros_left > 7 ? 6 : zeros_left - 1; }

constexpr Vlc kRunBefore[7][15] = {
  /* zerosLeft 1  */ {bits("1"), bits("0")},
  /* zerosLeft 2  */ {bits("1"), bits("01"), bits("00")},
  /* zerosLeft 3  */ {bits("11"), bits("10"), bits("01"), bits("00")},
  /* zerosLeft 4  */ {bits("11"), bits("10"), bits("01"), bits("001"), bits("000")},
  /* zerosLeft 5  */ {bits("11"), bits("10"), bits("011"), bits("010"), bits("001"), bits("000")},
  /* zerosLeft 6  */ {bits("11"), bits("000"), bits("001"), bits("011"), bits("010"), bits("101"), bits("100")},
  /* zerosLeft >6 */ {bits("111"), bits("110"), bits("101"), bits("100"), bits("011"), bits("010"), bits("001"),
                      bits("0001"), bits("0000 1"), bits("0000 01"), bits("0000 001"), bits("0000 0001"),
                      bits("0000 0000 1"), bits("0000 0000 01"), bits("0000 0000 001")},
};
// clang-format on

// ---- Levels (clause 9.2.2.1, syntax 7.3.5.3.2): computed, not tabled --------------------------------
// levelCode of a non-zero level: 2*L - 2 for L > 0, -2*L - 1 for L < 0 (so 1 -> 0, -1 -> 1, 2 -> 2 ...).
// The encoder first reduces |level| by one for the first level after the trailing ones when
// TrailingOnes < 3 (that level cannot be +-1), which the decoder undoes by adding 2 to levelCode.
CAVLC_HD constexpr int level_code_of(int level) { return level > 0 ? 2 * level - 2 : -2 * level - 1; }

// Longest baseline level code: level_prefix 15 (15 zeros and a one) plus a 12-bit level_suffix.
constexpr int kLevelEscapeBits = 28;
constexpr int kLevelEscapeSuffixBits = 12;

// A coded level: the low `len` bits of `bits`, MSB first. overflow: the level needs level_prefix > 15
// (High profile only); the code written is then prefix 15 and the low 12 bits of the escape value, as
// x264 writes it before it re-encodes the macroblock.
struct LevelVlc {
  uint32_t bits;
  uint8_t len;
  bool overflow;
};

// level_prefix / level_suffix of levelCode with the current suffixLength (0..6):
//  * (levelCode >> suffixLength) < 15, except suffixLength 0 with levelCode 14..29: level_prefix =
//    levelCode >> suffixLength, then suffixLength suffix bits (the low bits of levelCode).
//  * suffixLength 0, levelCode 14..29: level_prefix 14 and a 4-bit suffix levelCode - 14.
//  * otherwise the escape: level_prefix 15 and a 12-bit suffix levelCode - (15 << suffixLength), less
//    another 15 when suffixLength == 0. A suffix >= 4096 does not fit: overflow.
CAVLC_HD constexpr LevelVlc level_vlc(int level_code, int suffix_length) {
  if (suffix_length == 0) {
    if (level_code < 14) return LevelVlc{1u, static_cast<uint8_t>(level_code + 1), false};
    if (level_code < 30) return LevelVlc{16u | static_cast<uint32_t>(level_code - 14), 19, false};
  } else if ((level_code >> suffix_length) < 15) {
    const int prefix = level_code >> suffix_length;
    const uint32_t suffix = static_cast<uint32_t>(level_code) & ((1u << suffix_length) - 1);
    return LevelVlc{(1u << suffix_length) | suffix, static_cast<uint8_t>(prefix + 1 + suffix_length), false};
  }
  const int escape = level_code - (15 << suffix_length) - (suffix_length == 0 ? 15 : 0);
  return LevelVlc{(1u << kLevelEscapeSuffixBits) | (static_cast<uint32_t>(escape) & 0xfffu), kLevelEscapeBits,
                  escape >= (1 << kLevelEscapeSuffixBits)};
}

// suffixLength after coding a level of magnitude abs_level (unreduced): 0 becomes 1, then it grows by
// one when abs_level > 3 << (suffixLength - 1), up to 6.
CAVLC_HD constexpr int next_suffix_length(int suffix_length, int abs_level) {
  const int s = suffix_length == 0 ? 1 : suffix_length;
  return (s < 6 && abs_level > (3 << (s - 1))) ? s + 1 : s;
}

}  // namespace tables
}  // namespace cavlc
