// Compressed-domain re-entropy (avc/reentropy.h) on the JVT conformance streams: parsing every slice down
// to its records and skeleton and coding the residual again with the entropy stage gives the input back
// byte for byte (GPUEC_SHARED_DIR/conformance, skipped when absent).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "avc/reentropy.h"

namespace {

std::vector<std::string> conformance_streams(std::string* dir_out) {
  std::vector<std::string> names;
  const char* shared = std::getenv("GPUEC_SHARED_DIR");
  if (!shared) return names;
  const std::string dir = std::string(shared) + "/conformance";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line))
    if (!line.empty()) names.push_back(line.substr(0, line.find('\t')));
  *dir_out = dir;
  return names;
}

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

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
