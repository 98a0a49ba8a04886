// Known answers for the CPU segment packer (bench_kernels/pack.h), and random tables against a bit-by-bit model.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/pack.h"
#include "vle/bitwriter.h"

namespace {

std::string bit_string(const uint8_t* buf, uint64_t nbits) {
  std::string s;
  for (uint64_t i = 0; i < nbits; ++i) s += ((buf[i >> 3] >> (7 - (i & 7))) & 1) ? '1' : '0';
  return s;
}

uint32_t seed_from_env(uint32_t fallback) {
  const char* s = std::getenv("GPUEC_SEED");
  return s ? static_cast<uint32_t>(std::strtoul(s, nullptr, 0)) : fallback;
}

// A segment table over word sources: every segment gets its own source words (first_word), its bits
// given as a string of '0'/'1' so that the expected stream is the concatenation of the strings.
struct Table {
  std::vector<uint32_t> words, first_word, len;
  std::vector<uint64_t> offset;
  std::string expect;
  void add(const std::string& bits) {
    first_word.push_back(static_cast<uint32_t>(words.size()));
    len.push_back(static_cast<uint32_t>(bits.size()));
    offset.push_back(expect.size());
    for (size_t w = 0; w < (bits.size() + 31) / 32; ++w) {
      uint32_t v = 0;
      for (size_t b = 0; b < 32; ++b) {
        const size_t i = w * 32 + b;
        v = (v << 1) | (i < bits.size() ? uint32_t(bits[i] == '1') : uint32_t((i * 7) & 1));  // junk past the end
      }
      words.push_back(v);
    }
    words.push_back(0xFFFFFFFFu);  // junk between segments
    expect += bits;
  }
  gpuec_bench::WordSegments seg() const { return {words.data(), first_word.data(), len.data(), offset.data(), len.size()}; }
};

std::string random_bits(std::mt19937& rng, size_t n) {
  std::string s(n, '0');
  for (auto& c : s) c = (rng() & 1) ? '1' : '0';
  return s;
}

// Packs t and checks the stream, the zero padding to the word boundary and the canary after it.
void expect_packed(const Table& t, const std::string& what) {
  const uint64_t total = t.expect.size();
  const uint64_t bytes = vle::packed_bytes(total);
  std::vector<uint8_t> out(bytes + 8, 0xA5);
  ASSERT_EQ(gpuec_bench::pack_ref(t.seg(), out.data(), bytes), total) << what;
  const std::string got = bit_string(out.data(), bytes * 8);
  const std::string want = t.expect + std::string(bytes * 8 - total, '0');
  if (got != want) {
    size_t b = 0;
    while (got[b] == want[b]) ++b;
    size_t seg = 0;
    while (seg + 1 < t.offset.size() && t.offset[seg + 1] <= b) ++seg;
    FAIL() << what << ": first differing stream bit " << b << " (segment " << seg << ", offset " << t.offset[seg]
           << ", len " << t.len[seg] << ")";
  }
  for (size_t i = bytes; i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5) << what << ": wrote past the stream, byte " << i;
}

TEST(Pack, NoSegmentsAndEmptySegmentsWriteNothing) {
  uint8_t out[4] = {0xA5, 0xA5, 0xA5, 0xA5};
  EXPECT_EQ(gpuec_bench::pack_ref(gpuec_bench::WordSegments{nullptr, nullptr, nullptr, nullptr, 0}, out, 4), 0u);
  Table t;
  for (int i = 0; i < 5; ++i) t.add("");
  EXPECT_EQ(gpuec_bench::pack_ref(t.seg(), out, 4), 0u);
  for (uint8_t b : out) EXPECT_EQ(b, 0xA5);
}

TEST(Pack, OneBitIsPaddedToAWholeWord) {
  Table t;
  t.add("1");
  uint8_t out[6] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
  ASSERT_EQ(gpuec_bench::pack_ref(t.seg(), out, 4), 1u);
  EXPECT_EQ(out[0], 0x80);
  EXPECT_EQ(out[1], 0x00);
  EXPECT_EQ(out[3], 0x00);
  EXPECT_EQ(out[4], 0xA5);
}

TEST(Pack, ThirtyTwoAndThirtyThreeBits) {
  const uint32_t words[3] = {0xDEADBEEFu, 0x80000000u, 0x12345678u};
  const uint32_t first[2] = {0, 2};
  const uint32_t len[2] = {33, 32};
  const uint64_t off[2] = {0, 33};
  uint8_t out[12];
  ASSERT_EQ(gpuec_bench::pack_ref(gpuec_bench::WordSegments{words, first, len, off, 2}, out, sizeof out), 65u);
  // DEADBEEF, 1, then 12345678 shifted right by one bit.
  const uint8_t want[12] = {0xDE, 0xAD, 0xBE, 0xEF, 0x80 | 0x09, 0x1A, 0x2B, 0x3C, 0x00, 0x00, 0x00, 0x00};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], want[i]) << "byte " << i;
}

TEST(Pack, EveryAlignmentAndLengthAcrossWordAndByteBoundaries) {
  std::mt19937 rng(7);
  for (int a = 0; a < 64; ++a) {
    for (int l = 1; l <= 70; ++l) {
      Table t;
      t.add(random_bits(rng, a));
      t.add("");
      t.add(random_bits(rng, l));
      t.add(random_bits(rng, 1 + (a * l) % 40));
      expect_packed(t, "prefix " + std::to_string(a) + " len " + std::to_string(l));
    }
  }
}

