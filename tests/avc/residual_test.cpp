// CAVLC residual decoding (avc/residual.h) against the encoder (cavlc::write_block, cavlc::encode_slice_ref):
// known answers from the standard, every TotalCoeff / TrailingOnes / total_zeros combination of every
// block category and nC class, level escapes at every suffixLength, whole macroblocks of random slices
// with neighbours, an independent bit-by-bit decoder on random and damaged bits, truncation, and a speed
// print. Buffers handed to the decoder are heap arrays of exactly the bytes the reader may touch, so an
// address-sanitizer build catches any read past them. Seeds: --seed=N or GPUEC_SEED=N.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "avc/bitreader.h"
#include "avc/residual.h"
#include "cavlc/cavlc.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"
#include "cavlc/tables.h"
#include "cavlc_slow_decode.h"
#include "test_seed.h"
#include "vle/bitwriter.h"

namespace {

// ---- Bits ---------------------------------------------------------------------------------------------

// A bit string in a heap array of exactly bits_to_bytes(end) bytes; the reader covers [begin, end).
struct Bits {
  std::unique_ptr<uint8_t[]> data;
  uint64_t begin = 0, end = 0;
  avc::BitReader reader() const { return avc::BitReader(data.get(), begin, end); }
  avc::BitReader reader(uint64_t cut_end) const { return avc::BitReader(data.get(), begin, cut_end); }
};

Bits exact_copy(const uint8_t* buf, uint64_t begin, uint64_t end) {
  Bits b;
  const size_t n = vle::bits_to_bytes(end);
  b.data.reset(new uint8_t[n == 0 ? 1 : n]);
  if (n) std::memcpy(b.data.get(), buf, n);
  b.begin = begin;
  b.end = end;
  return b;
}

Bits from_string(const std::string& s) {
  std::vector<uint8_t> v(s.size() / 8 + 1, 0);
  size_t n = 0;
  for (char c : s) {
    if (c == ' ') continue;
    if (c == '1') v[n >> 3] |= static_cast<uint8_t>(0x80 >> (n & 7));
    ++n;
  }
  return exact_copy(v.data(), 0, n);
}

// Writes one block after `offset` filler bits (0101...): its bits are [offset, end).
Bits write_block_at(const int16_t* c, int n, int nC, int offset, int* total_coeff = nullptr) {
  std::vector<uint8_t> buf(1024);
  vle::BitWriter bw(buf.data(), buf.size());
  for (int i = 0; i < offset; ++i) bw.put(static_cast<uint32_t>(i & 1), 1);
  const int tc = cavlc::write_block(bw, c, n, nC);
  if (total_coeff) *total_coeff = tc;
  const uint64_t end = bw.bits();
  bw.flush();
  return exact_copy(buf.data(), static_cast<uint64_t>(offset), end);
}

// The decoder's output layout for a block of n levels in scan order: 15-level blocks at index k + 1.
std::vector<int16_t> expected_layout(const int16_t* c, int n) {
  std::vector<int16_t> out(n == 4 ? 4 : 16, 0);
  for (int k = 0; k < n; ++k) out[static_cast<size_t>(n == 15 ? k + 1 : k)] = c[k];
  return out;
}

// Encodes c, decodes it and checks: TotalCoeff, levels, reader exactly at the writer's end.
void round_trip(const std::vector<int16_t>& c, int nC, int offset, const std::string& what) {
  const int n = static_cast<int>(c.size());
  int tc = -1;
  const Bits bits = write_block_at(c.data(), n, nC, offset, &tc);
  avc::BitReader br = bits.reader();
  int16_t out[16];
  std::fill(out, out + 16, static_cast<int16_t>(0x7777));  // canary: every entry must be written
  const int r = avc::decode_residual_block(br, nC, n, out);
  ASSERT_EQ(r, tc) << what << " nC " << nC << " offset " << offset << ": " << avc::residual_error_name(r);
  EXPECT_TRUE(br.ok()) << what;
  ASSERT_EQ(br.pos(), bits.end) << what << " nC " << nC << ": reader stopped elsewhere than the writer";
  const std::vector<int16_t> want = expected_layout(c.data(), n);
  ASSERT_EQ(std::vector<int16_t>(out, out + want.size()), want) << what << " nC " << nC;
}

// ---- Known answers (bit strings of tests/cavlc/block_test.cpp, derived there from the standard) -------

struct Known {
  std::string bits;
  int nC;
  int n;
  std::vector<int16_t> coeffs;  // scan order, n entries (zeros after the listed values)
};

std::vector<int16_t> blk(int n, std::initializer_list<int> values) {
  std::vector<int16_t> c(static_cast<size_t>(n), 0);
  size_t i = 0;
  for (int v : values) c.at(i++) = static_cast<int16_t>(v);
  return c;
}

std::string zeros(int n) { return std::string(static_cast<size_t>(n), '0'); }

TEST(ResidualBlock, KnownAnswers) {
  const std::vector<Known> cases = {
      {"1010 001 1 000010 0011 01 1 0", 5, 16, blk(16, {5, 1, 0, -1, 1, 0, 1})},  // CAVLCU paper example
      {"1", 0, 16, blk(16, {})},
      {"11", 3, 15, blk(15, {})},
      {"1111", 7, 16, blk(16, {})},
      {"0000 11", 8, 16, blk(16, {})},
      {"01", -1, 4, blk(4, {})},
      {"0000101 01 001 111 1 0", 0, 16, blk(16, {3, 0, -1, 1})},
      {"00111 0 01 101 00", 2, 15, blk(15, {-2, 0, 0, 1})},
      {"000110 10 111", 16, 16, blk(16, {1, -1})},
      {"000110 1 00001 00 01", -1, 4, blk(4, {0, 4, 0, -1})},
      {"0000011 0 0001 000010 0 1 0", -1, 4, blk(4, {5, 0, -3, 1})},
      {"000101" + zeros(14) + "1 1111" + "1", 0, 16, blk(16, {-16})},
      {"000101" + zeros(15) + "1 0000 0000 0001" + "1", 0, 16, blk(16, {-17})},
      {"000101" + zeros(15) + "1 111111111111" + "1", 0, 16, blk(16, {-2064})},
      {"0000000001000 1 00010 000101 0001000 00010001 000100000 0001000111 1000100 000001", 0, 16,
       blk(16, {3, -100, 49, -25, 13, -7, 4, 2})},
      {"00000100 000 1 10 10 000000 110 101 100 000", 0, 16,
       blk(16, {1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1})},
      {"01 0 000000010", 1, 15, blk(15, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})},
  };
  for (const Known& k : cases) {
    const Bits bits = from_string(k.bits);
    avc::BitReader br = bits.reader();
    int16_t out[16];
    const int r = avc::decode_residual_block(br, k.nC, k.n, out);
    ASSERT_EQ(r, cavlc::total_coeff(k.coeffs.data(), k.n)) << k.bits;
    EXPECT_EQ(br.pos(), bits.end) << k.bits;
    EXPECT_EQ(std::vector<int16_t>(out, out + (k.n == 4 ? 4 : 16)), expected_layout(k.coeffs.data(), k.n))
        << k.bits;
  }
}

