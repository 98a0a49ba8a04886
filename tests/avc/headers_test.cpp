// The parser above the macroblock layer (avc/): the RBSP bit reader, Annex B splitting and emulation
// prevention on hand-made byte strings, SPS/PPS/slice headers on hand-made NAL units (every slice group map
// type, the refused features), slice group maps against small examples worked out by hand from 8.2.2.1-
// 8.2.2.8, and every JVT conformance stream of GPUEC_SHARED_DIR/conformance (skipped with a message when
// the folder is absent): split, parsed, rebuilt byte for byte, escaping reproduced, sizes and counts equal
// to the MANIFEST. A robustness test parses truncated and bit-flipped copies of some streams (run it under
// -fsanitize=address,undefined to make it mean something; seed printed, --seed=N).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "avc/annexb.h"
#include "avc/bitreader.h"
#include "avc/headers.h"
#include "avc/params.h"
#include "avc/slice_group.h"
#include "avc/slice_header.h"
#include "fuzz_budget.h"
#include "test_seed.h"

namespace {

using Bytes = std::vector<uint8_t>;

// ------------------------------------------------------------------ a bit writer for hand-made RBSPs

struct Bits {
  Bytes bytes;
  uint64_t n = 0;
  void bit(uint32_t b) {
    if (n % 8 == 0) bytes.push_back(0);
    if (b & 1) bytes.back() = uint8_t(bytes.back() | (0x80u >> (n % 8)));
    ++n;
  }
  Bits& u(int nbits, uint64_t v) {
    for (int i = nbits - 1; i >= 0; --i) bit(uint32_t(v >> i));
    return *this;
  }
  Bits& ue(uint64_t v) {
    const uint64_t x = v + 1;
    int len = 0;
    while ((x >> len) > 1) ++len;
    u(len, 0);
    return u(len + 1, x);
  }
  Bits& se(int64_t v) { return ue(v > 0 ? uint64_t(2 * v - 1) : uint64_t(-2 * v)); }
  Bits& trailing() {
    bit(1);
    while (n % 8) bit(0);
    return *this;
  }
};

Bytes from_hex(const std::string& hex) {
  Bytes b;
  std::istringstream is(hex);
  std::string t;
  while (is >> t) b.push_back(uint8_t(std::strtoul(t.c_str(), nullptr, 16)));
  return b;
}

// A NAL unit (header byte + standard escaping of rbsp) behind a 4-byte start code, appended to stream.
void append_nal(Bytes& stream, uint8_t header, const Bytes& rbsp) {
  const uint8_t sc[] = {0, 0, 0, 1};
  stream.insert(stream.end(), sc, sc + 4);
  stream.push_back(header);
  avc::escape_rbsp(rbsp.data(), rbsp.size(), stream);
}

// ------------------------------------------------------------------ BitReader

TEST(AvcBitReader, FixedLengthReads) {
  const Bytes d = from_hex("a5 3c ff 00 81");
  avc::BitReader br(d.data(), d.size());
  EXPECT_EQ(br.u(0), 0u);
  EXPECT_EQ(br.u(1), 1u);
  EXPECT_EQ(br.u(3), 2u);      // 010
  EXPECT_EQ(br.u(8), 0x53u);   // 0101 0011
  EXPECT_EQ(br.peek(4), 0xcu);
  EXPECT_EQ(br.u(12), 0xcffu);
  EXPECT_EQ(br.pos(), 24u);
  EXPECT_EQ(br.u(16), 0x0081u);
  EXPECT_TRUE(br.ok());
  EXPECT_EQ(br.left(), 0u);
  avc::BitReader b32(d.data(), d.size());
  b32.u(4);
  EXPECT_EQ(b32.u(32), 0x53cff008u);
  EXPECT_TRUE(b32.ok());
}

TEST(AvcBitReader, ExpGolomb) {
  // codeNum 0..8 (Table 9-2), then se() of codeNum 1..4 and te().
  Bits b;
  for (uint32_t v = 0; v <= 8; ++v) b.ue(v);
  b.ue(1).ue(2).ue(3).ue(4);
  b.u(1, 1).u(1, 0);  // te(range 1): !bit
  b.ue(5);            // te(range 3) = ue
  b.trailing();
  // The codes of Table 9-2 in the first bits: 1 010 011 00100 00101 00110 00111 0001000 0001001
  EXPECT_EQ(b.bytes[0], 0xa6u);  // 1010 0110
  avc::BitReader br(b.bytes.data(), b.bytes.size());
  for (uint32_t v = 0; v <= 8; ++v) EXPECT_EQ(br.ue(), v);
  EXPECT_EQ(br.se(), 1);
  EXPECT_EQ(br.se(), -1);
  EXPECT_EQ(br.se(), 2);
  EXPECT_EQ(br.se(), -2);
  EXPECT_EQ(br.te(1), 0u);
  EXPECT_EQ(br.te(1), 1u);
  EXPECT_EQ(br.te(3), 5u);
  EXPECT_TRUE(br.ok());
  EXPECT_FALSE(br.more_rbsp_data());
}

TEST(AvcBitReader, ExpGolombExtremes) {
  Bits b;
  b.ue(0xfffffffeull);      // 31 zeros, 1, 31 bits: the largest ue(v)
  b.se(2147483647);         // codeNum 2^32 - 3
  b.se(-2147483647);        // codeNum 2^32 - 2
  b.trailing();
  avc::BitReader br(b.bytes.data(), b.bytes.size());
  EXPECT_EQ(br.ue(), 0xfffffffeu);
  EXPECT_EQ(br.se(), 2147483647);
  EXPECT_EQ(br.se(), -2147483647);
  EXPECT_TRUE(br.ok());
  // 32 leading zeros: not a valid ue(v) for any H.264 element: error.
  Bits z;
  z.u(32, 0).u(1, 1).u(32, 0).trailing();
  avc::BitReader bz(z.bytes.data(), z.bytes.size());
  bz.ue();
  EXPECT_FALSE(bz.ok());
}

TEST(AvcBitReader, ReadsPastTheEnd) {
  const Bytes d = from_hex("ff");
  avc::BitReader br(d.data(), d.size());
  EXPECT_EQ(br.u(9), 0u);
  EXPECT_FALSE(br.ok());
  EXPECT_EQ(br.pos(), br.end());
  avc::BitReader b2(d.data(), d.size());
  EXPECT_EQ(b2.peek(12), 0xff0u);  // bits past the end read as 0, no error
  EXPECT_TRUE(b2.ok());
  b2.u(8);
  EXPECT_EQ(b2.u(1), 0u);
  EXPECT_FALSE(b2.ok());
  // ue() running out of bits (only zeros, or a prefix longer than what is left).
  const Bytes zeros = from_hex("00 00");
  avc::BitReader b3(zeros.data(), zeros.size());
  EXPECT_EQ(b3.ue(), 0u);
  EXPECT_FALSE(b3.ok());
  const Bytes shortcode = from_hex("01");  // 0000 0001: 7 zeros, then the suffix is missing
  avc::BitReader b4(shortcode.data(), shortcode.size());
  b4.ue();
  EXPECT_FALSE(b4.ok());
  // A reader on a bit range never reads past its end bit, even inside a byte.
  const Bytes d2 = from_hex("80 ff");
  avc::BitReader b5(d2.data(), 0, 9);
  EXPECT_EQ(b5.u(9), 0x101u);
  EXPECT_EQ(b5.u(1), 0u);
  EXPECT_FALSE(b5.ok());
  avc::BitReader b6(d2.data(), 4, 9);
  EXPECT_EQ(b6.peek(8), 0x08u);  // bits 4..8 = 0000 1, then zeros
  EXPECT_EQ(b6.left(), 5u);
  b6.skip(6);
  EXPECT_FALSE(b6.ok());
}

TEST(AvcBitReader, MoreRbspData) {
  // more_rbsp_data() of the reader over bits [begin, end) of `hex` (end 0: to the last byte), before and
  // after each of the reads `reads` (bit counts): one expected answer per step.
  struct Case {
    const char* what;
    const char* hex;
    uint64_t begin, end;
    std::vector<int> reads;
    std::vector<bool> more;
  };
  const Case cases[] = {
      {"1 | 1000 0000: one element bit, then the stop bit byte", "c0", 0, 0, {1}, {true, false}},
      // Trailing zero bytes after the stop bit (cabac_zero_words or a damaged tail) change nothing.
      {"101 then the stop bit at bit 2, zero bytes after", "a0 00 00", 0, 0, {1, 1}, {true, true, false}},
      // A stop bit in an earlier byte than the element data is impossible; data spanning bytes:
      {"0000 0001 | 1: more data until bit 8 (the stop bit)", "01 80", 0, 0, {7, 1}, {true, true, false}},
      // No 1 bit at all: false (the caller's trailing-bits check reports the missing stop bit).
      {"no 1 bit", "00 00", 0, 0, {}, {false}},
      // A reader ending inside a byte ignores the bits after its end (this used to see them).
      {"1000 0000 1|111 1111, end 9: the stop bit at bit 8", "80 ff", 0, 9, {8}, {true, false}},
      {"80 ff, bits 1..7: all zero", "80 ff", 1, 8, {}, {false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Bytes d = from_hex(c.hex);
    avc::BitReader br = c.end ? avc::BitReader(d.data(), c.begin, c.end) : avc::BitReader(d.data(), d.size());
    ASSERT_EQ(c.more.size(), c.reads.size() + 1);
    for (size_t k = 0; k < c.more.size(); ++k) {
      EXPECT_EQ(br.more_rbsp_data(), c.more[k]) << "after " << k << " reads";
      if (k < c.reads.size()) br.u(c.reads[k]);
    }
  }
}

// The reader's fast paths (whole 64-bit loads, one-step ue) against a bit-by-bit model, on random data,
// random bit ranges and random read sequences, so that reads near the end take every path.
TEST(AvcBitReader, RandomAgainstBitModel) {
  std::mt19937 rng(gpuec_test::test_seed("avc_headers_test"));
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes d(1 + rng() % 24);
    for (uint8_t& b : d) b = rng() % 3 == 0 ? 0 : uint8_t(rng());
    const uint64_t nbits = d.size() * 8;
    const uint64_t begin = rng() % (nbits + 1);
    const uint64_t end = begin + rng() % (nbits - begin + 1);
    auto bit = [&](uint64_t i) { return i < end ? (d[i >> 3] >> (7 - (i & 7))) & 1u : 0u; };
    avc::BitReader br(d.data(), begin, end);
    uint64_t pos = begin;
    bool ok = true;
    for (int k = 0; k < 40 && ok; ++k) {
      const int op = int(rng() % 3);
      if (op == 0) {
        const int n = int(rng() % 33);
        uint32_t want = 0;
        for (int i = 0; i < n; ++i) want = (want << 1) | bit(pos + uint64_t(i));
        ASSERT_EQ(br.peek(n), want) << "iter " << iter;
        const uint32_t got = br.u(n);
        if (pos + uint64_t(n) > end) {
          ok = false;
        } else {
          ASSERT_EQ(got, want) << "iter " << iter;
          pos += uint64_t(n);
        }
      } else {
        // ue(v): leading zeros, a 1, as many suffix bits; a code that does not fit before end fails.
        int zeros = 0;
        while (pos + uint64_t(zeros) < end && !bit(pos + uint64_t(zeros))) ++zeros;
        const uint64_t len = uint64_t(2 * zeros + 1);
        const uint32_t got = br.ue();
        if (zeros > 31 || pos + len > end) {
          ok = false;
        } else {
          uint64_t v = 0;
          for (uint64_t i = 0; i < len; ++i) v = (v << 1) | bit(pos + i);
          ASSERT_EQ(uint64_t(got), v - 1) << "iter " << iter;
          pos += len;
        }
      }
      ASSERT_EQ(br.ok(), ok) << "iter " << iter;
      if (ok) {
        ASSERT_EQ(br.pos(), pos);
      }
    }
  }
}

// ------------------------------------------------------------------ Annex B

std::string rebuild(const Bytes& s, const std::vector<avc::NalUnit>& nals) {
  std::string out;
  for (const avc::NalUnit& n : nals) out.append(reinterpret_cast<const char*>(s.data() + n.begin), n.range_end - n.begin);
  return out;
}

TEST(AvcAnnexB, StartCodeForms) {
  // leading zeros + 4-byte start code, 3-byte start code, trailing zeros between NALs, at the end.
  const Bytes t = from_hex("00 00 00 00 01 67 42 00 00 01 68 ce 80 00 00 00 00 00 01 65 88 84 00 00 01 06 05 00 00");
  std::vector<avc::NalUnit> nals;
  avc::Error err;
  ASSERT_TRUE(avc::split_annexb(t.data(), t.size(), nals, err)) << err.describe();
  ASSERT_EQ(nals.size(), 4u);
  EXPECT_EQ(nals[0].begin, 0u);
  EXPECT_EQ(nals[0].header, 5u);
  EXPECT_EQ(nals[0].leading_zeros(), 2u);
  EXPECT_EQ(nals[0].end, 7u);
  EXPECT_EQ(nals[0].nal_unit_type, 7);
  EXPECT_EQ(nals[0].nal_ref_idc, 3);
  EXPECT_EQ(nals[0].range_end, 7u);
  EXPECT_EQ(nals[1].begin, 7u);
  EXPECT_EQ(nals[1].leading_zeros(), 0u);
  EXPECT_EQ(nals[1].size(), 3u);  // 68 ce 80
  EXPECT_EQ(nals[1].trailing_zeros(), 2u);  // 5 zeros: 2 trailing_zero_8bits, zero_byte, 00 00 (01)
  EXPECT_EQ(nals[2].leading_zeros(), 1u);
  EXPECT_EQ(nals[2].nal_unit_type, 5);
  EXPECT_EQ(nals[2].size(), 3u);
  EXPECT_EQ(nals[2].trailing_zeros(), 0u);
  EXPECT_EQ(nals[3].nal_unit_type, 6);
  EXPECT_EQ(nals[3].nal_ref_idc, 0);
  EXPECT_EQ(nals[3].size(), 2u);
  EXPECT_EQ(nals[3].trailing_zeros(), 2u);
  EXPECT_EQ(nals[3].range_end, t.size());
  EXPECT_EQ(rebuild(t, nals), std::string(t.begin(), t.end()));
}

void expect_split_error(const std::string& hex, int64_t nal_index, int64_t offset, const char* words) {
  const Bytes t = from_hex(hex);
  std::vector<avc::NalUnit> nals;
  avc::Error err;
  EXPECT_FALSE(avc::split_annexb(t.data(), t.size(), nals, err)) << hex;
  EXPECT_EQ(err.status, avc::Status::kMalformed) << hex;
  EXPECT_EQ(err.nal_index, nal_index) << hex << ": " << err.describe();
  EXPECT_EQ(err.offset, offset) << hex << ": " << err.describe();
  EXPECT_NE(err.message.find(words), std::string::npos) << hex << ": " << err.describe();
}

TEST(AvcAnnexB, Errors) {
  std::vector<avc::NalUnit> nals;
  avc::Error err;
  EXPECT_FALSE(avc::split_annexb(nullptr, 0, nals, err));
  EXPECT_NE(err.message.find("empty stream"), std::string::npos);
  expect_split_error("00 00 00", 0, 0, "only zero bytes");
  expect_split_error("67 42 00 00 01 68", 0, 0, "missing start code");
  expect_split_error("00 01 67 42", 0, 1, "missing start code");
  expect_split_error("00 00 02 67", 0, 2, "missing start code");
  expect_split_error("00 00 01 67 42 00 00 01", 1, 5, "truncated stream");
  expect_split_error("00 00 01", 0, 0, "truncated stream");
  expect_split_error("00 00 01 67 42 00 00 01 e8 ce", 1, 8, "forbidden_zero_bit");
  expect_split_error("00 00 01 67 42 00 00 02 11", 0, 5, "0x000002");
  expect_split_error("00 00 01 67 42 00 00 00 05 11", 0, 5, "0x000000");
  expect_split_error("00 00 01 67 42 00 00 00 00 02", 0, 5, "0x000000");
  expect_split_error("00 00 01 00 00 01 67", 0, 3, "empty NAL unit");
  expect_split_error("00 00 01 67 42 00 00 01 00 00", 1, 8, "empty NAL unit");
  // The NAL units before the faulty one are kept.
  const Bytes t = from_hex("00 00 01 67 42 00 00 01 68 00 00 02");
  EXPECT_FALSE(avc::split_annexb(t.data(), t.size(), nals, err));
  ASSERT_EQ(nals.size(), 1u);
  EXPECT_EQ(nals[0].size(), 2u);
  EXPECT_EQ(err.describe(), "NAL 1 at byte 9: malformed: 0x000002 inside a NAL unit");
}

void expect_rbsp(const std::string& nal_hex, const std::string& rbsp_hex, std::vector<uint32_t> epb, bool standard) {
  const Bytes nal = from_hex(nal_hex);
  avc::Rbsp r;
  avc::Error err;
  ASSERT_TRUE(avc::extract_rbsp(nal.data(), nal.size(), r, err)) << nal_hex;
  EXPECT_EQ(r.bytes, from_hex(rbsp_hex)) << nal_hex;
  EXPECT_EQ(r.epb, epb) << nal_hex;
  EXPECT_EQ(r.standard_escaping, standard) << nal_hex;
  const bool is_std = avc::is_standard_escaping(nal.data() + 1, nal.size() - 1, r.bytes.data(), r.bytes.size());
  EXPECT_EQ(is_std, standard) << nal_hex;
  Bytes esc;
  avc::escape_rbsp(r.bytes.data(), r.bytes.size(), esc);
  if (standard) {
    EXPECT_EQ(esc, Bytes(nal.begin() + 1, nal.end())) << nal_hex;
  }
  // Escaping is an involution up to superfluous bytes: escaping and extracting again gives the RBSP back.
  Bytes again{nal[0]};
  again.insert(again.end(), esc.begin(), esc.end());
  avc::Rbsp r2;
  ASSERT_TRUE(avc::extract_rbsp(again.data(), again.size(), r2, err));
  EXPECT_EQ(r2.bytes, r.bytes) << nal_hex;
  EXPECT_TRUE(r2.standard_escaping);
}

TEST(AvcAnnexB, EmulationPrevention) {
  expect_rbsp("65 88 84 21", "88 84 21", {}, true);
  expect_rbsp("65 00 00 03 01 80", "00 00 01 80", {3}, true);
  expect_rbsp("65 00 00 03 00 80", "00 00 00 80", {3}, true);
  expect_rbsp("65 00 00 03 02 00 00 03 03 80", "00 00 02 00 00 03 80", {3, 7}, true);
  // Two EPBs in a row: 00 00 00 00 01 80 escapes as 00 00 03 00 00 03 01 80.
  expect_rbsp("65 00 00 03 00 00 03 01 80", "00 00 00 00 01 80", {3, 6}, true);
  // 00 03 after an EPB is data: the EPB's zeros do not count again.
  expect_rbsp("65 00 00 03 00 03 80", "00 00 00 03 80", {3}, true);
  // cabac_zero_word at the end: 80 00 00 is escaped as 80 00 00 03 (7.4.1).
  expect_rbsp("65 80 00 00 03", "80 00 00", {4}, true);
  expect_rbsp("65 80 00 00 03 00 00 03", "80 00 00 00 00", {4, 7}, true);
  // A superfluous 0x03 (00 00 03 followed by a byte > 3): removed all the same (7.3.1), not standard.
  expect_rbsp("65 00 00 03 04 80", "00 00 04 80", {3}, false);
  expect_rbsp("65 11 00 00 03 ff", "11 00 00 ff", {4}, false);
  // Types 14, 20, 21 have a 4-byte header: zeros in it are not emulation prevention context.
  const Bytes ext = from_hex("74 00 00 03 00 00 03 01 80");
  avc::Rbsp r;
  avc::Error err;
  ASSERT_TRUE(avc::extract_rbsp(ext.data(), ext.size(), r, err));
  EXPECT_EQ(r.header_bytes, 4);
  EXPECT_EQ(r.bytes, from_hex("00 00 01 80"));
  EXPECT_EQ(r.epb, std::vector<uint32_t>{6});
  // Errors: empty, shorter than the header.
  EXPECT_FALSE(avc::extract_rbsp(ext.data(), 0, r, err));
  EXPECT_FALSE(avc::extract_rbsp(ext.data(), 3, r, err));
  // is_standard_escaping: a missing 0x03, an extra byte, a different byte.
  const Bytes rb = from_hex("00 00 01 80");
  EXPECT_TRUE(avc::is_standard_escaping(from_hex("00 00 03 01 80").data(), 5, rb.data(), rb.size()));
  EXPECT_FALSE(avc::is_standard_escaping(from_hex("00 00 01 80").data(), 4, rb.data(), rb.size()));
  EXPECT_FALSE(avc::is_standard_escaping(from_hex("00 00 03 01 80 00").data(), 6, rb.data(), rb.size()));
  EXPECT_FALSE(avc::is_standard_escaping(from_hex("00 00 03 01 81").data(), 5, rb.data(), rb.size()));
}

TEST(AvcAnnexB, EscapingRoundTripRandom) {
  std::mt19937 rng(gpuec_test::test_seed("avc_headers_test"));
  avc::Rbsp r;
  avc::Error err;
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t n = 1 + rng() % 64;
    Bytes rbsp(n);
    for (uint8_t& b : rbsp) {
      const uint32_t k = rng() % 8;
      b = k < 4 ? 0 : k < 7 ? uint8_t(rng() % 4) : uint8_t(rng());
    }
    // A real RBSP ends with the stop bit byte, possibly followed by cabac_zero_words (00 00 pairs).
    rbsp.back() = 0x80;
    if (rng() % 4 == 0) rbsp.insert(rbsp.end(), 2 * (1 + rng() % 2), uint8_t(0));
    Bytes nal{0x65};
    avc::escape_rbsp(rbsp.data(), rbsp.size(), nal);
    ASSERT_LE(nal.size() - 1, avc::escaped_size_bound(rbsp.size()));
    // No 0x000000, 0x000001, 0x000002 inside; never ends with 0x00.
    for (size_t i = 0; i + 2 < nal.size(); ++i)
      ASSERT_FALSE(nal[i] == 0 && nal[i + 1] == 0 && nal[i + 2] <= 2) << "iter " << iter << " at " << i;
    ASSERT_NE(nal.back(), 0);
    ASSERT_TRUE(avc::extract_rbsp(nal.data(), nal.size(), r, err));
    ASSERT_EQ(r.bytes, rbsp) << "iter " << iter;
    ASSERT_EQ(r.epb.size(), nal.size() - 1 - rbsp.size());
    ASSERT_TRUE(r.standard_escaping);
    ASSERT_TRUE(avc::is_standard_escaping(nal.data() + 1, nal.size() - 1, rbsp.data(), rbsp.size()));
    // And it splits as one NAL unit.
    Bytes stream{0, 0, 1};
    stream.insert(stream.end(), nal.begin(), nal.end());
    std::vector<avc::NalUnit> nals;
    ASSERT_TRUE(avc::split_annexb(stream.data(), stream.size(), nals, err)) << err.describe();
    ASSERT_EQ(nals.size(), 1u);
    ASSERT_EQ(nals[0].size(), nal.size());
  }
}

// ------------------------------------------------------------------ hand-made parameter sets and slices

struct SpsOpts {
  uint32_t profile = 66, constraints = 0xc0, level = 30, id = 0;
  uint32_t chroma_format = 1, bit_depth_luma = 8;
  uint32_t log2_fn = 4, poc_type = 0, log2_poc = 6;
  bool always_zero = false;
  std::vector<int32_t> ref_offsets{3, -2};
  uint32_t refs = 2, w = 11, h = 9;
  bool frame_mbs_only = true, crop = false, vui = false;
  bool extra_bits = false;  // 3 bits of junk before rbsp_trailing_bits
};

Bytes sps_rbsp(const SpsOpts& o) {
  Bits b;
  b.u(8, o.profile).u(8, o.constraints).u(8, o.level).ue(o.id);
  if (o.profile == 100) b.ue(o.chroma_format).ue(o.bit_depth_luma - 8).ue(0).u(1, 0).u(1, 0);
  b.ue(o.log2_fn - 4).ue(o.poc_type);
  if (o.poc_type == 0) b.ue(o.log2_poc - 4);
  if (o.poc_type == 1) {
    b.u(1, o.always_zero).se(-1).se(2).ue(o.ref_offsets.size());
    for (int32_t v : o.ref_offsets) b.se(v);
  }
  b.ue(o.refs).u(1, 0).ue(o.w - 1).ue(o.h - 1).u(1, o.frame_mbs_only);
  if (!o.frame_mbs_only) b.u(1, 0);
  b.u(1, 1).u(1, o.crop);
  if (o.crop) b.ue(0).ue(2).ue(0).ue(4);  // right 4 px, bottom 8 px
  b.u(1, o.vui);
  if (o.vui) {
    b.u(1, 1).u(8, 255).u(16, 12).u(16, 11);  // aspect ratio: Extended_SAR 12:11
    b.u(1, 0);                                // overscan
    b.u(1, 1).u(3, 5).u(1, 0).u(1, 1).u(24, 0x010101);
    b.u(1, 1).ue(1).ue(1);                    // chroma location
    b.u(1, 1).u(32, 1001).u(32, 60000).u(1, 1);
    b.u(1, 1);                                // nal hrd
    b.ue(1).u(4, 2).u(4, 3);
    for (int i = 0; i < 2; ++i) b.ue(1000 + i).ue(2000).u(1, i);
    b.u(5, 23).u(5, 23).u(5, 23).u(5, 24);
    b.u(1, 0);                                // vcl hrd
    b.u(1, 0);                                // low_delay_hrd_flag
    b.u(1, 0);                                // pic_struct_present_flag
    b.u(1, 1).u(1, 1).ue(2).ue(1).ue(16).ue(16).ue(0).ue(2);
  }
  if (o.extra_bits) b.u(3, 5);
  return b.trailing().bytes;
}

struct PpsOpts {
  uint32_t id = 0, sps_id = 0;
  bool cabac = false, bottom_poc = false;
  uint32_t groups = 1, map_type = 0;
  std::vector<uint32_t> runs{2, 1, 3};
  std::vector<uint32_t> tl{12, 3}, br{24, 5};
  bool dir = false;
  uint32_t rate = 7;
  std::vector<uint8_t> ids;
  uint32_t refs = 1;
  bool weighted = false;
  uint32_t bipred = 0;
  int32_t qp = 0;
  bool deblock = true, cip = false, redundant = false;
  bool ext = false, t8x8 = false;
};

Bytes pps_rbsp(const PpsOpts& o) {
  Bits b;
  b.ue(o.id).ue(o.sps_id).u(1, o.cabac).u(1, o.bottom_poc).ue(o.groups - 1);
  if (o.groups > 1) {
    b.ue(o.map_type);
    if (o.map_type == 0)
      for (uint32_t g = 0; g < o.groups; ++g) b.ue(o.runs[g] - 1);
    if (o.map_type == 2)
      for (uint32_t g = 0; g + 1 < o.groups; ++g) b.ue(o.tl[g]).ue(o.br[g]);
    if (o.map_type >= 3 && o.map_type <= 5) b.u(1, o.dir).ue(o.rate - 1);
    if (o.map_type == 6) {
      b.ue(o.ids.size() - 1);
      int bits = 0;
      while ((1u << bits) < o.groups) ++bits;
      for (uint8_t g : o.ids) b.u(bits, g);
    }
  }
  b.ue(o.refs - 1).ue(0).u(1, o.weighted).u(2, o.bipred).se(o.qp).se(0).se(-2);
  b.u(1, o.deblock).u(1, o.cip).u(1, o.redundant);
  if (o.ext) b.u(1, o.t8x8).u(1, 0).se(3);
  return b.trailing().bytes;
}

struct SliceOpts {
  uint32_t first_mb = 0, type = 7, pps = 0, frame_num = 0, idr_pic_id = 3;
  uint32_t poc_lsb = 9;
  int32_t delta_bottom = -1, delta0 = 5, delta1 = -6;
  uint32_t redundant_pic_cnt = 0;
  bool override_refs = false;
  uint32_t refs = 1;
  std::vector<std::pair<uint32_t, uint32_t>> list_ops;  // empty: flag 0
  std::vector<std::vector<uint32_t>> mmco;              // empty: flag 0 (non-IDR)
  int32_t qp_delta = 2;
  uint32_t deblock_idc = 0;
  int32_t alpha = -3, beta = 6;
  uint32_t cycle = 0;
};

// Header fields in 7.3.3's order for the given sets; data_bit = where slice_data() starts.
Bytes slice_rbsp(const SliceOpts& o, bool idr, uint32_t nal_ref_idc, const SpsOpts& s, const PpsOpts& p,
                 uint64_t* data_bit, int cycle_bits = 0) {
  Bits b;
  b.ue(o.first_mb).ue(o.type).ue(o.pps).u(s.log2_fn, o.frame_num);
  if (idr) b.ue(o.idr_pic_id);
  if (s.poc_type == 0) {
    b.u(s.log2_poc, o.poc_lsb);
    if (p.bottom_poc) b.se(o.delta_bottom);
  } else if (s.poc_type == 1 && !s.always_zero) {
    b.se(o.delta0);
    if (p.bottom_poc) b.se(o.delta1);
  }
  if (p.redundant) b.ue(o.redundant_pic_cnt);
  if (o.type % 5 == 0) {
    b.u(1, o.override_refs);
    if (o.override_refs) b.ue(o.refs - 1);
    b.u(1, !o.list_ops.empty());
    if (!o.list_ops.empty()) {
      for (auto& op : o.list_ops) b.ue(op.first).ue(op.second);
      b.ue(3);
    }
  }
  if (nal_ref_idc) {
    if (idr) {
      b.u(1, 0).u(1, 1);
    } else {
      b.u(1, !o.mmco.empty());
      for (auto& op : o.mmco)
        for (uint32_t v : op) b.ue(v);
      if (!o.mmco.empty()) b.ue(0);
    }
  }
  b.se(o.qp_delta);
  if (p.deblock) {
    b.ue(o.deblock_idc);
    if (o.deblock_idc != 1) b.se(o.alpha).se(o.beta);
  }
  if (cycle_bits) b.u(cycle_bits, o.cycle);
  *data_bit = b.n;
  b.ue(0).ue(3).u(5, 0x15);  // some slice data
  return b.trailing().bytes;
}

struct Stream {
  Bytes bytes;
  std::vector<avc::NalUnit> nals;
  avc::HeaderParser hp;
  avc::Error err;
  size_t next = 0;
  bool split() { return avc::split_annexb(bytes.data(), bytes.size(), nals, err); }
  // Parses the next NAL unit.
  bool parse_next() { return hp.parse(bytes.data(), nals[next], int64_t(next), err) && (++next, true); }
};

TEST(AvcParams, SpsPpsSliceHeader) {
  SpsOpts so;
  so.vui = true;
  so.crop = true;
  PpsOpts po;
  po.bottom_poc = true;
  po.redundant = true;
  po.refs = 3;
  SliceOpts idr_opts;
  SliceOpts p_opts;
  p_opts.first_mb = 33;
  p_opts.type = 0;
  p_opts.frame_num = 5;
  p_opts.redundant_pic_cnt = 2;
  p_opts.override_refs = true;
  p_opts.refs = 2;
  p_opts.list_ops = {{0, 4}, {2, 1}};
  p_opts.mmco = {{1, 7}, {6, 2}, {4, 3}, {3, 0, 1}, {2, 5}};
  p_opts.qp_delta = -26;  // QP 0
  p_opts.deblock_idc = 1;
  Stream st;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  uint64_t idr_data = 0, p_data = 0;
  append_nal(st.bytes, 0x65, slice_rbsp(idr_opts, true, 3, so, po, &idr_data));
  append_nal(st.bytes, 0x41, slice_rbsp(p_opts, false, 2, so, po, &p_data));
  ASSERT_TRUE(st.split()) << st.err.describe();
  ASSERT_EQ(st.nals.size(), 4u);
  ASSERT_TRUE(st.parse_next()) << st.err.describe();
  const avc::Sps& s = *st.hp.params().sps(0);
  EXPECT_EQ(s.profile_idc, 66);
  EXPECT_EQ(s.constraint_flags, 0xc0);
  EXPECT_EQ(s.level_idc, 30);
  EXPECT_EQ(s.log2_max_frame_num, 4);
  EXPECT_EQ(s.log2_max_pic_order_cnt_lsb, 6);
  EXPECT_EQ(s.max_num_ref_frames, 2u);
  EXPECT_EQ(s.pic_width_in_mbs, 11u);
  EXPECT_EQ(s.pic_height_in_map_units, 9u);
  EXPECT_EQ(s.pic_size_in_mbs(), 99u);
  EXPECT_EQ(s.crop_width(), 172u);
  EXPECT_EQ(s.crop_height(), 136u);
  EXPECT_TRUE(s.vui_parameters_present_flag);
  EXPECT_EQ(s.vui.sar_width, 12);
  EXPECT_EQ(s.vui.sar_height, 11);
  EXPECT_EQ(s.vui.time_scale, 60000u);
  EXPECT_TRUE(s.vui.nal_hrd_parameters_present_flag);
  EXPECT_EQ(s.vui.max_dec_frame_buffering, 2u);
  EXPECT_STREQ(avc::profile_name(s.profile_idc, s.constraint_flags), "Constrained Baseline");
  ASSERT_TRUE(st.parse_next()) << st.err.describe();
  const avc::Pps& p = *st.hp.params().pps(0);
  EXPECT_EQ(p.num_slice_groups, 1);
  EXPECT_EQ(p.num_ref_idx_l0_default_active, 3);
  EXPECT_EQ(p.chroma_qp_index_offset, -2);
  EXPECT_TRUE(p.bottom_field_pic_order_in_frame_present_flag);
  EXPECT_TRUE(p.deblocking_filter_control_present_flag);
  EXPECT_TRUE(p.redundant_pic_cnt_present_flag);
  ASSERT_TRUE(st.parse_next()) << st.err.describe();
  {
    const avc::SliceHeader& sh = st.hp.slice();
    EXPECT_TRUE(sh.idr);
    EXPECT_TRUE(sh.is_i());
    EXPECT_EQ(sh.slice_type_raw, 7);
    EXPECT_EQ(sh.idr_pic_id, 3u);
    EXPECT_EQ(sh.pic_order_cnt_lsb, 9u);
    EXPECT_EQ(sh.delta_pic_order_cnt_bottom, -1);
    EXPECT_EQ(sh.num_ref_idx_l0_active, 0);
    EXPECT_TRUE(sh.long_term_reference_flag);
    EXPECT_EQ(sh.slice_qp, 28);
    EXPECT_EQ(sh.slice_alpha_c0_offset_div2, -3);
    EXPECT_EQ(sh.slice_beta_offset_div2, 6);
    EXPECT_EQ(sh.data_bit, idr_data);
    EXPECT_EQ(sh.pic_size_in_mbs, 99u);
    EXPECT_EQ(sh.sps, &s);
  }
  const avc::SliceHeader idr_sh = st.hp.slice();
  ASSERT_TRUE(st.parse_next()) << st.err.describe();
  const avc::SliceHeader& sh = st.hp.slice();
  EXPECT_FALSE(sh.idr);
  EXPECT_TRUE(sh.is_p());
  EXPECT_EQ(sh.first_mb_in_slice, 33u);
  EXPECT_EQ(sh.frame_num, 5u);
  EXPECT_EQ(sh.redundant_pic_cnt, 2u);
  EXPECT_TRUE(sh.redundant());
  EXPECT_EQ(sh.num_ref_idx_l0_active, 2);
  ASSERT_EQ(sh.num_ref_pic_list_ops, 2);
  EXPECT_EQ(sh.ref_pic_list_ops[0].modification_of_pic_nums_idc, 0);
  EXPECT_EQ(sh.ref_pic_list_ops[0].value, 4u);
  EXPECT_EQ(sh.ref_pic_list_ops[1].modification_of_pic_nums_idc, 2);
  EXPECT_EQ(sh.ref_pic_list_ops[1].value, 1u);
  ASSERT_EQ(sh.num_mmco, 5);
  EXPECT_EQ(sh.mmco[0].difference_of_pic_nums_minus1, 7u);
  EXPECT_EQ(sh.mmco[1].long_term_frame_idx, 2u);
  EXPECT_EQ(sh.mmco[2].max_long_term_frame_idx_plus1, 3u);
  EXPECT_EQ(sh.mmco[3].difference_of_pic_nums_minus1, 0u);
  EXPECT_EQ(sh.mmco[3].long_term_frame_idx, 1u);
  EXPECT_EQ(sh.mmco[4].long_term_pic_num, 5u);
  EXPECT_EQ(sh.slice_qp, 0);
  EXPECT_EQ(sh.disable_deblocking_filter_idc, 1);
  EXPECT_EQ(sh.data_bit, p_data);
  EXPECT_TRUE(avc::first_slice_of_new_picture(idr_sh, sh));
  EXPECT_FALSE(avc::first_slice_of_new_picture(idr_sh, idr_sh));
}

// parse_slice_header_only (the threaded re-entropy's header parse from an RBSP prefix) against parse():
// headers of 5 to over 1000 bytes (many MMCO operations with long ue(v) codes: zero bytes, so emulation
// prevention inside the header and across the 64/128/256/512-byte prefixes), each NAL cut at every length
// (slice data, header or both truncated): the same result, the same error, the same header but stop_bit.
TEST(AvcParams, HeaderOnlyParseEqualsParse) {
  SpsOpts so;
  PpsOpts po;
  po.refs = 3;
  for (const int ops : {0, 1, 30, 70, 150, 400}) {
    SliceOpts o;
    o.type = 0;
    o.frame_num = 5;
    for (int k = 0; k < ops; ++k)  // difference_of_pic_nums_minus1 up to 2^21: 21 zero bits before it
      o.mmco.push_back({1, uint32_t(k % 3 == 0 ? 1u << (k % 22) : k)});
    Bytes head;
    append_nal(head, 0x67, sps_rbsp(so));
    append_nal(head, 0x68, pps_rbsp(po));
    uint64_t data_bit = 0;
    Bytes slice;
    append_nal(slice, 0x41, slice_rbsp(o, false, 2, so, po, &data_bit));
    for (size_t cut = 6; cut <= slice.size(); cut += (slice.size() - cut > 300 && cut % 64 > 8 ? 17 : 1)) {
      Stream a;
      a.bytes = head;
      a.bytes.insert(a.bytes.end(), slice.begin(), slice.begin() + int64_t(cut));
      if (!a.split()) continue;  // a cut ending in a zero byte: not a stream
      ASSERT_EQ(a.nals.size(), 3u);
      ASSERT_TRUE(a.parse_next() && a.parse_next()) << a.err.describe();
      avc::HeaderParser b;
      avc::Error eb;
      ASSERT_TRUE(b.parse(a.bytes.data(), a.nals[0], 0, eb) && b.parse(a.bytes.data(), a.nals[1], 1, eb));
      const bool ra = a.hp.parse(a.bytes.data(), a.nals[2], 2, a.err);
      const bool rb = b.parse_slice_header_only(a.bytes.data(), a.nals[2], 2, eb);
      ASSERT_EQ(ra, rb) << ops << " ops, cut " << cut << ": " << (ra ? eb : a.err).describe();
      if (!ra) {
        EXPECT_EQ(a.err.describe(), eb.describe()) << ops << " ops, cut " << cut;
        continue;
      }
      const avc::SliceHeader &x = a.hp.slice(), &y = b.slice();
      if (ops == 400 && cut == slice.size()) {
        EXPECT_GT(x.data_bit, 8u * 1000);
      }
      EXPECT_EQ(x.data_bit, y.data_bit);
      EXPECT_EQ(x.data_bit, data_bit);
      EXPECT_EQ(x.num_mmco, y.num_mmco);
      EXPECT_EQ(x.slice_qp, y.slice_qp);
      EXPECT_EQ(x.frame_num, y.frame_num);
      EXPECT_EQ(x.pic_size_in_mbs, y.pic_size_in_mbs);
      for (int k = 0; k < std::min<int>(x.num_mmco, avc::kMaxListedOps); ++k)
        EXPECT_EQ(x.mmco[k].difference_of_pic_nums_minus1, y.mmco[k].difference_of_pic_nums_minus1);
      // stop_bit: parse()'s, or 0 when the prefix was not the whole NAL; rbsp_stop_bit of the whole RBSP
      // gives it.
      uint64_t stop = 0;
      ASSERT_TRUE(avc::rbsp_stop_bit(a.hp.rbsp().bytes.data(), a.hp.rbsp().bytes.size(), &stop));
      EXPECT_EQ(stop, x.stop_bit);
      EXPECT_TRUE(y.stop_bit == 0 || y.stop_bit == x.stop_bit);
      if (a.nals[2].size() > 64 && y.data_bit < 8 * 40) {
        EXPECT_EQ(y.stop_bit, 0u) << "read more than a prefix";
      }
    }
  }
}

TEST(AvcParams, PocType1And2HighProfileCavlc) {
  // A High-profile SPS that stays inside baseline CAVLC (4:2:0, 8 bits, no scaling) is accepted.
  SpsOpts so;
  so.profile = 100;
  so.constraints = 0;
  so.poc_type = 1;
  PpsOpts po;
  po.bottom_poc = true;
  po.ext = true;  // transform_8x8_mode_flag 0, second_chroma_qp_index_offset 3
  Stream st;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  uint64_t data = 0;
  SliceOpts o;
  o.type = 2;
  append_nal(st.bytes, 0x65, slice_rbsp(o, true, 1, so, po, &data));
  so.poc_type = 2;
  so.id = 1;
  po.sps_id = 1;
  po.id = 1;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  uint64_t data2 = 0;
  o.pps = 1;
  o.type = 0;
  o.frame_num = 1;
  append_nal(st.bytes, 0x01, slice_rbsp(o, false, 0, so, po, &data2));
  ASSERT_TRUE(st.split());
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(st.parse_next()) << st.err.describe();
  EXPECT_EQ(st.hp.params().sps(0)->offset_for_ref_frame[1], -2);
  EXPECT_EQ(st.hp.params().sps(0)->num_ref_frames_in_pic_order_cnt_cycle, 2);
  EXPECT_EQ(st.hp.params().pps(0)->second_chroma_qp_index_offset, 3);
  EXPECT_EQ(st.hp.slice().data_bit, data2);
  EXPECT_EQ(st.hp.slice().nal_ref_idc, 0);
  EXPECT_EQ(st.hp.slice().sps->pic_order_cnt_type, 2);
}

// Parses SPS, PPS and one slice (or until the first failure); returns the error of the failing NAL.
avc::Error parse_all(const SpsOpts& so, const PpsOpts& po, const SliceOpts& o, uint8_t slice_header = 0x65,
                     int cycle_bits = 0) {
  Stream st;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  uint64_t data = 0;
  append_nal(st.bytes, slice_header, slice_rbsp(o, (slice_header & 31) == 5, slice_header >> 5, so, po, &data, cycle_bits));
  avc::Error err;
  if (!st.split()) return st.err;
  while (st.next < st.nals.size())
    if (!st.parse_next()) return st.err;
  return err;
}

void expect_refused(const avc::Error& e, avc::Status s, int64_t nal, const char* words) {
  EXPECT_EQ(e.status, s) << e.describe();
  EXPECT_EQ(e.nal_index, nal) << e.describe();
  EXPECT_NE(e.message.find(words), std::string::npos) << e.describe();
}

TEST(AvcParams, RefusedFeatures) {
  const SpsOpts so;
  const PpsOpts po;
  const SliceOpts o;
  EXPECT_TRUE(parse_all(so, po, o).ok()) << parse_all(so, po, o).describe();
  {
    SpsOpts s = so;
    s.frame_mbs_only = false;
    expect_refused(parse_all(s, po, o), avc::Status::kUnsupported, 0, "frame_mbs_only_flag 0");
  }
  {
    SpsOpts s = so;
    s.profile = 100;
    s.chroma_format = 2;
    expect_refused(parse_all(s, po, o), avc::Status::kUnsupported, 0, "4:2:2");
    s.chroma_format = 1;
    s.bit_depth_luma = 10;
    expect_refused(parse_all(s, po, o), avc::Status::kUnsupported, 0, "bit depth 10");
  }
  {
    PpsOpts p = po;
    p.cabac = true;
    expect_refused(parse_all(so, p, o), avc::Status::kUnsupported, 1, "CABAC");
    p = po;
    p.weighted = true;
    expect_refused(parse_all(so, p, o), avc::Status::kUnsupported, 1, "weighted_pred_flag");
    p = po;
    p.bipred = 1;
    expect_refused(parse_all(so, p, o), avc::Status::kUnsupported, 1, "weighted_bipred_idc");
    p = po;
    p.ext = true;
    p.t8x8 = true;
    expect_refused(parse_all(so, p, o), avc::Status::kUnsupported, 1, "transform_8x8_mode_flag");
  }
  {
    SliceOpts s = o;
    s.type = 1;  // B
    expect_refused(parse_all(so, po, s, 0x21), avc::Status::kUnsupported, 2, "B slices");
    s.type = 3;  // SP
    expect_refused(parse_all(so, po, s, 0x21), avc::Status::kUnsupported, 2, "SP slices");
    s.type = 9;  // SI
    expect_refused(parse_all(so, po, s, 0x25), avc::Status::kUnsupported, 2, "SI slices");
    expect_refused(parse_all(so, po, o, 0x22), avc::Status::kUnsupported, 2, "data partitioning");
  }
  // Malformed values.
  {
    // One slice header field off each time.
    struct Case {
      void (*set)(SliceOpts&);
      avc::Status status;
      const char* words;
    };
    const Case cases[] = {
        {[](SliceOpts& s) { s.type = 5; }, avc::Status::kMalformed, "IDR slice with slice_type 5"},  // P in an IDR
        {[](SliceOpts& s) { s.first_mb = 99; }, avc::Status::kMalformed, "first_mb_in_slice 99"},
        {[](SliceOpts& s) { s.qp_delta = 26; }, avc::Status::kMalformed, "QP 52"},
        {[](SliceOpts& s) { s.deblock_idc = 3; }, avc::Status::kMalformed, "disable_deblocking_filter_idc 3"},
        {[](SliceOpts& s) { s.pps = 1; }, avc::Status::kMissing, "PPS 1"},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.words);
      SliceOpts s = o;
      c.set(s);
      expect_refused(parse_all(so, po, s), c.status, 2, c.words);
    }
    PpsOpts p = po;
    p.sps_id = 3;
    expect_refused(parse_all(so, p, o), avc::Status::kMissing, 2, "SPS 3");
    SpsOpts sp = so;
    sp.w = 3000;
    expect_refused(parse_all(sp, po, o), avc::Status::kMalformed, 0, "macroblocks");
  }
}

