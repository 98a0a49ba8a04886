// Compressed-domain re-entropy (avc/reentropy.h) on the JVT conformance streams: parsing every slice down
// to its records and skeleton and coding the residual again with the entropy stage gives the input back
// byte for byte (GPUEC_SHARED_DIR/conformance, skipped when absent).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "avc/reentropy.h"
#include "conformance_streams.h"
#include "fuzz_budget.h"
#include "test_seed.h"

namespace {

using avc_test::conformance_streams;
using avc_test::read_file;

TEST(AvcReentropy, ConformanceStreamsComeBackByteForByte) {
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  int64_t mbs = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in, out;
    ASSERT_TRUE(read_file(dir + "/" + name, &in));
    avc::Error err;
    avc::ReentropyStats st;
    const bool ok = avc::reentropy_stream(in.data(), in.size(), out, &st, err);
    EXPECT_TRUE(ok) << err.describe();
    if (!ok) continue;
    EXPECT_EQ(st.recoded_differs, 0);
    EXPECT_GT(st.slices, 0);
    EXPECT_EQ(out.size(), in.size());
    EXPECT_TRUE(out == in) << "output differs from the input";
    mbs += st.macroblocks;
  }
  EXPECT_GT(mbs, 0);
}

}  // namespace

namespace {

// Flips the sign of the first level of every coded luma 4x4 block of every slice: the output differs from
// the input (the comparison above is not vacuous), and parsing the output gives exactly the edited
// records (what a compressed-domain tool such as sign encryption relies on).
TEST(AvcReentropy, EditedLevelsAreWrittenAndReadBack) {
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  for (const std::string& name : {std::string("BA_MW_D.264"), std::string("SVA_FM1_E.264"),
                                  std::string("BA1_FT_C.264"), std::string("MR1_BT_A.h264")}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in, out, again;
    if (!read_file(dir + "/" + name, &in)) continue;
    std::vector<gpuec_mb> edited, reread;
    int64_t flips = 0;
    auto flip = [&](int64_t, const avc::SliceHeader&, avc::SliceRecords& r) {
      for (gpuec_mb& m : r.mbs) {
        if (m.kind == GPUEC_MB_NORMAL)
          for (int b = 0; b < 16; ++b) {
            if (!((m.cbp >> (b >> 2)) & 1)) continue;
            for (int k = 0; k < 16; ++k)
              if (m.u.coef.luma[b][k]) {
                m.u.coef.luma[b][k] = int16_t(-m.u.coef.luma[b][k]);
                ++flips;
                break;
              }
          }
        edited.push_back(m);
      }
    };
    avc::Error err;
    ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), out, nullptr, err, flip)) << err.describe();
    EXPECT_GT(flips, 0);
    EXPECT_NE(out, in);
    auto keep = [&](int64_t, const avc::SliceHeader&, avc::SliceRecords& r) {
      reread.insert(reread.end(), r.mbs.begin(), r.mbs.end());
    };
    ASSERT_TRUE(avc::reentropy_stream(out.data(), out.size(), again, nullptr, err, keep)) << err.describe();
    EXPECT_EQ(again, out);
    ASSERT_EQ(reread.size(), edited.size());
    size_t diff = 0;
    for (size_t i = 0; i < edited.size(); ++i) {
      gpuec_mb a = edited[i], b = reread[i];
      a.skel_bit = b.skel_bit = 0;  // positions move with the residual lengths
      if (std::memcmp(&a, &b, sizeof a) != 0) ++diff;
    }
    EXPECT_EQ(diff, 0u);
  }
}

}  // namespace

namespace {

// The whole parser on damaged input (truncated, bit-flipped, bytes inserted or dropped in conformance
// streams): never a crash, a hang or a sanitizer report; a failure names the NAL unit; a mutated stream
// that parses is re-coded into a canonical stream, which re-codes to itself. Meant to run under
// -fsanitize=address,undefined; GPUEC_FUZZ_SECONDS=N runs it for N seconds instead of a fixed count
// (docs/fuzzing.md).
TEST(AvcReentropy, MutatedStreamsNeverCrash) {
  std::vector<std::vector<uint8_t>> seeds;
  if (!avc_test::fuzz_seeds(&seeds)) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  ASSERT_FALSE(seeds.empty());
  std::mt19937 rng(gpuec_test::test_seed("avc_reentropy_test"));
  const gpuec_test::FuzzBudget budget(120);
  std::vector<uint8_t> m, out, again;
  uint64_t runs = 0, refused = 0, parsed = 0;
  for (int iter = 0; budget.more(iter); ++iter) {
    const std::vector<uint8_t>& src = seeds[rng() % seeds.size()];
    m.assign(src.begin(), src.begin() + int64_t(std::min<size_t>(src.size(), 4000 + rng() % 60000)));
    const int kind = int(rng() % 5);
    const int edits = 1 + int(rng() % (kind == 4 ? 30 : 3));
    for (int k = 0; k < edits && !m.empty(); ++k) {
      const size_t at = rng() % m.size();
      switch (kind) {
        case 0: m.resize(at); break;                                      // truncated
        case 1: case 4: m[at] ^= uint8_t(1u << (rng() % 8)); break;       // bit flips
        case 2: m.insert(m.begin() + int64_t(at), uint8_t(rng())); break;  // a byte inserted
        case 3: m.erase(m.begin() + int64_t(at)); break;                  // a byte dropped
      }
    }
    ++runs;
    avc::Error err;
    if (!avc::reentropy_stream(m.data(), m.size(), out, nullptr, err)) {
      ++refused;
      EXPECT_FALSE(err.message.empty());
      EXPECT_NE(err.status, avc::Status::kOk);
      continue;
    }
    ++parsed;
    avc::Error err2;
    ASSERT_TRUE(avc::reentropy_stream(out.data(), out.size(), again, nullptr, err2)) << err2.describe();
    ASSERT_TRUE(again == out) << "the canonical re-coding is not a fixed point";
  }
  std::printf("re-entropy fuzz: %llu mutated streams, %llu refused, %llu parsed and re-coded\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(refused),
              static_cast<unsigned long long>(parsed));
  EXPECT_GT(refused, 0u);
}

}  // namespace