// ---- Every TotalCoeff / TrailingOnes / total_zeros, every category and nC class -----------------------

using gpuec_test::random_level;

// A block of n levels with exactly tc non-zeros, t1 trailing ones and total_zeros tz (tc + tz <= n):
// the highest non-zero at tc + tz - 1, the tz zeros spread at random over the runs; levels random,
// kept codable (no overflow).
std::vector<int16_t> block_with(int n, int tc, int t1, int tz, std::mt19937& rng) {
  for (;;) {
    std::vector<int16_t> c(static_cast<size_t>(n), 0);
    if (tc == 0) return c;
    std::vector<int> run(static_cast<size_t>(tc), 0);  // run[j]: zeros below the j-th lowest non-zero
    for (int z = 0; z < tz; ++z) ++run[rng() % static_cast<unsigned>(tc)];
    int pos = -1;
    for (int j = 0; j < tc; ++j) {
      pos += run[static_cast<size_t>(j)] + 1;
      const int from_top = tc - 1 - j;
      int level;
      if (from_top < t1) {
        level = (rng() & 1) ? -1 : 1;
      } else {
        level = random_level(rng);
        if (from_top == t1 && t1 < 3)  // must not be a trailing one
          while (level == 1 || level == -1) level = random_level(rng);
      }
      c[static_cast<size_t>(pos)] = static_cast<int16_t>(level);
    }
    if (pos != tc + tz - 1) std::abort();
    if (!cavlc::level_overflow(c.data(), n)) return c;
  }
}

TEST(ResidualBlock, EveryCombinationOfEveryCategoryAndNcClass) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test"));
  struct Cat {
    cavlc::BlockCat cat;
    std::vector<int> ncs;
  };
  const Cat cats[] = {
      {cavlc::kLumaDC, {0, 1, 2, 3, 4, 7, 8, 16}},  {cavlc::kLumaAC, {0, 1, 2, 3, 4, 7, 8, 13}},
      {cavlc::kLuma4x4, {0, 1, 2, 3, 5, 6, 9, 16}}, {cavlc::kChromaDC, {-1}},
      {cavlc::kChromaAC, {0, 1, 2, 3, 4, 7, 8, 11}},
  };
  int offset = 0, blocks = 0;
  for (const Cat& cat : cats) {
    const int n = cavlc::max_coeffs(cat.cat);
    for (int nC : cat.ncs)
      for (int tc = 0; tc <= n; ++tc)
        for (int t1 = 0; t1 <= std::min(3, tc); ++t1)
          for (int tz = 0; tz <= (tc == 0 ? 0 : n - tc); ++tz)
            for (int rep = 0; rep < 2; ++rep) {
              const std::vector<int16_t> c = block_with(n, tc, t1, tz, rng);
              offset = (offset + 1) % 32;
              const std::string what = std::string(avc::residual_block_name(cat.cat)) + " tc " +
                                        std::to_string(tc) + " t1 " + std::to_string(t1) + " tz " +
                                        std::to_string(tz);
              round_trip(c, nC, offset, what);
              if (HasFatalFailure()) return;
              ++blocks;
            }
  }
  std::printf("EveryCombination: %d blocks\n", blocks);
}