TEST(AvcParams, TruncatedAndTrailingData) {
  const SpsOpts so;
  Bytes sps = sps_rbsp(so);
  avc::Sps s;
  avc::Error err;
  ASSERT_TRUE(avc::parse_sps(sps.data(), sps.size(), s, err)) << err.describe();
  for (size_t n = 0; n + 1 < sps.size(); ++n) {
    EXPECT_FALSE(avc::parse_sps(sps.data(), n, s, err)) << n;
    EXPECT_EQ(err.status, avc::Status::kMalformed);
  }
  SpsOpts xo;
  xo.extra_bits = true;
  const Bytes extra = sps_rbsp(xo);
  EXPECT_FALSE(avc::parse_sps(extra.data(), extra.size(), s, err));
  EXPECT_NE(err.message.find("data after"), std::string::npos) << err.describe();
  const PpsOpts po;
  Bytes pps = pps_rbsp(po);
  avc::Pps p;
  ASSERT_TRUE(avc::parse_pps(pps.data(), pps.size(), p, err));
  for (size_t n = 0; n + 1 < pps.size(); ++n) EXPECT_FALSE(avc::parse_pps(pps.data(), n, p, err)) << n;
}

// Later parameter sets replace earlier ones with the same id (MPS_MW_A-style streams).
TEST(AvcParams, ReplacedSets) {
  SpsOpts so;
  PpsOpts po;
  Stream st;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  so.w = 22;
  so.h = 18;
  po.qp = 4;
  append_nal(st.bytes, 0x67, sps_rbsp(so));
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  po.cabac = true;  // refused: the stored PPS 0 stays
  append_nal(st.bytes, 0x68, pps_rbsp(po));
  ASSERT_TRUE(st.split());
  ASSERT_TRUE(st.parse_next());
  ASSERT_TRUE(st.parse_next());
  const uint64_t g = st.hp.params().generation();
  EXPECT_EQ(st.hp.params().sps(0)->pic_width_in_mbs, 11u);
  ASSERT_TRUE(st.parse_next());
  ASSERT_TRUE(st.parse_next());
  const uint64_t g2 = st.hp.params().generation();
  EXPECT_GT(g2, g);
  EXPECT_EQ(st.hp.params().sps(0)->pic_width_in_mbs, 22u);
  EXPECT_EQ(st.hp.params().pps(0)->pic_init_qp_minus26, 4);
  EXPECT_FALSE(st.parse_next());
  EXPECT_EQ(st.err.nal_index, 4);
  EXPECT_EQ(st.hp.params().pps(0)->pic_init_qp_minus26, 4);
  EXPECT_EQ(st.hp.params().generation(), g2);
  EXPECT_EQ(st.hp.params().sps(1), nullptr);
}

