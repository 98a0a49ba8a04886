// The fast CPU path (canny/canny_cpu.h) against the oracle detect_edges_ref, byte for byte (edge map, the
// bytes past the width, the pairs): awkward sizes around the 32-column strips and the row bands, every
// ThresholdMode, sigmas of every radius, C_0.01 and C_0.03, 1 to 16 threads (more threads than rows and
// strips), pitches, one detector over many frames, the standard images of GPUEC_SHARED_DIR; argument
// errors. Random images print their seed; CANNY_CPU_SEED=N replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cpu.h"
#include "canny_images.h"
#include "pgm.h"

namespace {

using canny::CandidatePair;
using canny::CpuDetector;
using canny::Options;
using canny::ThresholdMode;
using canny::ThresholdPair;

constexpr uint8_t kCanary = 0x5a;
constexpr int kThreadCounts[] = {1, 2, 3, 7, 16};

uint32_t base_seed() {
  const char* s = std::getenv("CANNY_CPU_SEED");
  return s ? uint32_t(std::strtoul(s, nullptr, 0)) : 20261126u;
}

struct Plane {
  int w, h, pitch;
  std::vector<uint8_t> px;
  Plane(int w_, int h_, int pitch_) : w(w_), h(h_), pitch(pitch_), px(size_t(pitch_) * h_, kCanary) {}
};

Plane random_plane(int w, int h, int pitch, uint32_t seed) {
  std::mt19937 rng(seed);
  canny_test::Image img(w, h);
  canny_test::paint_structure(rng, img, 2, 8);
  Plane p(w, h, pitch);
  for (int y = 0; y < h; ++y) std::copy_n(&img.px[size_t(y) * w], w, &p.px[size_t(y) * pitch]);
  return p;
}

Options make_options(ThresholdMode mode, float sigma, const std::vector<CandidatePair>& cands) {
  Options o;
  o.sigma = sigma;
  o.mode = mode;
  o.candidates = cands.data();
  o.n_candidates = int(cands.size());
  o.fixed = ThresholdPair{6, 14, 1};
  return o;
}

struct Output {
  Plane edges;
  std::vector<ThresholdPair> pairs;
  Output(int w, int h) : edges(w, h, w + 5), pairs(size_t(canny::strip_count(w)), ThresholdPair{-1, -1, -1}) {}
};

Output oracle(const Plane& src, const Options& o) {
  Output out(src.w, src.h);
  std::vector<uint8_t> work(canny::workspace_bytes_ref(src.w, src.h));
  EXPECT_EQ(canny::detect_edges_ref(src.px.data(), src.w, src.h, src.pitch, o, out.edges.px.data(), out.edges.pitch,
                                    out.pairs.data(), work.data(), work.size()),
            canny::kOk);
  return out;
}

// Compares every byte of both edge planes (padding included: the canary must survive) and every pair; reports
// the first difference with its strip and that strip's pairs.
void expect_same(const Output& want, const Output& got) {
  ASSERT_EQ(want.edges.px.size(), got.edges.px.size());
  for (size_t i = 0; i < want.edges.px.size(); ++i)
    if (want.edges.px[i] != got.edges.px[i]) {
      const int x = int(i % size_t(want.edges.pitch)), y = int(i / size_t(want.edges.pitch)), s = x / canny::kStripWidth;
      const ThresholdPair pw = want.pairs[size_t(std::min(s, int(want.pairs.size()) - 1))];
      const ThresholdPair pg = got.pairs[size_t(std::min(s, int(got.pairs.size()) - 1))];
      FAIL() << "first differing edge byte at x " << x << " y " << y << " (strip " << s << "): oracle "
             << int(want.edges.px[i]) << ", fast " << int(got.edges.px[i]) << "; strip pair oracle (" << pw.low << ", "
             << pw.high << ", " << pw.found << ") fast (" << pg.low << ", " << pg.high << ", " << pg.found << ")";
    }
  for (size_t s = 0; s < want.pairs.size(); ++s) {
    EXPECT_EQ(want.pairs[s].low, got.pairs[s].low) << "strip " << s;
    EXPECT_EQ(want.pairs[s].high, got.pairs[s].high) << "strip " << s;
    EXPECT_EQ(want.pairs[s].found, got.pairs[s].found) << "strip " << s;
  }
}

Output fast(CpuDetector& d, const Plane& src) {
  Output out(src.w, src.h);
  EXPECT_EQ(d.detect(src.px.data(), src.pitch, out.edges.px.data(), out.edges.pitch, out.pairs.data()), canny::kOk);
  return out;
}

const char* mode_name(ThresholdMode m) {
  return m == ThresholdMode::kStrip ? "strip" : m == ThresholdMode::kFrame ? "frame" : "fixed";
}

// Sizes at the strip and band seams: single pixels, single rows and columns, widths around 32 and 64, tall
// and thin (bands of 8 rows and more), more threads than rows.
TEST(CannyCpu, AwkwardSizesEveryModeAndThreadCount) {
  const int sizes[][2] = {{1, 1},   {1, 23},  {23, 1},  {1, 300}, {300, 1}, {2, 2},  {31, 9},  {32, 32},
                          {33, 20}, {65, 7},  {64, 70}, {3, 211}, {97, 45}, {130, 3}, {40, 129}, {161, 33}};
  const float sigmas[] = {0.1f, 0.6f, 1.0f, 1.4f, 2.0f};
  const std::vector<CandidatePair> sets[2] = {canny_test::standard_set(1), canny_test::standard_set(3)};
  const uint32_t seed = base_seed();
  int k = 0;
  for (const auto& sz : sizes)
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame, ThresholdMode::kFixed}) {
      const float sigma = sigmas[k % 5];
      const auto& cands = sets[k % 2];
      const uint32_t s = seed + uint32_t(k++);
      SCOPED_TRACE(testing::Message() << sz[0] << "x" << sz[1] << " " << mode_name(mode) << " sigma " << sigma
                                      << " step " << (&cands == &sets[0] ? 1 : 3) << " seed " << s);
      const Options o = make_options(mode, sigma, cands);
      const Plane a = random_plane(sz[0], sz[1], sz[0] + 3, s), b = random_plane(sz[0], sz[1], sz[0], s ^ 0x9e3779b9u);
      const Output want_a = oracle(a, o), want_b = oracle(b, o);
      for (int threads : kThreadCounts) {
        SCOPED_TRACE(testing::Message() << threads << " threads");
        CpuDetector d;
        ASSERT_EQ(d.init(sz[0], sz[1], o, threads), canny::kOk);
        EXPECT_EQ(d.threads(), threads);
        expect_same(want_a, fast(d, a));  // one detector, several frames
        expect_same(want_b, fast(d, b));
        expect_same(want_a, fast(d, a));
      }
    }
}