// Every run_before code of Table 9-10 (random spreads rarely reach the long ones): two levels with
// total_zeros zl, r of them between the two (run_before of the upper level at zerosLeft zl).
TEST(ResidualBlock, EveryRunBeforeCode) {
  for (int n : {16, 15, 4})
    for (int zl = 1; zl + 2 <= n; ++zl)
      for (int r = 0; r <= zl; ++r) {
        std::vector<int16_t> c(static_cast<size_t>(n), 0);
        c[static_cast<size_t>(zl - r)] = -3;
        c[static_cast<size_t>(zl + 1)] = 1;
        round_trip(c, n == 4 ? -1 : 0, (zl + r) % 32,
                   "run_before " + std::to_string(r) + " at zerosLeft " + std::to_string(zl));
        if (HasFatalFailure()) return;
      }
}

// Levels across every escape boundary at every suffixLength 0..6: a level L coded after levels that
// raise suffixLength to s (2, 4, 7, 13, 25, 49 in coding order move it 0 -> 1 -> ... -> 6), with and
// without the reduced-first-level rule; L from 1 to past the baseline limit (overflowing ones skipped).
TEST(ResidualBlock, LevelsAtEverySuffixLength) {
  const int raise[] = {2, 4, 7, 13, 25, 49};
  int decoded = 0, overflowing = 0;
  for (int s = 0; s <= 6; ++s)
    for (int trailing = 0; trailing <= 3; trailing += 3)
      for (int mag = 1; mag <= 2600; mag += (mag < 200 ? 1 : 7))
        for (int sign : {1, -1}) {
          // Scan order: L at 0, then the raising levels (coded before L), then `trailing` ones on top.
          std::vector<int16_t> c(16, 0);
          int pos = 0;
          c[static_cast<size_t>(pos++)] = static_cast<int16_t>(sign * mag);
          for (int i = s - 1; i >= 0; --i) c[static_cast<size_t>(pos++)] = static_cast<int16_t>(raise[i]);
          for (int i = 0; i < trailing; ++i) c[static_cast<size_t>(pos++)] = 1;
          if (cavlc::level_overflow(c.data(), 16)) {
            ++overflowing;
            continue;
          }
          round_trip(c, 3, (mag + s) % 32, "level " + std::to_string(sign * mag) + " sL " + std::to_string(s));
          if (HasFatalFailure()) return;
          ++decoded;
        }
  std::printf("LevelsAtEverySuffixLength: %d decoded, %d overflowing skipped\n", decoded, overflowing);
  EXPECT_GT(overflowing, 100);
}

TEST(ResidualBlock, RandomBlocksRoundTrip) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x1234567u);
  int decoded = 0;
  for (int iter = 0; iter < 60000; ++iter) {
    const gpuec_test::RandomCatBlock b = gpuec_test::random_cat_block(rng, {30, 150, 400, 700, 1000});
    if (cavlc::level_overflow(b.c.data(), b.n)) continue;
    round_trip(b.c, b.nC, static_cast<int>(rng() % 32), "random block " + std::to_string(iter));
    if (HasFatalFailure()) return;
    ++decoded;
  }
  EXPECT_GT(decoded, 50000);
}

// ---- An independent decoder: bit by bit, searching cavlc/tables.h (tests/common/cavlc_slow_decode.h) --

struct SlowReader {
  const uint8_t* data;
  uint64_t pos, end;
  bool read(int n, uint32_t& v) {
    v = 0;
    for (int i = 0; i < n; ++i) {
      if (pos >= end) return false;
      v = (v << 1) | ((data[pos >> 3] >> (7 - (pos & 7))) & 1u);
      ++pos;
    }
    return true;
  }
  int match(const cavlc::tables::Vlc* codes, int count) {
    for (int i = 0; i < count; ++i) {
      const cavlc::tables::Vlc c = codes[i];
      if (!c.len || pos + c.len > end) continue;
      uint32_t v = 0;
      SlowReader probe = *this;
      probe.read(c.len, v);
      if (v == c.val) {
        pos += c.len;
        return i;
      }
    }
    return -1;
  }
};

// Returns TotalCoeff or -1; out as decode_residual_block lays it out.
int slow_decode(SlowReader& br, int n, int nC, int16_t* out) {
  std::fill(out, out + (n == 4 ? 4 : 16), static_cast<int16_t>(0));
  int16_t levels[16] = {};
  const int tc = gpuec_test::slow_decode_block(br, n, nC, levels);
  for (int pos = 0; tc > 0 && pos < n; ++pos) out[n == 15 ? pos + 1 : pos] = levels[pos];
  return tc;
}