// ------------------------------------------------------------------ slice group maps

avc::Sps pic(uint32_t w, uint32_t h) {
  avc::Sps s;
  s.pic_width_in_mbs = w;
  s.pic_height_in_map_units = h;
  return s;
}

avc::Pps groups(uint32_t num_slice_groups, uint32_t map_type) {
  avc::Pps p;
  p.num_slice_groups = num_slice_groups;
  p.slice_group_map_type = map_type;
  return p;
}

std::vector<int> map_of(const avc::Sps& s, const avc::Pps& p, uint32_t cycle = 0) {
  avc::Error err;
  EXPECT_TRUE(avc::check_slice_group_params(s, p, err)) << err.describe();
  std::vector<uint8_t> m(s.pic_size_in_mbs(), 0xee);
  avc::build_slice_group_map(s, p, cycle, m.data());
  return std::vector<int>(m.begin(), m.end());
}

TEST(AvcSliceGroups, Type0Interleaved) {
  avc::Pps p = groups(3, 0);
  p.run_length[0] = 2;
  p.run_length[1] = 1;
  p.run_length[2] = 3;
  // 4x2: runs 2, 1, 3 then again from group 0 (8.2.2.1).
  EXPECT_EQ(map_of(pic(4, 2), p), (std::vector<int>{0, 0, 1, 2, 2, 2, 0, 0}));
  EXPECT_EQ(map_of(pic(3, 1), p), (std::vector<int>{0, 0, 1}));
}

