// The GVLE payload (vle/encode.h) against a bit-by-bit twin built on BitWriter, at chunk boundaries;
// the decoder (vle/decode.h): round trips with several thread counts and every error it reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "vle/bitwriter.h"
#include "vle/decode.h"
#include "vle/encode.h"
#include "vle/huffman.h"

namespace {

using gpuec_test::kCanary;
constexpr uint64_t C = vle::kChunkSymbols;

struct Payload {
  std::vector<uint8_t> bytes;  // padded payload, exactly
  std::vector<uint64_t> chunk_bits;
  uint64_t bits = 0;
};

// The layout of vle/encode.h spelled out with BitWriter, one code at a time.
Payload encode_twin(const std::vector<uint8_t>& in, const vle::CodeTable& t) {
  Payload p;
  std::vector<uint8_t> buf(vle::encoded_bound_bytes(in.size()) + 8);
  vle::BitWriter bw(buf.data(), buf.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (i % C == 0) p.chunk_bits.push_back(bw.bits());
    bw.put(t.code[in[i]], t.len[in[i]]);
  }
  p.bits = bw.bits();
  bw.put(0, static_cast<int>((32 - p.bits % 32) % 32));
  bw.flush();
  buf.resize(bw.bits() / 8);
  p.bytes = buf;
  return p;
}

Payload encode(const std::vector<uint8_t>& in, const vle::CodeTable& t) {
  Payload p;
  std::vector<uint8_t> buf(vle::encoded_bound_bytes(in.size()) + 16, kCanary);
  p.chunk_bits.assign(vle::chunk_count(in.size()), ~uint64_t{0});
  p.bits = vle::encode_ref(in.data(), in.size(), t, buf.data(), p.chunk_bits.data());
  const size_t padded = (p.bits + 31) / 32 * 4;
  for (size_t i = padded; i < buf.size(); ++i)
    if (buf[i] != kCanary) ADD_FAILURE() << "encode_ref wrote byte " << i << " past the padded payload (" << padded << ")";
  buf.resize(padded);
  p.bytes = buf;
  return p;
}

vle::CodeTable code_for(const std::vector<uint8_t>& data) {
  uint64_t counts[256];
  vle::histogram_ref(data.data(), data.size(), counts);
  vle::CodeTable t;
  EXPECT_EQ(vle::build_code(counts, vle::kMaxCodeLength, &t), 0);
  return t;
}

// Text-like bytes, with some rare symbols so that long codes (> 11 bits) occur.
std::vector<uint8_t> sample(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  const char* common = "etaoin shrdlu";
  for (auto& b : v) {
    const uint32_t r = rng() % 10000;
    b = r < 9000 ? static_cast<uint8_t>(common[r % 13]) : r < 9990 ? static_cast<uint8_t>(r % 64 + 64)
                                                                    : static_cast<uint8_t>(rng());
  }
  return v;
}

// Bytes whose code reaches 16 bits: Fibonacci-like counts.
std::vector<uint8_t> deep_sample(uint32_t seed) {
  std::vector<uint8_t> v;
  uint64_t a = 1, b = 1;
  for (int s = 0; s < 26; ++s) {
    v.insert(v.end(), a, static_cast<uint8_t>(s * 9));
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

void expect_round_trip(const std::vector<uint8_t>& in, const std::string& what) {
  const vle::CodeTable t = code_for(in);
  const Payload got = encode(in, t), want = encode_twin(in, t);
  ASSERT_EQ(got.bits, want.bits) << what;
  ASSERT_EQ(got.chunk_bits, want.chunk_bits) << what;
  ASSERT_EQ(got.bytes, want.bytes) << what;
  for (unsigned threads : {1u, 2u, 3u, 0u}) {
    std::vector<uint8_t> out(in.size() + 1, kCanary);
    const vle::DecodeStatus s = vle::decode_ref(got.bytes.data(), got.bytes.size(), got.bits, got.chunk_bits.data(),
                                                got.chunk_bits.size(), t, out.data(), in.size(), threads);
    ASSERT_EQ(s, vle::DecodeStatus::kOk) << what << ": " << vle::decode_status_message(s);
    ASSERT_EQ(out.back(), kCanary) << what << ": decode_ref wrote past n";
    out.pop_back();
    ASSERT_TRUE(out == in) << what << ", threads " << threads;
  }
}

TEST(Encode, KnownAnswer) {
  // Code: a = 0, b = 10, c = 11 (counts 2, 1, 1; ties by symbol).
  const std::vector<uint8_t> in = {'a', 'b', 'c', 'a'};
  const vle::CodeTable t = code_for(in);
  ASSERT_EQ(t.len[int{'a'}], 1);
  ASSERT_EQ(t.code[int{'b'}], 0b10);
  ASSERT_EQ(t.code[int{'c'}], 0b11);
  const Payload p = encode(in, t);
  EXPECT_EQ(p.bits, 6u);                 // 0 10 11 0
  ASSERT_EQ(p.bytes.size(), 4u);         // padded to 32 bits
  EXPECT_EQ(p.bytes[0], 0b01011000);
  EXPECT_EQ(p.bytes[1], 0);
  EXPECT_EQ(p.bytes[2], 0);
  EXPECT_EQ(p.bytes[3], 0);
  ASSERT_EQ(p.chunk_bits.size(), 1u);
  EXPECT_EQ(p.chunk_bits[0], 0u);
}

TEST(Encode, EmptyInputWritesNothing) {
  vle::CodeTable t = {};
  uint8_t out[4] = {kCanary, kCanary, kCanary, kCanary};
  EXPECT_EQ(vle::encode_ref(nullptr, 0, t, out, nullptr), 0u);
  EXPECT_EQ(out[0], kCanary);
  EXPECT_EQ(vle::decode_ref(nullptr, 0, 0, nullptr, 0, t, nullptr, 0, 1), vle::DecodeStatus::kOk);
}

TEST(Encode, SymbolWithoutCodeFails) {
  std::vector<uint8_t> in(1000, 'x');
  const vle::CodeTable t = code_for(in);
  in[500] = 'y';
  std::vector<uint8_t> out(vle::encoded_bound_bytes(in.size()));
  EXPECT_EQ(vle::encode_ref(in.data(), in.size(), t, out.data(), nullptr), UINT64_MAX);
}

TEST(Encode, ChunkBoundariesMatchTheTwin) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{63}, size_t{64}, size_t{65}, size_t{127}, size_t{1000},
                   size_t{C - 65}, size_t{C - 64}, size_t{C - 1}, size_t{C}, size_t{C + 1}, size_t{C + 63},
                   size_t{C + 64}, size_t{C + 65}, size_t{2 * C - 1}, size_t{2 * C}, size_t{2 * C + 1},
                   size_t{7 * C + 12345}, size_t{13 * C + 7}})  // 8 and 14 chunks: 2 and 3 workers
    expect_round_trip(sample(n, static_cast<uint32_t>(n)), "n " + std::to_string(n));
}