// Random bit strings and damaged codes: the table decoder agrees with the bit-by-bit decoder on whether
// a block decodes, on its levels and on where it ends; failures fail the reader and never move it past
// the end.
TEST(ResidualBlock, AgreesWithBitByBitDecoderOnRandomAndDamagedBits) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x2345678u);
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 200000; ++iter) {
    const int kind = static_cast<int>(rng() % 3);
    const int n = kind == 0 ? 4 : kind == 1 ? 15 : 16;
    const int nC = n == 4 ? -1 : static_cast<int>(rng() % 17);
    std::vector<uint8_t> buf(96);
    uint64_t begin = rng() % 8, end;
    if (iter & 1) {  // random bits, biased towards zeros (long codes) half of the time
      const bool sparse = rng() & 2;
      for (auto& b : buf) b = static_cast<uint8_t>(sparse ? (rng() & rng() & rng()) : rng());
      end = begin + rng() % 400;
    } else {  // a valid block with a few flipped bits, or cut short
      std::vector<int16_t> c(static_cast<size_t>(n), 0);
      for (auto& x : c)
        if (rng() % 3 == 0) x = static_cast<int16_t>(random_level(rng));
      vle::BitWriter bw(buf.data(), buf.size());
      bw.put(0, static_cast<int>(begin));
      cavlc::write_block(bw, c.data(), n, nC);
      end = bw.bits();
      bw.flush();
      if (rng() & 1) end = begin + rng() % (end - begin + 1);
      const int flips = static_cast<int>(rng() % 3);
      for (int f = 0; f < flips && end > begin; ++f) {
        const uint64_t at = begin + rng() % (end - begin);
        buf[at >> 3] ^= static_cast<uint8_t>(0x80 >> (at & 7));
      }
    }
    const Bits bits = exact_copy(buf.data(), begin, end);
    SlowReader slow{bits.data.get(), begin, end};
    int16_t want[16], got[16];
    const int rs = slow_decode(slow, n, nC, want);
    avc::BitReader br = bits.reader();
    const int rf = avc::decode_residual_block(br, nC, n, got);
    ASSERT_EQ(rs >= 0, rf >= 0) << "iter " << iter << ": slow " << rs << ", table " << rf << " ("
                                << avc::residual_error_name(rf) << ")";
    ASSERT_LE(br.pos(), end);
    if (rf >= 0) {
      ++ok;
      ASSERT_EQ(rf, rs) << "iter " << iter;
      ASSERT_EQ(br.pos(), slow.pos) << "iter " << iter;
      ASSERT_TRUE(br.ok());
      const int len = n == 4 ? 4 : 16;
      ASSERT_EQ(std::vector<int16_t>(got, got + len), std::vector<int16_t>(want, want + len))
          << "iter " << iter << " n " << n << " nC " << nC;
    } else {
      ++failed;
      ASSERT_FALSE(br.ok());
    }
  }
  std::printf("random/damaged blocks: %d decoded, %d rejected\n", ok, failed);
  EXPECT_GT(ok, 20000);
  EXPECT_GT(failed, 20000);
}

// A block cut anywhere before its last bit fails (with kResidualTruncated or an invalid code).
TEST(ResidualBlock, TruncatedBlocksFail) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x3456789u);
  for (int iter = 0; iter < 3000; ++iter) {
    const int kind = static_cast<int>(rng() % 3);
    const int n = kind == 0 ? 4 : kind == 1 ? 15 : 16;
    const int nC = n == 4 ? -1 : static_cast<int>(rng() % 17);
    std::vector<int16_t> c(static_cast<size_t>(n), 0);
    for (auto& x : c)
      if (rng() % 2 == 0) x = static_cast<int16_t>(random_level(rng));
    if (cavlc::level_overflow(c.data(), n)) continue;
    const Bits full = write_block_at(c.data(), n, nC, static_cast<int>(rng() % 32));
    for (uint64_t cut = full.begin; cut < full.end; ++cut) {
      const Bits bits = exact_copy(full.data.get(), full.begin, cut);  // only the bytes up to the cut
      avc::BitReader br = bits.reader();
      int16_t out[16];
      const int r = avc::decode_residual_block(br, nC, n, out);
      ASSERT_LT(r, 0) << "block of " << (full.end - full.begin) << " bits decoded from " << (cut - full.begin);
      ASSERT_FALSE(br.ok());
      ASSERT_LE(br.pos(), cut);
    }
  }
}