TEST(AvcSliceGroups, Type1Dispersed) {
  avc::Pps p = groups(2, 1);
  // ((x + (y * 2) / 2) % 2: a checkerboard.
  EXPECT_EQ(map_of(pic(4, 3), p), (std::vector<int>{0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1}));
  p.num_slice_groups = 3;
  // (x + (3y) / 2) % 3: row 0 offset 0, row 1 offset 1, row 2 offset 3.
  EXPECT_EQ(map_of(pic(4, 3), p), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 0, 1, 2, 0}));
}

TEST(AvcSliceGroups, Type2Foreground) {
  avc::Pps p = groups(3, 2);
  // 5x4. Group 0: (1,1)-(3,1); group 1: (2,1)-(2,3); left-over group 2. Group 0 is written last and wins.
  p.top_left[0] = 6;
  p.bottom_right[0] = 8;
  p.top_left[1] = 7;
  p.bottom_right[1] = 17;
  EXPECT_EQ(map_of(pic(5, 4), p), (std::vector<int>{2, 2, 2, 2, 2,  //
                                                    2, 0, 0, 0, 2,  //
                                                    2, 2, 1, 2, 2,  //
                                                    2, 2, 1, 2, 2}));
  avc::Error err;
  p.bottom_right[1] = 20;  // past the picture
  EXPECT_FALSE(avc::check_slice_group_params(pic(5, 4), p, err));
  p.bottom_right[1] = 16;  // column 1 < top_left's column 2
  EXPECT_FALSE(avc::check_slice_group_params(pic(5, 4), p, err));
  EXPECT_EQ(err.status, avc::Status::kMalformed);
}

