// The re-entropy's backends (avc/recoder.h: slices placed in bands of a tall frame, coded by cavlc's frame
// coder) against the slice-by-slice oracle (slice_oracle.h: cavlc::encode_slice_ref per slice):
//   - synthetic slices of every layout: raster slices, arbitrary slice order, slice groups (random maps,
//     so ranges interleave), redundant slices over their primary picture, incomplete pictures, picture
//     size changes in a batch, batches of one macroblock to many pictures;
//   - the JVT conformance streams (output == input) and edited levels (output == the oracle's);
//   - mutated conformance streams: whatever the parser accepts is coded alike by both.
// Built twice: with the frame coder's CPU path (kCpu, label unit) and with the GPU (kCuda,
// GPUEC_RECODER_TEST_CUDA, labels gpu and bitexact; skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "random_mb.h"
#include "avc/annexb.h"
#include "avc/headers.h"
#include "avc/recoder.h"
#include "avc/reentropy.h"
#include "conformance_streams.h"
#include "slice_oracle.h"
#include "test_seed.h"
#ifdef GPUEC_RECODER_TEST_CUDA
#include "gpu_test.h"
#define REQUIRE_BACKEND() REQUIRE_GPU()
constexpr gpu::Backend kBackend = gpu::Backend::kCuda;
#else
#define REQUIRE_BACKEND() \
  do {                    \
  } while (0)
constexpr gpu::Backend kBackend = gpu::Backend::kCpu;
namespace gpuec_test {
inline bool under_sanitizer() { return false; }
}  // namespace gpuec_test
#endif