TEST(ResidualBlock, ErrorsByKind) {
  int16_t out[16];
  auto decode = [&](const std::string& s, int nC, int n) {
    const Bits bits = from_string(s);
    avc::BitReader br = bits.reader();
    const int r = avc::decode_residual_block(br, nC, n, out);
    EXPECT_EQ(r < 0, !br.ok()) << s;
    return r;
  };
  // coeff_token: 16 zeros then a one is no code of 0 <= nC < 2; FLC 0000 10 is (1, 2): invalid.
  EXPECT_EQ(decode(zeros(16) + "1" + zeros(40), 0, 16), avc::kResidualInvalidCode);
  EXPECT_EQ(decode("000010" + zeros(40) + "1", 8, 16), avc::kResidualInvalidCode);
  // 0000 0000 0000 0100 (TotalCoeff 16) in a 15-coefficient block.
  EXPECT_EQ(decode("0000000000000100" + zeros(40) + "1", 0, 15), avc::kResidualTooManyCoeffs);
  // (1,0) then level_prefix 16.
  EXPECT_EQ(decode("000101" + zeros(16) + "1" + zeros(30) + "1", 0, 16), avc::kResidualLevelPrefix);
  // (1,1) + sign, total_zeros 15 (tzVlcIndex 1: 0000 0000 1) in a 15-coefficient block.
  EXPECT_EQ(decode("01 0 000000001" + zeros(30) + "1", 0, 15), avc::kResidualPastBlockEnd);
  // total_zeros tzVlcIndex 1, 0000 0000 0 is no code.
  EXPECT_EQ(decode("01 0 0000000000" + zeros(30) + "1", 0, 16), avc::kResidualInvalidCode);
  // (2,2), signs, total_zeros 8 (tzVlcIndex 2: 0010), run_before zerosLeft 8 > 6: 0000 0000 01 = 13 > 8.
  EXPECT_EQ(decode("001 00 0010 0000000001" + zeros(30) + "1", 0, 16), avc::kResidualPastBlockEnd);
  // Cut inside the level: truncated.
  EXPECT_EQ(decode("000101" + zeros(10), 0, 16), avc::kResidualTruncated);
  EXPECT_EQ(decode("", 0, 16), avc::kResidualTruncated);
  // Arguments.
  EXPECT_EQ(decode("1", -1, 16), avc::kResidualBadArgument);
  EXPECT_EQ(decode("1", 0, 4), avc::kResidualBadArgument);
  EXPECT_EQ(decode("1", 0, 8), avc::kResidualBadArgument);
  EXPECT_EQ(decode("1", 17, 16), avc::kResidualBadArgument);
  // A reader that failed before stays failed.
  const Bits bits = from_string("1");
  avc::BitReader br = bits.reader();
  br.u(2);
  EXPECT_EQ(avc::decode_residual_block(br, 0, 16, out), avc::kResidualTruncated);
  for (int e = -1; e >= -6; --e) EXPECT_STRNE(avc::residual_error_name(e), "?");
}

// ---- Whole macroblocks ------------------------------------------------------------------------------

bool luma_coded(const gpuec_mb& m, int b) {
  return m.kind == GPUEC_MB_I16x16 ? (m.cbp & 15) != 0 : ((m.cbp >> (b >> 2)) & 1) != 0;
}

// Draws level() for every coefficient of the blocks that m's kind and cbp code (the others stay 0).
template <class Level>
void fill_coded_blocks(gpuec_mb& m, Level&& level) {
  const unsigned chroma = m.cbp >> 4;
  auto& c = m.u.coef;
  for (int b = 0; b < 16; ++b)
    if (luma_coded(m, b))
      for (int k = m.kind == GPUEC_MB_I16x16 ? 1 : 0; k < 16; ++k) c.luma[b][k] = level();
  if (m.kind == GPUEC_MB_I16x16)
    for (auto& v : c.luma_dc) v = level();
  if (chroma)
    for (auto& dc : c.chroma_dc)
      for (auto& v : dc) v = level();
  if (chroma == 2)
    for (auto& ac : c.chroma_ac)
      for (int k = 1; k < 16; ++k) ac[k] = level();
}

// A random record: blocks outside the cbp zero, AC position 0 zero, no overflowing level. Densities
// vary per macroblock so that totals (and nC classes) span 0..16.
gpuec_mb random_record(std::mt19937& rng, int addr, int big_levels_per_mille) {
  gpuec_mb m;
  for (;;) {
    std::memset(&m, 0, sizeof m);
    m.mb_addr = addr;
    const int k = static_cast<int>(rng() % 10);
    m.kind = k < 1 ? GPUEC_MB_SKIP : k < 2 ? GPUEC_MB_PCM : k < 6 ? GPUEC_MB_NORMAL : GPUEC_MB_I16x16;
    if (m.kind == GPUEC_MB_PCM) {
      for (auto& s : m.u.pcm) s = static_cast<uint8_t>(rng());
      return m;
    }
    if (m.kind == GPUEC_MB_SKIP) return m;
    const unsigned chroma = rng() % 3;
    const unsigned luma = m.kind == GPUEC_MB_I16x16 ? ((rng() & 1) ? 15u : 0u) : rng() % 16;
    m.cbp = static_cast<uint8_t>(luma | chroma << 4);
    const int density = std::vector<int>{20, 100, 300, 600, 1000}[rng() % 5];
    auto level = [&]() -> int16_t {
      if (static_cast<int>(rng() % 1000) >= density) return 0;
      if (static_cast<int>(rng() % 1000) < big_levels_per_mille) return static_cast<int16_t>(random_level(rng));
      const int mag = 1 + static_cast<int>(rng() % 3 == 0 ? rng() % 20 : 0);
      return static_cast<int16_t>((rng() & 1) ? -mag : mag);
    };
    fill_coded_blocks(m, level);
    m.coef_order = GPUEC_COEF_SCAN;
    uint8_t t[GPUEC_TC_COUNT];
    if (cavlc::mb_totals(m, t) == 0) return m;  // 1: some level overflows baseline, draw again
  }
}

