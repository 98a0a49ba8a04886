// The .gvle container (vle/format.h): round trips (Canterbury corpus, edge sizes), the byte layout,
// and rejection of truncated, bit-flipped, foreign and inconsistent files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "vle/encoders.h"
#include "vle/format.h"

namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint64_t C = vle::kChunkSymbols;

std::string shared_dir() {
  const char* d = std::getenv("GPUEC_SHARED_DIR");
  return d ? d : "";
}

// Reads a file; NAME.xz through `xz -dc` into memory.
bool load(const std::string& path, Bytes* out) {
  out->clear();
  FILE* f = nullptr;
  const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
  if (xz) f = popen(("xz -dc -- '" + path + "'").c_str(), "r");
  else f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[1 << 16];
  size_t r;
  while ((r = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + r);
  return xz ? pclose(f) == 0 : std::fclose(f) == 0;
}

uint64_t le(const Bytes& f, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | f[at + i];
  return v;
}

Bytes round_trip(const Bytes& in, const std::string& what, unsigned threads = 0) {
  const Bytes file = vle::compress_ref(in.data(), in.size());
  EXPECT_LE(file.size(), vle::compress_bound(in.size())) << what;
  Bytes out = {1, 2, 3};
  vle::DecompressOptions opt;
  opt.threads = threads;
  const vle::Status s = vle::decompress(file.data(), file.size(), &out, opt);
  EXPECT_TRUE(s.ok()) << what << ": " << s.message;
  EXPECT_TRUE(out == in) << what;
  return file;
}

Bytes text(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string words[] = {"the ", "of ", "and ", "gpu ", "entropy ", "coding ", "chunk ", "\n", "Huffman, "};
  Bytes v;
  while (v.size() < n) {
    const std::string& w = words[rng() % 9];
    v.insert(v.end(), w.begin(), w.end());
    if (rng() % 50 == 0) v.push_back(static_cast<uint8_t>(rng()));
  }
  v.resize(n);
  return v;
}

TEST(Format, CanterburyCorpusRoundTrips) {
  const std::string dir = shared_dir() + "/corpus/canterbury";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  if (shared_dir().empty() || !manifest) GTEST_SKIP() << "skipped: no corpus at " << dir;
  std::string line;
  std::getline(manifest, line);  // header
  int files = 0;
  uint64_t total_in = 0, total_out = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string name, bytes;
    std::getline(fields, name, '\t');
    std::getline(fields, bytes, '\t');
    Bytes in;
    ASSERT_TRUE(load(dir + "/" + name, &in)) << name;
    ASSERT_EQ(in.size(), std::stoull(bytes)) << name;
    const Bytes file = round_trip(in, name);
    vle::HeaderInfo h;
    ASSERT_TRUE(vle::read_header(file.data(), file.size(), &h).ok());
    EXPECT_LT(file.size(), in.size()) << name << " did not shrink";
    EXPECT_EQ(h.chunk_count, vle::chunk_count(in.size()));
    total_in += in.size();
    total_out += file.size();
    ++files;
  }
  EXPECT_EQ(files, 14);
  std::printf("canterbury: %d files, %llu -> %llu bytes\n", files, static_cast<unsigned long long>(total_in),
              static_cast<unsigned long long>(total_out));
}

TEST(Format, EdgeSizesRoundTrip) {
  round_trip({}, "empty");
  round_trip({0}, "one zero byte");
  round_trip({0xFF}, "one 0xFF byte");
  round_trip(Bytes(100000, 'a'), "one-symbol alphabet");
  Bytes all(3 * C + 17);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  round_trip(all, "all 256 symbols");
  for (size_t n : {size_t{1}, size_t{2}, C - 1, C, C + 1, 2 * C, 10 * C + 123})
    for (unsigned threads : {1u, 2u, 0u}) round_trip(text(n, static_cast<uint32_t>(n)), "n " + std::to_string(n), threads);
}