namespace {

using avc_test::conformance_streams;
using avc_test::read_file;

struct Slice {
  int mb_width, pic_mbs;
  avc::SliceRecords recs;
};

// A slice over the given addresses (increasing): random records, and a skeleton of random bits with each
// coded macroblock's insertion point after a random gap (the slice header, mb_type, ...), then a tail.
Slice make_slice(std::mt19937& rng, int mb_width, int pic_mbs, const std::vector<int>& addrs) {
  Slice s{mb_width, pic_mbs, {}};
  uint64_t bits = 8 + rng() % 40;  // a header
  for (int a : addrs) {
    gpuec_mb m = rng() % 7 == 0 ? cavlc_test::extreme_mb(rng, a) : cavlc_test::random_mb(rng, a, 30);
    if (m.kind == GPUEC_MB_NORMAL || m.kind == GPUEC_MB_I16x16) m.coef_order = GPUEC_COEF_SCAN;
    if (m.kind != GPUEC_MB_SKIP) {
      bits += rng() % 24;
      m.skel_bit = int64_t(bits);
    }
    s.recs.mbs.push_back(m);
  }
  bits += rng() % 12;
  s.recs.skel_bits = bits;
  s.recs.skel.resize(size_t((bits + 7) / 8) + 8);
  for (uint8_t& b : s.recs.skel) b = uint8_t(rng());
  if (bits & 7) s.recs.skel[size_t(bits / 8)] &= uint8_t(0xff00u >> (bits & 7));
  std::fill(s.recs.skel.begin() + int64_t((bits + 7) / 8), s.recs.skel.end(), uint8_t{0});
  return s;
}

// Slices of one picture: a slice group map (1 group: raster slices), each group cut into slices of
// consecutive addresses of the group; some slices dropped (incomplete picture), the order shuffled (ASO),
// and redundant slices over random ranges appended.
std::vector<Slice> make_picture(std::mt19937& rng, int w, int h) {
  const int n = w * h;
  const int groups = rng() % 3 == 0 ? 1 : 1 + int(rng() % 4);
  std::vector<int> group(size_t(n), 0);
  const int map = int(rng() % 3);
  for (int a = 0; a < n; ++a)
    group[size_t(a)] = groups == 1 ? 0 : map == 0 ? int(rng() % unsigned(groups))             // random
                                     : map == 1 ? ((a % w) + (a / w)) % groups                  // dispersed
                                                : (a / w) % groups;                              // interleaved rows
  std::vector<std::vector<int>> slices;
  for (int g = 0; g < groups; ++g) {
    std::vector<int> cur;
    const int len = 1 + int(rng() % unsigned(std::max(1, n / 2)));
    for (int a = 0; a < n; ++a) {
      if (group[size_t(a)] != g) continue;
      cur.push_back(a);
      if (int(cur.size()) == len) slices.push_back(std::move(cur)), cur.clear();
    }
    if (!cur.empty()) slices.push_back(std::move(cur));
  }
  if (rng() % 4 == 0 && slices.size() > 1) slices.erase(slices.begin() + int64_t(rng() % slices.size()));
  if (rng() % 2) std::shuffle(slices.begin(), slices.end(), rng);
  const int redundant = rng() % 3 == 0 ? 1 + int(rng() % 2) : 0;
  for (int r = 0; r < redundant; ++r) {
    const int a0 = int(rng() % unsigned(n)), a1 = a0 + int(rng() % unsigned(n - a0));
    std::vector<int> v(size_t(a1 - a0 + 1));
    std::iota(v.begin(), v.end(), a0);
    slices.push_back(std::move(v));
  }
  std::vector<Slice> out;
  for (const auto& addrs : slices) out.push_back(make_slice(rng, w, n, addrs));
  return out;
}

struct Coded {
  std::vector<std::vector<uint8_t>> rbsp;
  std::vector<uint64_t> residual;
};

constexpr int kOracle = -1;  // code_all's batch_mbs for the slice-by-slice oracle

// Codes the slices with the backend (batch_mbs kOracle: with the oracle).
::testing::AssertionResult code_all(gpu::Backend b, int batch_mbs, const std::vector<Slice>& slices, Coded* out) {
  avc::RecoderOptions opt;
  opt.backend = b;
  opt.batch_mbs = batch_mbs;
  std::string why;
  std::unique_ptr<avc::SliceRecoder> rec;
  if (batch_mbs == kOracle)
    rec.reset(new avc_test::SliceOracle);
  else
    rec = avc::SliceRecoder::create(opt, &why);
  if (!rec) return ::testing::AssertionFailure() << gpu::backend_name(b) << ": " << why;
  auto take = [&](size_t, const avc::RecodedSlice& r) {
    out->rbsp.emplace_back(r.rbsp, r.rbsp + r.bytes);
    out->residual.push_back(r.residual_bits);
    return true;
  };
  for (const Slice& s : slices)
    if (!rec->add(s.mb_width, s.pic_mbs, s.recs, take, &why)) return ::testing::AssertionFailure() << "add: " << why;
  if (!rec->flush(take, &why)) return ::testing::AssertionFailure() << "flush: " << why;
  return ::testing::AssertionSuccess();
}

TEST(AvcRecoder, EveryLayoutCodesAsTheSliceCoder) {
  REQUIRE_BACKEND();
  std::mt19937 rng(gpuec_test::test_seed("avc_recoder_test"));
  struct Size {
    int w, h;
  };
  const Size sizes[] = {{1, 1}, {1, 5}, {7, 1}, {11, 9}, {5, 3}, {22, 18}};
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(round);
    std::vector<Slice> slices;
    const int pictures = 1 + int(rng() % 6);
    Size sz = sizes[rng() % (sizeof sizes / sizeof sizes[0])];
    for (int p = 0; p < pictures; ++p) {
      if (rng() % 5 == 0) sz = sizes[rng() % (sizeof sizes / sizeof sizes[0])];  // a new SPS
      for (Slice& s : make_picture(rng, sz.w, sz.h)) slices.push_back(std::move(s));
    }
    Coded want, got, got_small;
    ASSERT_TRUE(code_all(kBackend, kOracle, slices, &want));
    ASSERT_TRUE(code_all(kBackend, 1 << 16, slices, &got));
    ASSERT_TRUE(code_all(kBackend, 1 + int(rng() % 300), slices, &got_small));
    ASSERT_EQ(want.rbsp.size(), slices.size());
    ASSERT_EQ(got.rbsp.size(), slices.size());
    ASSERT_EQ(got_small.rbsp.size(), slices.size());
    for (size_t i = 0; i < slices.size(); ++i) {
      EXPECT_TRUE(got.rbsp[i] == want.rbsp[i]) << "slice " << i;
      EXPECT_TRUE(got_small.rbsp[i] == want.rbsp[i]) << "slice " << i << " (small batches)";
      EXPECT_EQ(got.residual[i], want.residual[i]) << "slice " << i;
    }
  }
}

TEST(AvcRecoder, RefusesBadInput) {
  REQUIRE_BACKEND();
  avc::RecoderOptions opt;
  opt.backend = kBackend;
  std::string why;
  std::unique_ptr<avc::SliceRecoder> rec = avc::SliceRecoder::create(opt, &why);
  ASSERT_TRUE(rec) << why;
  std::mt19937 rng(7);
  Slice s = make_slice(rng, 4, 8, {2, 3, 5});
  const avc::SliceRecoder::Sink none = [](size_t, const avc::RecodedSlice&) { return true; };
  Slice outside = s;
  outside.recs.mbs.back().mb_addr = 8;
  EXPECT_FALSE(rec->add(4, 8, outside.recs, none, &why));
  EXPECT_FALSE(why.empty());
  Slice bad = s;
  bad.recs.mbs[0].kind = 9;
  EXPECT_FALSE(rec->add(4, 8, bad.recs, none, &why));
  EXPECT_FALSE(rec->add(4, 8, avc::SliceRecords{}, none, &why));
  EXPECT_EQ(rec->queued(), 0u);
  opt.batch_mbs = 0;
  EXPECT_FALSE(avc::SliceRecoder::create(opt, &why));
}