struct EncodedSlice {
  std::vector<gpuec_mb> recs;
  std::vector<cavlc::MbTotals> totals;  // the encoder's, by mb_addr
  Bits bits;                            // [lead, end): the residual of the slice; [0, lead) skeleton
  int mb_width = 1, first_mb = 0;
};

// Encodes recs through cavlc::encode_slice_ref with a skeleton of `lead` bits before the first
// macroblock and nothing between macroblocks (every skel_bit at `lead`).
EncodedSlice encode_slice(std::vector<gpuec_mb> recs, int mb_width, int first_mb, int lead, std::mt19937& rng) {
  EncodedSlice s;
  s.mb_width = mb_width;
  s.first_mb = first_mb;
  std::vector<uint8_t> skel(16, 0);
  for (auto& b : skel) b = static_cast<uint8_t>(rng());
  for (auto& m : recs) m.skel_bit = lead;
  s.totals.assign(static_cast<size_t>(first_mb) + recs.size(), cavlc::MbTotals{});
  std::vector<uint8_t> out(static_cast<size_t>(recs.size() * (cavlc::kMaxMbResidualBits / 8 + 8) + 64));
  vle::BitWriter bw(out.data(), out.size());
  const cavlc::SliceLayout layout{mb_width, first_mb, 0, lead};
  EXPECT_EQ(cavlc::encode_slice_ref(recs.data(), recs.size(), layout, skel.data(), s.totals.data(), bw), 0);
  const uint64_t end = bw.bits();
  bw.flush();
  EXPECT_FALSE(bw.overflowed());
  s.bits = exact_copy(out.data(), static_cast<uint64_t>(lead), end);
  s.recs = std::move(recs);
  return s;
}

// Decodes the slice's macroblocks in order as a parser would: skip and I_PCM by hand, the others
// through decode_mb_residual, neighbours from the totals of earlier macroblocks of the slice.
// Returns the number of macroblocks that matched; stops at the first difference or error.
size_t decode_slice(const EncodedSlice& s, avc::BitReader& br, bool check) {
  std::vector<cavlc::MbTotals> totals(s.totals.size());
  size_t i = 0;
  for (; i < s.recs.size(); ++i) {
    const gpuec_mb& want = s.recs[i];
    const int addr = want.mb_addr;
    cavlc::MbTotals& cur = totals[static_cast<size_t>(addr)];
    if (want.kind == GPUEC_MB_SKIP) {
      cur = cavlc::MbTotals{};
      continue;
    }
    if (want.kind == GPUEC_MB_PCM) {
      while (!br.byte_aligned())
        if (br.u(1) != 0) ADD_FAILURE() << "pcm_alignment_zero_bit is 1";
      for (int k = 0; k < 384; ++k)
        if (br.u(8) != want.u.pcm[k] && check) {
          ADD_FAILURE() << "MB " << addr << ": pcm sample " << k;
          return i;
        }
      std::memset(&cur, 16, sizeof cur);
      continue;
    }
    avc::ResidualNeighbours nb;
    if (addr % s.mb_width > 0 && addr - 1 >= s.first_mb) nb.left = &totals[static_cast<size_t>(addr - 1)];
    if (addr >= s.mb_width + s.first_mb) nb.top = &totals[static_cast<size_t>(addr - s.mb_width)];
    gpuec_mb got;
    std::memset(&got, 0x55, sizeof got);  // canary
    got.mb_addr = addr;
    got.skel_bit = want.skel_bit;
    avc::ResidualBlockRef where;
    const int r = avc::decode_mb_residual(br, static_cast<gpuec_mb_kind>(want.kind), want.cbp, nb, got, cur, &where);
    if (!check) {
      if (r < 0) return i;
      continue;
    }
    if (r != 0) {
      ADD_FAILURE() << "MB " << addr << ": " << avc::residual_error_name(r) << " in "
                    << avc::residual_block_name(where.cat) << " " << where.index;
      return i;
    }
    if (std::memcmp(&got.u.coef, &want.u.coef, sizeof want.u.coef) != 0 || got.kind != want.kind ||
        got.cbp != want.cbp || got.coef_order != GPUEC_COEF_SCAN || got.skel_bit != want.skel_bit ||
        got.mb_addr != want.mb_addr) {
      ADD_FAILURE() << "MB " << addr << " (kind " << int(want.kind) << ", cbp 0x" << std::hex << int(want.cbp)
                    << std::dec << "): record differs";
      return i;
    }
    if (std::memcmp(&cur, &s.totals[static_cast<size_t>(addr)], sizeof cur) != 0) {
      ADD_FAILURE() << "MB " << addr << ": totals differ from the encoder's";
      return i;
    }
  }
  return i;
}