TEST(Format, SixteenBitLimitRoundTrips) {
  // Fibonacci counts (symbol s occurs F(s+1) times): unlimited Huffman would need 29 bits.
  Bytes in;
  uint64_t a = 1, b = 1;
  for (int s = 0; s < 30; ++s) {
    in.insert(in.end(), a, static_cast<uint8_t>(s * 7 + 1));
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  std::shuffle(in.begin(), in.end(), std::mt19937(1));
  const Bytes file = round_trip(in, "fibonacci");
  vle::HeaderInfo h;
  ASSERT_TRUE(vle::read_header(file.data(), file.size(), &h).ok());
  EXPECT_EQ(*std::max_element(h.len, h.len + 256), 16);
}

TEST(Format, ByteLayout) {
  const std::string s = "abracadabra";
  const Bytes in(s.begin(), s.end());
  const Bytes f = vle::compress_ref(in.data(), in.size());
  ASSERT_GE(f.size(), vle::kFixedHeaderBytes);
  EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "GVLE");
  EXPECT_EQ(f[4], 1);
  EXPECT_EQ(f[5], 0);
  EXPECT_EQ(le(f, 6, 2), 5u);    // a b c d r
  EXPECT_EQ(le(f, 8, 8), 11u);   // original size
  EXPECT_EQ(le(f, 32, 8), 1u);   // chunk count
  EXPECT_EQ(le(f, 40, 4), C);
  EXPECT_EQ(le(f, 44, 4), 0u);
  // a: 5, b: 2, r: 2, c: 1, d: 1 -> lengths a 1, then (c, d) 3 and (b, r) 3 (ties by symbol) = 23 bits.
  EXPECT_EQ(le(f, 24, 8), 23u);
  // Bitmap: a = 0x61, b, c, d in byte 12; r = 0x72 in byte 14.
  EXPECT_EQ(f[56 + 12], 0x1E);
  EXPECT_EQ(f[56 + 14], 0x04);
  const size_t lens = 56 + 32;
  EXPECT_EQ(f[lens] & 15, 0);  // a: length 1
  const uint64_t hbytes = vle::header_bytes(5, 1);
  EXPECT_EQ(hbytes, 56u + 32 + 3 + 4 + 16);
  EXPECT_EQ(le(f, lens + 3, 4), 23u);  // the one chunk's bit length
  EXPECT_EQ(f.size(), hbytes + 4);     // 23 bits padded to one 32-bit word
  // Canonical: a = 0; b, c, d, r = 100, 101, 110, 111. "abra..." = 0 100 111 0 ...
  EXPECT_EQ(f[lens], 0x20);
  EXPECT_EQ(f[lens + 1], 0x22);
  EXPECT_EQ(f[lens + 2], 0x02);
  EXPECT_EQ(f[hbytes], 0b01001110);
  const Bytes empty = vle::compress_ref(nullptr, 0);
  EXPECT_EQ(empty.size(), 104u);
}

// ---- rejection ----

vle::Status try_decompress(const Bytes& f, Bytes* out, bool verify = true) {
  vle::DecompressOptions opt;
  opt.verify_checksums = verify;
  opt.threads = 2;
  *out = {9, 9};
  return vle::decompress(f.data(), f.size(), out, opt);
}

void expect_rejected(const Bytes& f, const std::string& what, vle::FormatStatus want = vle::FormatStatus::kOk,
                     bool verify = true) {
  Bytes out;
  const vle::Status s = try_decompress(f, &out, verify);
  EXPECT_FALSE(s.ok()) << what << ": accepted";
  EXPECT_FALSE(s.message.empty()) << what;
  EXPECT_TRUE(out.empty()) << what << ": output left behind on failure";
  if (want != vle::FormatStatus::kOk) {
    EXPECT_EQ(s.code, want) << what << ": " << s.message;
  }
}