// Every Gaussian radius (1..6) and both candidate sets on one size with a partial last strip.
TEST(CannyCpu, EverySigmaAndCandidateSet) {
  const uint32_t seed = base_seed() + 1000;
  // step 0: a custom set whose duplicates weight two pairs (F_low's tables, low_tables, count each; counted once, the
  // picks move), lows of one high and of many, far apart
  for (int step : {1, 3, 0}) {
    std::vector<CandidatePair> cands = canny_test::standard_set(step ? step : 3);
    if (step == 0) {
      cands.insert(cands.end(), 40, CandidatePair{4, 7});
      cands.insert(cands.end(), 25, CandidatePair{10, 22});
      cands.push_back({11, 30});
    }
    for (float sigma : {0.1f, 0.34f, 0.5f, 0.67f, 0.9f, 1.0f, 1.2f, 1.34f, 1.6f, 1.67f, 2.0f}) {
      SCOPED_TRACE(testing::Message() << "step " << step << " sigma " << sigma << " seed " << seed);
      const Plane img = random_plane(203, 77, 211, seed);
      for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame}) {
        const Options o = make_options(mode, sigma, cands);
        CpuDetector d;
        ASSERT_EQ(d.init(img.w, img.h, o, 3), canny::kOk);
        expect_same(oracle(img, o), fast(d, img));
      }
    }
  }
}

// G exactly on threshold values, where "G > low" and "G >= high" differ from "G >= low": sigma 0.1 smooths
// nothing (taps 0, 16384, 0), columns 0-3 are 0, 0, 100, 100 (so Mmax = 100 exactly) and the rest are 4x4 blocks
// of 50..100, whose steps give integer magnitudes M and so G = M / 100.0f = the threshold float (float)M / 100.0f.
TEST(CannyCpu, GradientExactlyOnThresholds) {
  const int w = 150, h = 90;
  std::mt19937 rng(base_seed() + 2000);
  Plane img(w, h, w);
  std::vector<uint8_t> block(size_t((w + 3) / 4) * ((h + 3) / 4));
  for (auto& v : block) v = uint8_t(50 + rng() % 51);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.px[size_t(y) * w + x] = x < 2 ? 0 : x < 4 ? 100 : block[size_t(y / 4) * ((w + 3) / 4) + size_t(x / 4)];
  std::vector<float> g(size_t(w) * h);
  std::vector<uint8_t> work(canny::workspace_bytes_ref(w, h));
  ASSERT_EQ(canny::gradient_map_ref(img.px.data(), w, h, w, 0.1f, g.data(), w, work.data(), work.size()), canny::kOk);
  int on_threshold = 0;
  for (float v : g)
    for (int k = 1; k <= 25; ++k) on_threshold += v == float(k) / 100.0f;
  ASSERT_GT(on_threshold, 100) << "the image must put G on threshold values";
  for (int step : {1, 3}) {
    const std::vector<CandidatePair> cands = canny_test::standard_set(step);
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame, ThresholdMode::kFixed}) {
      SCOPED_TRACE(testing::Message() << "step " << step << " " << mode_name(mode));
      const Options o = make_options(mode, 0.1f, cands);
      CpuDetector d;
      ASSERT_EQ(d.init(w, h, o, 3), canny::kOk);
      expect_same(oracle(img, o), fast(d, img));
    }
  }
}