TEST(ResidualMacroblock, RandomSlicesRoundTrip) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x456789au);
  int mbs = 0;
  int kinds[4] = {};
  for (int slice = 0; slice < 600; ++slice) {
    const int mb_width = 1 + static_cast<int>(rng() % 6);
    const int first_mb = static_cast<int>(rng() % (2 * static_cast<unsigned>(mb_width) + 1));
    const int n = 1 + static_cast<int>(rng() % 40);
    const int lead = static_cast<int>(rng() % 64);
    std::vector<gpuec_mb> recs;
    for (int i = 0; i < n; ++i) {
      recs.push_back(random_record(rng, first_mb + i, slice % 3 == 0 ? 200 : 10));
      ++kinds[recs.back().kind];
    }
    const EncodedSlice s = encode_slice(std::move(recs), mb_width, first_mb, lead, rng);
    avc::BitReader br = s.bits.reader();
    SCOPED_TRACE("slice " + std::to_string(slice) + ": width " + std::to_string(mb_width) + ", first MB " +
                 std::to_string(first_mb) + ", " + std::to_string(n) + " MBs");
    ASSERT_EQ(decode_slice(s, br, true), s.recs.size());
    ASSERT_TRUE(br.ok());
    ASSERT_EQ(br.pos(), s.bits.end) << "reader stopped elsewhere than the writer";
    mbs += n;
  }
  std::printf("RandomSlices: %d MBs (skip %d, normal %d, I16x16 %d, PCM %d)\n", mbs, kinds[0], kinds[1], kinds[2],
              kinds[3]);
}

// nC from each side: a macroblock whose neighbours are all 16 (I_PCM-like) or all 0 codes its blocks
// with the FLC or the nC 0 table; the decoder must choose the same, with either side or both.
TEST(ResidualMacroblock, NeighbourSidesSelectTheTable) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x56789abu);
  for (int pattern = 0; pattern < 4; ++pattern) {
    // Frame 2 MBs wide; MB 0, 1 are PCM (all 16); MB 2 (left unavailable, top MB 0) and MB 3 (left MB 2,
    // top MB 1) coded. pattern picks which of the PCM macroblocks the slice holds.
    std::vector<gpuec_mb> recs;
    const int first = pattern;  // 0: both tops; 1: MB 3's top only; 2, 3: none
    for (int addr = first; addr < 4; ++addr) {
      gpuec_mb m = random_record(rng, addr, 0);
      if (addr < 2) {
        std::memset(&m, 0, sizeof m);
        m.mb_addr = addr;
        m.kind = GPUEC_MB_PCM;
      } else {
        while (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) m = random_record(rng, addr, 0);
      }
      recs.push_back(m);
    }
    const EncodedSlice s = encode_slice(std::move(recs), 2, first, 0, rng);
    avc::BitReader br = s.bits.reader();
    ASSERT_EQ(decode_slice(s, br, true), s.recs.size()) << "pattern " << pattern;
    EXPECT_EQ(br.pos(), s.bits.end);
  }
}

TEST(ResidualMacroblock, BadArguments) {
  const Bits bits = from_string(zeros(64));
  gpuec_mb m;
  cavlc::MbTotals t;
  const avc::ResidualNeighbours nb;
  const std::vector<std::pair<int, unsigned>> cases = {{GPUEC_MB_SKIP, 0},      {GPUEC_MB_PCM, 0},
                                                       {7, 0},                  {GPUEC_MB_NORMAL, 0x30},
                                                       {GPUEC_MB_I16x16, 0x05}, {GPUEC_MB_I16x16, 0x40}};
  for (auto [kind, cbp] : cases) {
    avc::BitReader br = bits.reader();
    EXPECT_EQ(avc::decode_mb_residual(br, static_cast<gpuec_mb_kind>(kind), cbp, nb, m, t), avc::kResidualBadArgument)
        << kind << " " << cbp;
    EXPECT_EQ(br.pos(), 0u);
    EXPECT_FALSE(br.ok());
  }
}