TEST(Format, TruncationAtEveryHeaderBoundaryAndEveryLength) {
  const Bytes in = text(3 * C + 1000, 3);
  const Bytes f = vle::compress_ref(in.data(), in.size());
  vle::HeaderInfo h;
  ASSERT_TRUE(vle::read_header(f.data(), f.size(), &h).ok());
  const size_t tables = vle::kFixedHeaderBytes + 32 + (h.used_symbols + 1) / 2;
  const std::vector<size_t> bounds = {0, 1, 3, 4, 5, 6, 8, 16, 24, 32, 40, 44, 48, 55, 56, 88, tables,
                                      tables + 4 * h.chunk_count, h.header_bytes - 8, h.header_bytes - 1,
                                      h.header_bytes, h.header_bytes + 1, f.size() - 4, f.size() - 1};
  for (size_t b : bounds) {
    for (size_t cut : {b - 1, b, b + 1}) {
      if (cut >= f.size()) continue;
      const Bytes t(f.begin(), f.begin() + static_cast<long>(cut));
      const vle::FormatStatus want = cut == 0 ? vle::FormatStatus::kNotGvle : vle::FormatStatus::kTruncated;
      expect_rejected(t, "truncated to " + std::to_string(cut), want);
    }
  }
  // A small file cut at every length.
  const Bytes small_in = text(700, 4);
  const Bytes small = vle::compress_ref(small_in.data(), small_in.size());
  for (size_t cut = 0; cut < small.size(); ++cut)
    expect_rejected(Bytes(small.begin(), small.begin() + static_cast<long>(cut)), "cut " + std::to_string(cut),
                    cut == 0 ? vle::FormatStatus::kNotGvle : vle::FormatStatus::kTruncated);
}

TEST(Format, EveryBitFlipIsRejected) {
  const Bytes in = text(900, 5);
  const Bytes f = vle::compress_ref(in.data(), in.size());
  vle::HeaderInfo h;
  ASSERT_TRUE(vle::read_header(f.data(), f.size(), &h).ok());
  for (size_t i = 0; i < f.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes g = f;
      g[i] ^= static_cast<uint8_t>(1u << bit);
      const std::string what = "byte " + std::to_string(i) + " bit " + std::to_string(bit);
      vle::FormatStatus want;
      if (i < 4) want = vle::FormatStatus::kNotGvle;
      else if (i == 4) want = vle::FormatStatus::kUnsupportedVersion;
      else if (i < h.header_bytes) want = vle::FormatStatus::kHeaderCorrupt;
      else want = vle::FormatStatus::kPayloadCorrupt;
      expect_rejected(g, what, want);
      // Without the header and payload hashes the parser, decoder and content hash still refuse
      // (or, for a flip that leaves the output intact, succeed with the right output).
      Bytes out;
      const vle::Status s = try_decompress(g, &out, false);
      if (s.ok()) {
        EXPECT_TRUE(out == in) << what << ": wrong output claimed valid";
      } else {
        EXPECT_TRUE(out.empty()) << what;
      }
    }
  }
}

TEST(Format, ForeignVersionTrailingAndInconsistentFiles) {
  Bytes out;
  const std::string foreign = "\x1f\x8b\x08 this is gzip";
  expect_rejected(Bytes(foreign.begin(), foreign.end()), "gzip", vle::FormatStatus::kNotGvle);
  expect_rejected({'G', 'V', 'L', 'X', 1}, "near magic", vle::FormatStatus::kNotGvle);
  expect_rejected({'G', 'V'}, "magic prefix", vle::FormatStatus::kTruncated);
  const Bytes in = text(5000, 6);
  Bytes f = vle::compress_ref(in.data(), in.size());
  Bytes v2 = f;
  v2[4] = 2;
  expect_rejected(v2, "version 2", vle::FormatStatus::kUnsupportedVersion);
  Bytes trailing = f;
  trailing.push_back(0);
  expect_rejected(trailing, "trailing byte", vle::FormatStatus::kTrailingData);
  Bytes doubled = f;
  doubled.insert(doubled.end(), f.begin(), f.end());
  expect_rejected(doubled, "two files", vle::FormatStatus::kTrailingData);
  // Inconsistent fields behind a hash that was not checked: each is still refused.
  for (size_t at : {size_t{5}, size_t{6}, size_t{8}, size_t{24}, size_t{32}, size_t{40}, size_t{44}}) {
    Bytes g = f;
    g[at] ^= 0x40;
    expect_rejected(g, "field at " + std::to_string(at) + " unverified", vle::FormatStatus::kOk, false);
  }
}