TEST(AvcSliceGroups, Type3BoxOut) {
  avc::Pps p = groups(2, 3);
  p.slice_group_change_rate = 1;
  // 3x3, direction 0 (clockwise): centre, left, top-left, top, top-right, right, bottom-right, bottom, bottom-left.
  EXPECT_EQ(map_of(pic(3, 3), p, 4), (std::vector<int>{0, 0, 1, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(map_of(pic(3, 3), p, 6), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(map_of(pic(3, 3), p, 0), (std::vector<int>(9, 1)));
  EXPECT_EQ(map_of(pic(3, 3), p, 9), (std::vector<int>(9, 0)));
  // Direction 1 (counter-clockwise): centre, bottom, bottom-right, right, top-right, top, ...
  p.slice_group_change_direction_flag = true;
  EXPECT_EQ(map_of(pic(3, 3), p, 3), (std::vector<int>{1, 1, 1, 1, 0, 1, 1, 0, 0}));
  EXPECT_EQ(map_of(pic(3, 3), p, 5), (std::vector<int>{1, 1, 0, 1, 0, 0, 1, 0, 0}));
  // 4x2, direction 1: start at ((4-1)/2, (2-1)/2) = (1, 0); xDir 0, yDir 1.
  //   (1,0): yDir 1 and y == bottomBound 0 -> bottomBound 1, y 1, xDir 1;
  //   (1,1): xDir 1 and x == rightBound 1 -> rightBound 2, x 2, yDir -1;
  //   (2,1): y 1 != topBound 0 -> y 0;  (2,0): 4 units = rate 2 x cycle 2 taken.
  p.slice_group_change_rate = 2;
  EXPECT_EQ(map_of(pic(4, 2), p, 2), (std::vector<int>{1, 0, 0, 1, 1, 0, 0, 1}));
  // mapUnitsInSliceGroup0 = Min(cycle * rate, size) on any picture: count the zeros.
  p.slice_group_change_rate = 1;
  for (uint32_t w = 1; w <= 7; ++w)
    for (uint32_t h = 1; h <= 6; ++h)
      for (int dir = 0; dir < 2; ++dir)
        for (uint32_t c = 0; c <= w * h + 1; ++c) {
          p.slice_group_change_direction_flag = dir;
          const std::vector<int> m = map_of(pic(w, h), p, c);
          EXPECT_EQ(uint32_t(std::count(m.begin(), m.end(), 0)), std::min(c, w * h)) << w << "x" << h << " c " << c;
        }
}

TEST(AvcSliceGroups, Type4RasterAndType5Wipe) {
  avc::Pps p = groups(2, 4);
  p.slice_group_change_rate = 3;
  EXPECT_EQ(map_of(pic(4, 2), p, 1), (std::vector<int>{0, 0, 0, 1, 1, 1, 1, 1}));
  p.slice_group_change_direction_flag = true;  // upper-left group = size - units0 = 5 units of group 1
  EXPECT_EQ(map_of(pic(4, 2), p, 1), (std::vector<int>{1, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(map_of(pic(4, 2), p, 3), (std::vector<int>(8, 0)));  // Min(9, 8)
  p.slice_group_map_type = 5;
  p.slice_group_change_rate = 1;
  p.slice_group_change_direction_flag = false;
  // Column by column: the first 4 units (columns 0 and 1) are group 0.
  EXPECT_EQ(map_of(pic(3, 2), p, 4), (std::vector<int>{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(map_of(pic(3, 2), p, 3), (std::vector<int>{0, 0, 1, 0, 1, 1}));
  p.slice_group_change_direction_flag = true;  // upper-left = 6 - 4 = 2 units of group 1
  EXPECT_EQ(map_of(pic(3, 2), p, 4), (std::vector<int>{1, 0, 0, 1, 0, 0}));
}

TEST(AvcSliceGroups, Type6ExplicitAndNextMbAddress) {
  avc::Pps p = groups(3, 6);
  p.slice_group_id = {2, 0, 1, 1, 0, 2};
  p.pic_size_in_map_units = 6;
  EXPECT_EQ(map_of(pic(3, 2), p), (std::vector<int>{2, 0, 1, 1, 0, 2}));
  avc::Error err;
  EXPECT_FALSE(avc::check_slice_group_params(pic(3, 3), p, err));
  EXPECT_NE(err.message.find("pic_size_in_map_units_minus1 5"), std::string::npos) << err.describe();
  // NextMbAddress (8.2.2.8) on the checkerboard of type 1.
  avc::Pps d;
  d.num_slice_groups = 2;
  d.slice_group_map_type = 1;
  const avc::Sps s = pic(4, 3);
  std::vector<uint8_t> m(12);
  avc::build_slice_group_map(s, d, 0, m.data());
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 0), 2u);
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 2), 5u);
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 1), 3u);
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 3), 4u);
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 10), 12u);
  EXPECT_EQ(avc::next_mb_address(m.data(), 12, 11), 12u);
  avc::SliceGroupMap g;
  EXPECT_TRUE(g.update(s, d, 0, 1));
  EXPECT_FALSE(g.update(s, d, 0, 1));
  EXPECT_FALSE(g.update(s, d, 7, 1));  // type 1 does not use the cycle
  EXPECT_TRUE(g.update(s, d, 0, 2));   // a parameter set changed
  EXPECT_EQ(g.size(), 12u);
  EXPECT_EQ(g.group_size(0), 6u);
  EXPECT_EQ(g.group_size(1), 6u);
  for (uint32_t n = 0; n < 12; ++n) EXPECT_EQ(g.next(n), avc::next_mb_address(m.data(), 12, n)) << n;
  // One slice group: NextMbAddress is n + 1.
  avc::Pps one;
  g.update(s, one, 0, 3);
  for (uint32_t n = 0; n < 12; ++n) EXPECT_EQ(g.next(n), n + 1);
}