TEST(Encode, SixteenBitCodesRoundTrip) {
  const std::vector<uint8_t> in = deep_sample(3);
  const vle::CodeTable t = code_for(in);
  EXPECT_EQ(*std::max_element(t.len, t.len + 256), 16);
  expect_round_trip(in, "deep");
  // Only the rarest symbols: runs of 16-bit codes, every 32-bit word boundary crossed unaligned.
  std::vector<uint8_t> rare;
  for (int i = 0; i < 3000; ++i) rare.push_back(in[static_cast<size_t>(i) * 7919 % in.size()] < 18 ? 0 : 9);
  const Payload p = encode(rare, t), q = encode_twin(rare, t);
  EXPECT_EQ(p.bytes, q.bytes);
}

TEST(Encode, OneSymbolAlphabetAndAll256Symbols) {
  expect_round_trip(std::vector<uint8_t>(3 * C + 5, 'q'), "one symbol");
  std::vector<uint8_t> all(C + 256);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i * 131 + i / 256);
  expect_round_trip(all, "all 256");
}

// ---- decoder errors ----

struct Fixture {
  std::vector<uint8_t> in;
  vle::CodeTable t;
  Payload p;
  std::vector<uint8_t> out;
  explicit Fixture(size_t n) : in(sample(n, 42)), t(code_for(in)), p(encode(in, t)), out(n) {}
  vle::DecodeStatus run(unsigned threads = 1) {
    return vle::decode_ref(p.bytes.data(), p.bytes.size(), p.bits, p.chunk_bits.data(), p.chunk_bits.size(), t,
                           out.data(), in.size(), threads);
  }
};