TEST(Format, HugeClaimedSizesAreRefusedWithoutAllocating) {
  const Bytes in = text(100, 7);
  Bytes f = vle::compress_ref(in.data(), in.size());
  for (int byte = 8; byte < 16; ++byte) {  // original_size, unverified: up to 2^64 - 1
    Bytes g = f;
    g[byte] = 0xFF;
    expect_rejected(g, "size byte " + std::to_string(byte), vle::FormatStatus::kOk, false);
  }
}

// ---- the pluggable encoder and the backends ----

uint64_t short_encoder(const uint8_t* in, uint64_t n, const vle::CodeTable& t, uint8_t* out, uint64_t* chunk_bits) {
  const uint64_t bits = vle::encode_ref(in, n, t, out, chunk_bits);
  return bits - 1;
}
uint64_t failing_encoder(const uint8_t*, uint64_t, const vle::CodeTable&, uint8_t*, uint64_t*) { return UINT64_MAX; }
uint64_t bad_index_encoder(const uint8_t* in, uint64_t n, const vle::CodeTable& t, uint8_t* out, uint64_t* cb) {
  const uint64_t bits = vle::encode_ref(in, n, t, out, cb);
  if (n > C) cb[1] = bits + 8;
  return bits;
}

TEST(Format, PluggableEncoder) {
  const Bytes in = text(2 * C + 5, 8);
  Bytes f;
  EXPECT_EQ(vle::compress(in.data(), in.size(), static_cast<vle::EncodeFn>(nullptr), &f).code,
            vle::FormatStatus::kNoEncoder);
  EXPECT_EQ(vle::compress(in.data(), in.size(), short_encoder, &f).code, vle::FormatStatus::kEncodeFailed);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(vle::compress(in.data(), in.size(), failing_encoder, &f).code, vle::FormatStatus::kEncodeFailed);
  EXPECT_EQ(vle::compress(in.data(), in.size(), bad_index_encoder, &f).code, vle::FormatStatus::kEncodeFailed);
  const vle::Status s = vle::compress(in.data(), in.size(), vle::encode_ref, &f);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(f, vle::compress_ref(in.data(), in.size()));
}

// vle/encoders.h on this machine: whatever the build and the device, cpu and auto give the CPU file; cuda
// gives it too, or says why not (no CUDA encoder in the build, or the CUDA error).
TEST(Format, Backends) {
  std::string why;
  const bool device = gpu::device_count(&why) > 0;
  const vle::EncodeFn cuda = vle::cuda_encoder();
  EXPECT_EQ(cuda != nullptr, gpu::built_with_cuda());
  EXPECT_EQ(vle::encoder_for(gpu::Backend::kOff), nullptr);
  EXPECT_EQ(vle::encoder_for(gpu::Backend::kCpu), &vle::encode_ref);
  EXPECT_EQ(vle::encoder_for(gpu::Backend::kCuda), cuda);
  EXPECT_EQ(vle::encoder_for(gpu::Backend::kAuto), cuda && device ? cuda : &vle::encode_ref) << why;

  const Bytes in = text(2 * C + 5, 8);
  const Bytes want = vle::compress_ref(in.data(), in.size());
  Bytes f;
  std::string note = "stale";
  for (gpu::Backend b : {gpu::Backend::kCpu, gpu::Backend::kAuto}) {
    const vle::Status s = vle::compress(in.data(), in.size(), b, &f, &note);
    ASSERT_TRUE(s.ok()) << gpu::backend_name(b) << ": " << s.message;
    EXPECT_EQ(f, want) << gpu::backend_name(b);
    EXPECT_EQ(note, "") << gpu::backend_name(b);
  }
  const vle::Status s = vle::compress(in.data(), in.size(), gpu::Backend::kCuda, &f);
  if (!cuda) {
    EXPECT_EQ(s.code, vle::FormatStatus::kNoEncoder);
    EXPECT_EQ(s.message, "not built with the CUDA encoder");
  } else if (!device) {
    EXPECT_EQ(s.code, vle::FormatStatus::kEncodeFailed);
    EXPECT_EQ(s.message, "the CUDA encoder: " + why);
  } else {
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(f, want);
    EXPECT_EQ(vle::cuda_encoder_error(), "");
  }
}

}  // namespace