TEST(AvcSliceGroups, ChangeCycleBits) {
  // Ceil(Log2(PicSizeInMapUnits / SliceGroupChangeRate + 1)), exact division.
  EXPECT_EQ(avc::slice_group_change_cycle_bits(99, 1), 7);   // log2(100)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(99, 2), 6);   // log2(50.5)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(99, 33), 2);  // log2(4)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(99, 50), 2);  // log2(2.98)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(99, 99), 1);  // log2(2)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(96, 32), 2);  // log2(4)
  EXPECT_EQ(avc::slice_group_change_cycle_bits(1, 1), 1);
}

// Every map type through the parser: PPS fields and slice_group_change_cycle in the slice header.
TEST(AvcSliceGroups, ThroughTheParser) {
  SpsOpts so;  // 11x9
  for (uint32_t type = 0; type <= 6; ++type) {
    PpsOpts po;
    po.groups = type >= 3 && type <= 5 ? 2 : 3;
    po.map_type = type;
    for (int i = 0; i < 99; ++i) po.ids.push_back(uint8_t(i % 3));
    SliceOpts o;
    o.cycle = 5;
    const int bits = type >= 3 && type <= 5 ? avc::slice_group_change_cycle_bits(99, po.rate) : 0;
    Stream st;
    append_nal(st.bytes, 0x67, sps_rbsp(so));
    append_nal(st.bytes, 0x68, pps_rbsp(po));
    uint64_t data = 0;
    append_nal(st.bytes, 0x65, slice_rbsp(o, true, 3, so, po, &data, bits));
    ASSERT_TRUE(st.split());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(st.parse_next()) << "type " << type << ": " << st.err.describe();
    const avc::SliceHeader& sh = st.hp.slice();
    EXPECT_EQ(sh.data_bit, data) << type;
    EXPECT_EQ(sh.num_slice_groups, po.groups);
    EXPECT_EQ(sh.pps->slice_group_map_type, type);
    if (bits) {
      EXPECT_EQ(sh.slice_group_change_cycle, 5u);
      EXPECT_EQ(sh.slice_group_change_cycle_bits, 4);  // 99 / 7 + 1 = 15.1
    }
    if (type == 0) {
      EXPECT_EQ(sh.pps->run_length[2], 3u);
    }
    if (type == 2) {
      EXPECT_EQ(sh.pps->bottom_right[1], 5u);
    }
    if (type == 6) {
      EXPECT_EQ(sh.pps->slice_group_id[4], 1);
    }
    avc::SliceGroupMap g;
    g.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, st.hp.params().generation());
    if (type >= 3 && type <= 5) {  // 5 * 7
      EXPECT_EQ(g.group_size(0), 35u) << type;
    }
  }
  // slice_group_change_cycle past Ceil(99 / 10) = 10 (4 bits: 99 / 10 + 1 = 10.9): malformed.
  PpsOpts po;
  po.groups = 2;
  po.map_type = 4;
  po.rate = 10;
  SliceOpts o;
  o.cycle = 10;
  EXPECT_TRUE(parse_all(so, po, o, 0x65, 4).ok());
  o.cycle = 11;
  expect_refused(parse_all(so, po, o, 0x65, 4), avc::Status::kMalformed, 2, "slice_group_change_cycle 11");
  // A type 2 box outside the 11x9 picture is refused at the slice (the PPS alone cannot know).
  po.map_type = 2;
  po.tl = {12, 3};
  po.br = {150, 5};
  expect_refused(parse_all(so, po, SliceOpts{}), avc::Status::kMalformed, 2, "does not fit");
}