TEST(Pack, RandomTablesMatchTheConcatenation) {
  const uint32_t seed = seed_from_env(0x5eed0001u);
  std::printf("Pack.RandomTables seed: 0x%x (GPUEC_SEED overrides)\n", seed);
  RecordProperty("seed", std::to_string(seed));
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    Table t;
    const int n = 1 + static_cast<int>(rng() % 2000);
    for (int i = 0; i < n; ++i) {
      const uint32_t kind = rng() % 100;
      const size_t l = kind < 20 ? 0 : kind < 95 ? rng() % 200 : kind < 99 ? rng() % 5000 : rng() % 70000;
      t.add(random_bits(rng, l));
    }
    expect_packed(t, "seed " + std::to_string(seed) + " round " + std::to_string(round));
  }
}

TEST(Pack, ByteSourcesMatchBitWriterCopyBits) {
  const uint32_t seed = seed_from_env(0x5eed0002u);
  std::printf("Pack.ByteSources seed: 0x%x (GPUEC_SEED overrides)\n", seed);
  std::mt19937 rng(seed);
  std::vector<uint8_t> src(4096);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  for (int round = 0; round < 50; ++round) {
    const size_t n = 1 + rng() % 300;
    std::vector<uint64_t> src_bit(n), offset(n);
    std::vector<uint32_t> len(n);
    std::vector<uint8_t> want(8192, 0);
    vle::BitWriter bw(want.data(), want.size());
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      len[i] = rng() % 4 == 0 ? 0 : rng() % 100;
      src_bit[i] = rng() % (src.size() * 8 - len[i]);
      offset[i] = total;
      total += len[i];
      bw.copy_bits(src.data(), src_bit[i], len[i]);
    }
    bw.flush();
    std::vector<uint8_t> got(vle::packed_bytes(total) + 4, 0xA5);
    ASSERT_EQ(gpuec_bench::pack_ref(gpuec_bench::ByteSegments{src.data(), src_bit.data(), len.data(), offset.data(), n}, got.data(),
                            vle::packed_bytes(total)),
              total);
    for (uint64_t i = 0; i < vle::packed_bytes(total); ++i)
      ASSERT_EQ(got[i], want[i]) << "seed " << seed << " round " << round << " byte " << i;
    for (uint64_t i = vle::packed_bytes(total); i < got.size(); ++i) ASSERT_EQ(got[i], 0xA5);
  }
}

TEST(Pack, SmallOutputGetsThePrefixAndTheTotal) {
  std::mt19937 rng(3);
  Table t;
  for (int i = 0; i < 10; ++i) t.add(random_bits(rng, 37));
  std::vector<uint8_t> full(vle::packed_bytes(370));
  ASSERT_EQ(gpuec_bench::pack_ref(t.seg(), full.data(), full.size()), 370u);
  for (uint64_t cap : {0, 1, 3, 4, 5, 20, 45}) {
    std::vector<uint8_t> out(64, 0xA5);
    ASSERT_EQ(gpuec_bench::pack_ref(t.seg(), out.data(), cap), 370u) << "cap " << cap;
    for (uint64_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i < cap ? full[i] : 0xA5) << "cap " << cap << " byte " << i;
  }
}

TEST(Pack, OffsetsThatAreNotTheScanAreRefused) {
  const uint32_t words[2] = {0xFFFFFFFFu, 0xFFFFFFFFu};
  const uint32_t first[2] = {0, 1};
  const uint32_t len[2] = {5, 5};
  uint8_t out[4] = {0xA5, 0xA5, 0xA5, 0xA5};
  const uint64_t gap[2] = {0, 6}, start[2] = {1, 6}, overlap[2] = {0, 4};
  for (const uint64_t* off : {gap, start, overlap})
    EXPECT_EQ(gpuec_bench::pack_ref(gpuec_bench::WordSegments{words, first, len, off, 2}, out, 4), gpuec_bench::kPackBadOffsets);
  for (uint8_t b : out) EXPECT_EQ(b, 0xA5);
}

TEST(Pack, LongSegmentsSharingSourceWords) {
  // Segments may read the same source words: a 2^20 + 5 bit segment and pieces of it.
  std::mt19937 rng(11);
  const size_t nbits = (1u << 20) + 5;
  const std::string bits = random_bits(rng, nbits + 64);
  Table t;
  t.add(bits.substr(0, nbits));
  std::vector<uint32_t> first = t.first_word, len = t.len;
  std::vector<uint64_t> off = t.offset;
  std::string expect = t.expect;
  for (uint32_t piece : {1u, 31u, 32u, 33u, 1000u}) {
    first.push_back(0);
    len.push_back(piece);
    off.push_back(expect.size());
    expect += bits.substr(0, piece);
  }
  const uint64_t bytes = vle::packed_bytes(expect.size());
  std::vector<uint8_t> out(bytes);
  ASSERT_EQ(gpuec_bench::pack_ref(gpuec_bench::WordSegments{t.words.data(), first.data(), len.data(), off.data(), len.size()},
                          out.data(), bytes),
            expect.size());
  EXPECT_EQ(bit_string(out.data(), expect.size()), expect);
}

}  // namespace