TEST(AvcRecoder, ConformanceStreamsComeBackByteForByte) {
  REQUIRE_BACKEND();
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  avc::RecoderOptions opt;
  opt.backend = kBackend;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in, out;
    ASSERT_TRUE(read_file(dir + "/" + name, &in));
    if (gpuec_test::under_sanitizer() && in.size() > 100000) continue;  // compute-sanitizer: the small ones
    avc::Error err;
    avc::ReentropyStats st;
    ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), out, &st, err, nullptr, opt)) << err.describe();
    EXPECT_EQ(st.recoded_differs, 0);
    EXPECT_TRUE(out == in) << "output differs from the input";
  }
}

// Flipped signs (as in reentropy_test): the frame backend writes what the slice coder writes.
TEST(AvcRecoder, EditedStreamsCodeAsTheSliceCoder) {
  REQUIRE_BACKEND();
  std::string dir;
  if (conformance_streams(&dir).empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  auto flip = [](int64_t, const avc::SliceHeader&, avc::SliceRecords& r) {
    for (gpuec_mb& m : r.mbs)
      if (m.kind == GPUEC_MB_NORMAL || m.kind == GPUEC_MB_I16x16)
        for (auto& dc : m.u.coef.chroma_dc)
          for (int16_t& v : dc) v = int16_t(-v);
  };
  for (const char* name : {"BA_MW_D.264", "CI1_FT_B.264", "MR1_BT_A.h264", "BA1_Sony_D.jsv"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in, want, got;
    if (!read_file(dir + "/" + name, &in)) continue;
    avc::Error err;
    avc::RecoderOptions opt;
    avc_test::SliceOracle oracle;
    ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), want, nullptr, err, flip, opt, &oracle)) << err.describe();
    opt.backend = kBackend;
    opt.batch_mbs = 500;
    ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), got, nullptr, err, flip, opt)) << err.describe();
    EXPECT_NE(want, in);
    EXPECT_TRUE(got == want);
  }
}

// Damaged streams: both backends accept the same ones (the parser decides) and write the same bytes.
TEST(AvcRecoder, MutatedStreamsCodeAsTheSliceCoder) {
  REQUIRE_BACKEND();
  std::vector<std::vector<uint8_t>> seeds;
  if (!avc_test::fuzz_seeds(&seeds)) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  ASSERT_FALSE(seeds.empty());
  std::mt19937 rng(gpuec_test::test_seed("avc_recoder_test"));
  std::vector<uint8_t> m, want, got;
  int parsed = 0;
  const int kRuns = gpuec_test::under_sanitizer() ? 40 : 300;
  for (int iter = 0; iter < kRuns; ++iter) {
    avc_test::mutated_stream(seeds, rng, &m);
    avc::RecoderOptions opt;
    avc::Error e1, e2;
    avc_test::SliceOracle oracle;
    const bool ok1 = avc::reentropy_stream(m.data(), m.size(), want, nullptr, e1, nullptr, opt, &oracle);
    opt.backend = kBackend;
    opt.batch_mbs = 1 + int(rng() % 2000);
    const bool ok2 = avc::reentropy_stream(m.data(), m.size(), got, nullptr, e2, nullptr, opt);
    ASSERT_EQ(ok1, ok2) << e1.describe() << " / " << e2.describe();
    EXPECT_TRUE(got == want) << "iteration " << iter;  // on failure: the NAL units before the faulty one
    parsed += ok1;
  }
  std::printf("%d of %d mutated streams parsed\n", parsed, kRuns);
}


// Arbitrary slice order at the stream level: the slices of every picture of multi-slice conformance
// streams in reverse order (ASO, allowed in the baseline profile). The parser must find the pictures by
// 7.4.1.2.4, not by first_mb_in_slice, and every backend must give the reordered stream back.
TEST(AvcRecoder, ReversedSliceOrderComesBack) {
  REQUIRE_BACKEND();
  std::string dir;
  if (conformance_streams(&dir).empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  for (const char* name : {"SVA_Base_B.264", "CI1_FT_B.264", "BA1_FT_C.264"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in;
    if (!read_file(dir + "/" + name, &in)) continue;
    std::vector<uint8_t> aso;
    avc::Error err;
    int reordered = 0;
    ASSERT_TRUE(avc_test::reverse_slices(in, &aso, &reordered, &err)) << err.describe();
    ASSERT_EQ(aso.size(), in.size());
    EXPECT_GT(reordered, 0) << "no picture with two slices";
    EXPECT_NE(aso, in);
    for (gpu::Backend b : {gpu::Backend::kCpu, kBackend}) {
      avc::RecoderOptions opt;
      opt.backend = b;
      std::vector<uint8_t> out;
      avc::ReentropyStats st;
      ASSERT_TRUE(avc::reentropy_stream(aso.data(), aso.size(), out, &st, err, nullptr, opt)) << err.describe();
      EXPECT_TRUE(out == aso) << gpu::backend_name(b);
      EXPECT_EQ(st.recoded_differs, 0) << gpu::backend_name(b);
    }
  }
}

}  // namespace