// ------------------------------------------------------------------ conformance streams

std::string shared_dir() {
  const char* e = std::getenv("GPUEC_SHARED_DIR");
  return e ? e : "../shared";
}

struct ManifestRow {
  std::string file;
  uint32_t width = 0, height = 0, frames = 0, slices = 0;
};

// MANIFEST.tsv: columns found by name (file, width, height, frames, slices).
bool read_manifest(const std::string& dir, std::vector<ManifestRow>& rows) {
  std::ifstream f(dir + "/MANIFEST.tsv");
  if (!f) return false;
  std::string line;
  std::map<std::string, size_t> col;
  auto split = [](const std::string& l) {
    std::vector<std::string> v;
    size_t a = 0;
    for (;;) {
      const size_t t = l.find('\t', a);
      v.push_back(l.substr(a, t == std::string::npos ? std::string::npos : t - a));
      if (t == std::string::npos) return v;
      a = t + 1;
    }
  };
  if (!std::getline(f, line)) return false;
  const std::vector<std::string> head = split(line);
  for (size_t i = 0; i < head.size(); ++i) col[head[i]] = i;
  for (const char* c : {"file", "width", "height", "frames", "slices"})
    if (!col.count(c)) return false;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> v = split(line);
    ManifestRow r;
    r.file = v.at(col["file"]);
    r.width = uint32_t(std::stoul(v.at(col["width"])));
    r.height = uint32_t(std::stoul(v.at(col["height"])));
    r.frames = uint32_t(std::stoul(v.at(col["frames"])));
    r.slices = uint32_t(std::stoul(v.at(col["slices"])));
    rows.push_back(r);
  }
  return true;
}

Bytes read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct StreamFacts {
  uint32_t slices = 0, pictures = 0, redundant = 0, aso = 0, nonstandard = 0;
  std::map<int, int> fmo_types;
};