// The standard photographs (skipped without GPUEC_SHARED_DIR/images/standard), every mode, both sets.
TEST(CannyCpu, StandardImages) {
  const char* dir = std::getenv("GPUEC_SHARED_DIR");
  if (!dir) GTEST_SKIP() << "skipped: GPUEC_SHARED_DIR not set";
  const std::filesystem::path root = std::filesystem::path(dir) / "images" / "standard";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec))
    if (e.path().extension() == ".pgm") files.push_back(e.path().string());
  if (files.empty()) GTEST_SKIP() << "skipped: no PGM images under " << root;
  std::sort(files.begin(), files.end());
  const std::vector<CandidatePair> c1 = canny_test::standard_set(1), c3 = canny_test::standard_set(3);
  struct Case {
    ThresholdMode mode;
    const std::vector<CandidatePair>* cands;
    int threads;
  };
  const Case cases[] = {{ThresholdMode::kStrip, &c3, 2}, {ThresholdMode::kStrip, &c3, 7},
                        {ThresholdMode::kStrip, &c1, 16}, {ThresholdMode::kFrame, &c3, 3},
                        {ThresholdMode::kFixed, &c3, 16}};
  for (const std::string& f : files) {
    Plane img(0, 0, 0);
    ASSERT_TRUE(canny_test::read_pgm(f, &img.w, &img.h, &img.px)) << f;
    img.pitch = img.w;
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << f << " " << mode_name(c.mode) << " " << c.cands->size() << " pairs, "
                                      << c.threads << " threads");
      const Options o = make_options(c.mode, 1.0f, *c.cands);
      CpuDetector d;
      ASSERT_EQ(d.init(img.w, img.h, o, c.threads), canny::kOk);
      expect_same(oracle(img, o), fast(d, img));
    }
  }
}

// A 1080p frame as the benchmark runs it (C_0.03 strips, all cores of this machine).
TEST(CannyCpu, FullHdFrame) {
  const std::vector<CandidatePair> c3 = canny_test::standard_set(3);
  const Options o = make_options(ThresholdMode::kStrip, 1.0f, c3);
  const Plane img = random_plane(1920, 1080, 1920, base_seed() + 7);
  CpuDetector d;
  ASSERT_EQ(d.init(img.w, img.h, o, 0), canny::kOk);
  EXPECT_GE(d.threads(), 1);
  expect_same(oracle(img, o), fast(d, img));
}

TEST(CannyCpu, ArgumentErrors) {
  const std::vector<CandidatePair> c3 = canny_test::standard_set(3);
  const Options ok = make_options(ThresholdMode::kStrip, 1.0f, c3);
  CpuDetector d;
  uint8_t px[64] = {}, edges[64] = {};
  ThresholdPair pairs[2];
  EXPECT_EQ(d.threads(), 0);
  EXPECT_EQ(d.detect(px, 8, edges, 8, pairs), canny::kErrSize);  // not initialised
  EXPECT_EQ(d.init(0, 8, ok, 1), canny::kErrSize);
  EXPECT_EQ(d.init(8, canny::kMaxDim + 1, ok, 1), canny::kErrSize);
  EXPECT_EQ(d.init(8, 8, ok, -1), canny::kErrSize);
  EXPECT_EQ(d.init(8, 8, ok, CpuDetector::kMaxCpuThreads + 1), canny::kErrSize);
  Options bad = ok;
  bad.sigma = 2.5f;
  EXPECT_EQ(d.init(8, 8, bad, 1), canny::kErrSigma);
  bad = ok;
  bad.mode = ThresholdMode(7);
  EXPECT_EQ(d.init(8, 8, bad, 1), canny::kErrMode);
  bad = ok;
  bad.n_candidates = 0;
  EXPECT_EQ(d.init(8, 8, bad, 1), canny::kErrCandidates);
  bad = ok;
  bad.mode = ThresholdMode::kFixed;
  bad.fixed = ThresholdPair{20, 10, 1};
  EXPECT_EQ(d.init(8, 8, bad, 1), canny::kErrThresholds);
  EXPECT_EQ(d.threads(), 0);  // a failed init leaves the detector empty
  ASSERT_EQ(d.init(8, 8, ok, 2), canny::kOk);
  EXPECT_EQ(d.detect(nullptr, 8, edges, 8, pairs), canny::kErrNull);
  EXPECT_EQ(d.detect(px, 8, nullptr, 8, pairs), canny::kErrNull);
  EXPECT_EQ(d.detect(px, 8, edges, 8, nullptr), canny::kErrNull);
  EXPECT_EQ(d.detect(px, 7, edges, 8, pairs), canny::kErrPitch);
  EXPECT_EQ(d.detect(px, 8, edges, 7, pairs), canny::kErrPitch);
  EXPECT_EQ(d.detect(px, 8, edges, 8, pairs), canny::kOk);
  ASSERT_EQ(d.init(8, 8, ok, 0), canny::kOk);  // 0: every core
  EXPECT_GE(d.threads(), 1);
}

}  // namespace