TEST(Decode, RejectsInconsistentArguments) {
  Fixture f(3 * C + 10);
  ASSERT_EQ(f.run(), vle::DecodeStatus::kOk);
  EXPECT_EQ(vle::decode_ref(f.p.bytes.data(), f.p.bytes.size(), f.p.bits, f.p.chunk_bits.data(), 3, f.t,
                            f.out.data(), f.in.size(), 1),
            vle::DecodeStatus::kBadChunkCount);
  EXPECT_EQ(vle::decode_ref(f.p.bytes.data(), f.p.bits / 8 - 1, f.p.bits, f.p.chunk_bits.data(), 4, f.t,
                            f.out.data(), f.in.size(), 1),
            vle::DecodeStatus::kPayloadTooShort);
  EXPECT_EQ(vle::decode_ref(f.p.bytes.data(), f.p.bytes.size(), UINT64_MAX, f.p.chunk_bits.data(), 4, f.t,
                            f.out.data(), f.in.size(), 1),
            vle::DecodeStatus::kPayloadTooShort);
  EXPECT_EQ(vle::decode_ref(f.p.bytes.data(), f.p.bytes.size(), f.p.bits, nullptr, 4, f.t, f.out.data(),
                            f.in.size(), 1),
            vle::DecodeStatus::kNullArgument);
  EXPECT_EQ(vle::decode_ref(nullptr, 0, 8, nullptr, 0, f.t, nullptr, 0, 1), vle::DecodeStatus::kPayloadTooShort);
  EXPECT_EQ(vle::decode_ref(f.p.bytes.data(), 4, 8, nullptr, 0, f.t, nullptr, 0, 1),
            vle::DecodeStatus::kChunkUnderrun) << "payload bits without symbols";
}

TEST(Decode, RejectsABadChunkIndex) {
  Fixture f(3 * C + 10);
  f.p.chunk_bits[0] = 1;
  EXPECT_EQ(f.run(), vle::DecodeStatus::kBadChunkIndex);
  f.p.chunk_bits[0] = 0;
  std::swap(f.p.chunk_bits[1], f.p.chunk_bits[2]);
  EXPECT_EQ(f.run(), vle::DecodeStatus::kBadChunkIndex);
  std::swap(f.p.chunk_bits[1], f.p.chunk_bits[2]);
  f.p.chunk_bits[3] = f.p.bits + 1;
  EXPECT_EQ(f.run(), vle::DecodeStatus::kBadChunkIndex);
}

TEST(Decode, ChunksMustEndWhereTheNextStarts) {
  // 16 chunks: with 4 threads 4 workers of 4 chunks (decoded in interleaved pairs). Chunk k is
  // damaged through its end, the start of chunk k + 1, which then starts mid-code and fails too
  // (or not): the status is chunk k's, the lowest failing one, whichever worker finishes first.
  for (uint64_t k : {uint64_t{8}, uint64_t{9}}) {  // first and second of a pair
    for (unsigned threads : {1u, 2u, 4u}) {
      Fixture f(16 * C);
      f.p.bytes.resize(f.p.bytes.size() + 4, 0);  // room for total_bits + 1
      f.p.chunk_bits[k + 1] += 1;                 // chunk k gets one bit more than its codes
      EXPECT_EQ(f.run(threads), vle::DecodeStatus::kChunkUnderrun) << k << " " << threads;
      f.p.chunk_bits[k + 1] -= 2;  // chunk k gets one bit less than its codes
      EXPECT_EQ(f.run(threads), vle::DecodeStatus::kChunkOverrun) << k << " " << threads;
      f.p.chunk_bits[k + 1] += 1;
      ASSERT_EQ(f.run(threads), vle::DecodeStatus::kOk);
      f.p.bits += 1;  // the last chunk ends before total_bits
      EXPECT_EQ(f.run(threads), vle::DecodeStatus::kChunkUnderrun) << threads;
      f.p.bits -= 2;  // the last chunk's codes run past total_bits
      EXPECT_EQ(f.run(threads), vle::DecodeStatus::kChunkOverrun) << threads;
    }
  }
}