// Damaged and cut macroblock data and plain random bits: every call returns 0 or an error, reports the
// failing block, never reads past the buffer (address sanitizer build) nor moves past the end; a slice
// cut before its end never decodes whole.
TEST(ResidualMacroblock, DamagedTruncatedAndRandomInput) {
  std::mt19937 rng(gpuec_test::test_seed("avc_residual_test") ^ 0x6789abcu);
  int decoded = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<gpuec_mb> recs;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      gpuec_mb m = random_record(rng, i, 50);
      while (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) m = random_record(rng, i, 50);
      recs.push_back(m);
    }
    const int lead = static_cast<int>(rng() % 8);
    const EncodedSlice s = encode_slice(std::move(recs), 4, 0, lead, rng);
    const uint64_t len = s.bits.end - s.bits.begin;

    // Cut: never decodes the whole slice.
    {
      const uint64_t cut = s.bits.begin + rng() % (len == 0 ? 1 : len);
      const Bits bits = exact_copy(s.bits.data.get(), s.bits.begin, cut);
      avc::BitReader br = bits.reader();
      if (len > 0) {
        EXPECT_LT(decode_slice(s, br, false), s.recs.size()) << "cut at " << cut - s.bits.begin << " of " << len;
      }
      EXPECT_LE(br.pos(), cut);
    }
    // Flipped bits: any outcome but a crash; the reader stays inside.
    {
      Bits bits = exact_copy(s.bits.data.get(), s.bits.begin, s.bits.end);
      for (int f = 0; f < 1 + static_cast<int>(rng() % 4) && len > 0; ++f) {
        const uint64_t at = s.bits.begin + rng() % len;
        bits.data[at >> 3] ^= static_cast<uint8_t>(0x80 >> (at & 7));
      }
      avc::BitReader br = bits.reader();
      decode_slice(s, br, false);
      EXPECT_LE(br.pos(), bits.end);
    }
    // Random bits, random kind / cbp / neighbours.
    {
      std::vector<uint8_t> buf(1 + rng() % 300);
      const bool sparse = rng() & 1;
      for (auto& b : buf) b = static_cast<uint8_t>(sparse ? (rng() & rng()) : rng());
      const uint64_t begin = rng() % 8, end = std::max<uint64_t>(begin, buf.size() * 8 - rng() % 8);
      const Bits bits = exact_copy(buf.data(), begin, end);
      avc::BitReader br = bits.reader();
      cavlc::MbTotals left, top, cur;
      for (auto* t : {&left, &top})
        for (uint8_t* p = &t->luma[0]; p < &t->luma[0] + sizeof(cavlc::MbTotals); ++p)
          *p = static_cast<uint8_t>(rng() % 17);
      avc::ResidualNeighbours nb{(rng() & 1) ? &left : nullptr, (rng() & 1) ? &top : nullptr};
      const bool i16 = rng() & 1;
      const unsigned cbp = (i16 ? ((rng() & 1) ? 15u : 0u) : rng() % 16) | (rng() % 3) << 4;
      gpuec_mb m;
      avc::ResidualBlockRef where{cavlc::kLumaDC, -1};
      const int r = avc::decode_mb_residual(br, i16 ? GPUEC_MB_I16x16 : GPUEC_MB_NORMAL, cbp, nb, m, cur, &where);
      EXPECT_LE(br.pos(), bits.end);
      if (r == 0) {
        ++decoded;
        EXPECT_TRUE(br.ok());
        EXPECT_EQ(where.index, -1) << "failed block reported on success";
      } else {
        ++rejected;
        EXPECT_LT(r, 0);
        EXPECT_FALSE(br.ok());
        EXPECT_GE(where.index, 0);
        EXPECT_LT(where.index, 16);
      }
    }
  }
  std::printf("random macroblocks: %d decoded, %d rejected\n", decoded, rejected);
}

// ---- Speed (printed, not asserted) --------------------------------------------------------------------

// A 1080p-sized slice (8160 macroblocks) of mostly small levels, at three densities: decoded
// macroblocks and residual megabits per second, single thread.
TEST(ResidualSpeed, DecodeMacroblocks) {
  std::mt19937 rng(12345);
  for (int density : {30, 150, 500}) {
    const int kMbs = 8160, kWidth = 120;
    std::vector<gpuec_mb> recs;
    for (int i = 0; i < kMbs; ++i) {
      gpuec_mb m;
      std::memset(&m, 0, sizeof m);
      m.mb_addr = i;
      m.kind = (rng() % 10 < 2) ? GPUEC_MB_I16x16 : GPUEC_MB_NORMAL;
      const unsigned chroma = rng() % 3;
      m.cbp = static_cast<uint8_t>((m.kind == GPUEC_MB_I16x16 ? 15u : rng() % 16) | chroma << 4);
      auto level = [&]() -> int16_t {
        if (static_cast<int>(rng() % 1000) >= density) return 0;
        const int mag = rng() % 4 ? 1 : 2 + static_cast<int>(rng() % 10);
        return static_cast<int16_t>((rng() & 1) ? -mag : mag);
      };
      fill_coded_blocks(m, level);
      recs.push_back(m);
    }
    const EncodedSlice s = encode_slice(std::move(recs), kWidth, 0, 0, rng);
    std::vector<cavlc::MbTotals> totals(kMbs);
    gpuec_mb out;
    int passes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double seconds = 0;
    do {
      avc::BitReader br = s.bits.reader();
      for (int addr = 0; addr < kMbs; ++addr) {
        avc::ResidualNeighbours nb;
        if (addr % kWidth) nb.left = &totals[static_cast<size_t>(addr - 1)];
        if (addr >= kWidth) nb.top = &totals[static_cast<size_t>(addr - kWidth)];
        const gpuec_mb& m = s.recs[static_cast<size_t>(addr)];
        if (avc::decode_mb_residual(br, static_cast<gpuec_mb_kind>(m.kind), m.cbp, nb, out,
                                    totals[static_cast<size_t>(addr)]) != 0) {
          FAIL() << "MB " << addr;
        }
      }
      ASSERT_EQ(br.pos(), s.bits.end);
      ++passes;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (seconds < 0.2);
    const double mb_per_s = double(kMbs) * passes / seconds;
    const double bits = double(s.bits.end - s.bits.begin);
    std::printf("residual decode, coefficient density %.3f: %.0f bits/MB, %.2f M MB/s, %.0f Mbit/s\n",
                density / 1000.0, bits / kMbs, mb_per_s / 1e6, bits * passes / seconds / 1e6);
  }
}

}  // namespace