// Splits and parses a whole stream, checking the invariants every stream must satisfy; facts about it out.
void check_stream(const std::string& name, const Bytes& data, const ManifestRow* row, StreamFacts& facts) {
  std::vector<avc::NalUnit> nals;
  avc::Error err;
  ASSERT_TRUE(avc::split_annexb(data.data(), data.size(), nals, err)) << name << ": " << err.describe();
  // The ranges cover the stream: rebuilt byte for byte.
  ASSERT_EQ(rebuild(data, nals), std::string(data.begin(), data.end())) << name;
  avc::HeaderParser hp;
  avc::SliceGroupMap sgm;
  Bytes rebuilt, esc;
  avc::SliceHeader prev;
  bool have_prev = false;
  int64_t last_first[avc::kMaxSliceGroups];
  for (size_t i = 0; i < nals.size(); ++i) {
    const avc::NalUnit& n = nals[i];
    ASSERT_TRUE(hp.parse(data.data(), n, int64_t(i), err)) << name << ": " << err.describe();
    const avc::Rbsp& r = hp.rbsp();
    // Escaping: the standard escaping of the RBSP reproduces the NAL unit byte for byte.
    esc.clear();
    avc::escape_rbsp(r.bytes.data(), r.bytes.size(), esc);
    const Bytes payload(data.begin() + int64_t(n.header) + r.header_bytes, data.begin() + int64_t(n.end));
    if (esc != payload) ++facts.nonstandard;
    EXPECT_EQ(esc == payload, r.standard_escaping) << name << " NAL " << i;
    rebuilt.insert(rebuilt.end(), data.begin() + int64_t(n.begin), data.begin() + int64_t(n.header) + r.header_bytes);
    rebuilt.insert(rebuilt.end(), esc.begin(), esc.end());
    rebuilt.insert(rebuilt.end(), data.begin() + int64_t(n.end), data.begin() + int64_t(n.range_end));
    if (!n.is_slice()) continue;
    const avc::SliceHeader& sh = hp.slice();
    ++facts.slices;
    // The header ends inside the NAL unit, before the stop bit.
    EXPECT_LT(sh.data_bit, sh.stop_bit) << name << " NAL " << i;
    EXPECT_LT(sh.stop_bit, 8 * r.bytes.size()) << name << " NAL " << i;
    if (row) {
      EXPECT_EQ(sh.sps->crop_width(), row->width) << name << " NAL " << i;
      EXPECT_EQ(sh.sps->crop_height(), row->height) << name << " NAL " << i;
    }
    sgm.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation());
    ASSERT_LT(sh.first_mb_in_slice, sgm.size());
    const int g = sgm.group(sh.first_mb_in_slice);
    if (sh.num_slice_groups > 1) ++facts.fmo_types[sh.pps->slice_group_map_type];
    if (sh.redundant()) {
      ++facts.redundant;
      continue;
    }
    if (!have_prev || avc::first_slice_of_new_picture(prev, sh)) {
      ++facts.pictures;
      for (int64_t& f : last_first) f = -1;
    }
    if (int64_t(sh.first_mb_in_slice) <= last_first[g]) ++facts.aso;
    last_first[g] = std::max<int64_t>(last_first[g], sh.first_mb_in_slice);
    prev = sh;
    have_prev = true;
  }
  if (facts.nonstandard == 0) {
    EXPECT_EQ(rebuilt, data) << name;
  }
}

TEST(AvcConformance, EveryStreamParses) {
  const std::string dir = shared_dir() + "/conformance";
  std::vector<ManifestRow> rows;
  if (!read_manifest(dir, rows)) GTEST_SKIP() << "no conformance streams in " << dir << " (GPUEC_SHARED_DIR)";
  ASSERT_FALSE(rows.empty());
  std::string fmo, aso, redundant, several, nonstandard;
  for (const ManifestRow& row : rows) {
    SCOPED_TRACE(row.file);
    const Bytes data = read_all(dir + "/" + row.file);
    ASSERT_FALSE(data.empty()) << row.file;
    StreamFacts f;
    check_stream(row.file, data, &row, f);
    // MANIFEST "slices" counts the slice NAL units (types 1 and 5) and "frames" the decoded frames, which
    // here are the primary coded pictures (7.4.1.2.4).
    EXPECT_EQ(f.slices, row.slices) << row.file;
    EXPECT_EQ(f.pictures, row.frames) << row.file;
    if (!f.fmo_types.empty()) fmo += " " + row.file;
    if (f.aso) aso += " " + row.file;
    if (f.redundant) redundant += " " + row.file;
    if (f.nonstandard) nonstandard += " " + row.file;
  }
  // What this suite holds (checked, so a changed suite is noticed): no stream uses slice groups, arbitrary
  // slice order or redundant slices (SVA_FM1_E has one slice group: its PPS codes num_slice_groups_minus1
  // 0), and every NAL unit is escaped exactly as 7.4.1 escapes its RBSP.
  std::printf("conformance: FMO:%s; ASO:%s; redundant slices:%s; non-standard escaping:%s\n",
              fmo.empty() ? " none" : fmo.c_str(), aso.empty() ? " none" : aso.c_str(),
              redundant.empty() ? " none" : redundant.c_str(), nonstandard.empty() ? " none" : nonstandard.c_str());
  EXPECT_EQ(nonstandard, "");
  EXPECT_EQ(fmo, "");
  EXPECT_EQ(aso, "");
  EXPECT_EQ(redundant, "");
}

// Several parameter sets: MPS_MW_A has two PPS in use.
TEST(AvcConformance, SeveralParameterSets) {
  const std::string path = shared_dir() + "/conformance/MPS_MW_A.264";
  const Bytes data = read_all(path);
  if (data.empty()) GTEST_SKIP() << "no " << path;
  std::vector<avc::NalUnit> nals;
  avc::Error err;
  ASSERT_TRUE(avc::split_annexb(data.data(), data.size(), nals, err));
  avc::HeaderParser hp;
  std::map<int, int> pps_used;
  for (size_t i = 0; i < nals.size(); ++i) {
    ASSERT_TRUE(hp.parse(data.data(), nals[i], int64_t(i), err)) << err.describe();
    if (nals[i].is_slice()) ++pps_used[hp.slice().pic_parameter_set_id];
  }
  EXPECT_EQ(pps_used.size(), 2u);
  EXPECT_NE(hp.params().pps(0)->num_ref_idx_l0_default_active, hp.params().pps(1)->num_ref_idx_l0_default_active);
}

// Truncated and bit-flipped copies never crash and errors carry a NAL index. Meant to run under
// -fsanitize=address,undefined; GPUEC_FUZZ_SECONDS=N runs it for N seconds instead of a fixed count.
TEST(AvcRobustness, MutatedStreams) {
  const std::string dir = shared_dir() + "/conformance";
  const char* names[] = {"SVA_BA2_D.264", "SVA_Base_B.264", "MPS_MW_A.264", "BA1_Sony_D.jsv", "BASQP1_Sony_C.jsv",
                         "CI1_FT_B.264"};
  std::vector<Bytes> seeds;
  for (const char* n : names) {
    Bytes d = read_all(dir + "/" + n);
    if (!d.empty()) seeds.push_back(std::move(d));
  }
  // Hand-made streams with every slice group type too.
  {
    SpsOpts so;
    for (uint32_t type = 0; type <= 6; ++type) {
      PpsOpts po;
      po.groups = type >= 3 && type <= 5 ? 2 : 3;
      po.map_type = type;
      for (int i = 0; i < 99; ++i) po.ids.push_back(uint8_t(i % 3));
      Bytes s;
      append_nal(s, 0x67, sps_rbsp(so));
      append_nal(s, 0x68, pps_rbsp(po));
      uint64_t data = 0;
      SliceOpts o;
      append_nal(s, 0x65, slice_rbsp(o, true, 3, so, po, &data,
                                     type >= 3 && type <= 5 ? avc::slice_group_change_cycle_bits(99, po.rate) : 0));
      seeds.push_back(s);
    }
  }
  std::mt19937 rng(gpuec_test::test_seed("avc_headers_test"));
  const gpuec_test::FuzzBudget budget(4000);
  std::vector<avc::NalUnit> nals;
  avc::SliceGroupMap sgm;
  Bytes m;
  uint64_t runs = 0, failures = 0, slices = 0;
  for (int iter = 0; budget.more(iter); ++iter) {
    const Bytes& src = seeds[size_t(iter) % seeds.size()];
    // Only the first ~12 KB: mutations near the parameter sets matter most, and it keeps runs short.
    m.assign(src.begin(), src.begin() + int64_t(std::min<size_t>(src.size(), 12000)));
    const int kind = int(rng() % 4);
    if (kind == 0) {
      m.resize(rng() % (m.size() + 1));  // truncated
    } else {
      const int flips = 1 + int(rng() % (kind == 3 ? 40 : 4));
      const size_t span = kind == 1 ? std::min<size_t>(m.size(), 200) : m.size();  // 1: near the start
      for (int k = 0; k < flips && span; ++k) m[rng() % span] ^= uint8_t(1u << (rng() % 8));
      if (kind == 3 && rng() % 2) m.resize(rng() % (m.size() + 1));
    }
    ++runs;
    avc::Error err;
    avc::HeaderParser hp;
    if (!avc::split_annexb(m.data(), m.size(), nals, err)) {
      ++failures;
      EXPECT_GE(err.nal_index, 0);
      EXPECT_FALSE(err.message.empty());
    }
    for (size_t i = 0; i < nals.size(); ++i) {
      if (!hp.parse(m.data(), nals[i], int64_t(i), err)) {
        ++failures;
        EXPECT_EQ(err.nal_index, int64_t(i));
        EXPECT_FALSE(err.message.empty());
        continue;
      }
      if (nals[i].is_slice()) {
        const avc::SliceHeader& sh = hp.slice();
        ++slices;
        ASSERT_LT(sh.data_bit, sh.stop_bit);
        sgm.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation());
        ASSERT_LT(sh.first_mb_in_slice, sgm.size());
        uint32_t n = sh.first_mb_in_slice, steps = 0;
        while (n < sgm.size() && steps++ < 4) n = sgm.next(n);
      }
    }
  }
  std::printf("robustness: %llu mutated streams, %llu errors reported, %llu slice headers parsed\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(failures),
              static_cast<unsigned long long>(slices));
}

}  // namespace