TEST(Decode, RejectsInvalidCodeWords) {
  // One-symbol code: '0' is the code, a '1' bit is no code word.
  std::vector<uint8_t> in(9 * C + 3, 'z');
  const vle::CodeTable t = code_for(in);
  Payload p = encode(in, t);
  std::vector<uint8_t> out(in.size());
  for (uint64_t bit : {uint64_t{0}, uint64_t{1}, C - 1, C, 3 * C + 7, 5 * C + 2, 9 * C + 2}) {
    Payload q = p;
    q.bytes[bit >> 3] |= static_cast<uint8_t>(0x80 >> (bit & 7));
    for (unsigned threads : {1u, 2u})
      EXPECT_EQ(vle::decode_ref(q.bytes.data(), q.bytes.size(), q.bits, q.chunk_bits.data(), q.chunk_bits.size(), t,
                                out.data(), in.size(), threads),
                vle::DecodeStatus::kInvalidCode)
          << "bit " << bit;
  }
  // Empty alphabet but symbols to decode: every bit pattern is invalid.
  vle::CodeTable none = {};
  EXPECT_EQ(vle::decode_ref(p.bytes.data(), p.bytes.size(), p.bits, p.chunk_bits.data(), p.chunk_bits.size(), none,
                            out.data(), in.size(), 1),
            vle::DecodeStatus::kInvalidCode);
}

TEST(Decode, RejectsNonCanonicalTables) {
  Fixture f(1000);
  vle::CodeTable bad = f.t;
  int a = -1, b = -1;
  for (int s = 0; s < 256 && b < 0; ++s)
    for (int r = s + 1; r < 256 && b < 0; ++r)
      if (bad.len[s] && bad.len[s] == bad.len[r]) a = s, b = r;
  ASSERT_GE(b, 0);
  std::swap(bad.code[a], bad.code[b]);  // still a prefix code, but not the canonical one
  std::swap(f.t, bad);
  EXPECT_EQ(f.run(), vle::DecodeStatus::kBadTable);
  vle::CodeTable over = {};
  over.len[0] = over.len[1] = over.len[2] = 1;
  f.t = over;
  EXPECT_EQ(f.run(), vle::DecodeStatus::kBadTable);
}

TEST(Decode, CorruptPayloadNeverCrashes) {
  // Random flips with lengths that make codes overrun, land on invalid patterns or decode to wrong
  // symbols: a status or wrong bytes, never a read outside the (exact-size) payload.
  Fixture f(8 * C + 300);
  std::mt19937 rng(11);
  int errors = 0;
  for (int iter = 0; iter < 200; ++iter) {
    Payload q = f.p;
    for (int k = 0; k < 3; ++k) q.bytes[rng() % q.bytes.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    std::vector<uint8_t> exact(q.bytes);  // heap block of the exact size for ASan
    const vle::DecodeStatus s = vle::decode_ref(exact.data(), exact.size(), q.bits, q.chunk_bits.data(),
                                                q.chunk_bits.size(), f.t, f.out.data(), f.in.size(), 1 + iter % 3);
    if (s != vle::DecodeStatus::kOk) ++errors;
  }
  EXPECT_GT(errors, 50);
}

TEST(Decode, MessagesAreNamed) {
  for (int s = 0; s <= static_cast<int>(vle::DecodeStatus::kNullArgument); ++s) {
    const std::string m = vle::decode_status_message(static_cast<vle::DecodeStatus>(s));
    EXPECT_FALSE(m.empty());
    EXPECT_NE(m, "unknown decode status") << s;
  }
}

}  // namespace
