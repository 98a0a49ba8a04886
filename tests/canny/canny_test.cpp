// Unit tests of the GUD-Canny CPU twin (canny/canny.h): known answers for the candidate sets, the Gaussian
// taps and Medina-Carnicer's threshold search on hand-built gradient maps; geometric properties of the
// edges of synthetic images; strip seams, odd sizes, pitches; argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny_images.h"
#include "pgm.h"

namespace {

using canny::CandidatePair;
using canny::Options;
using canny::ThresholdMode;
using canny::ThresholdPair;

constexpr double kPi = 3.14159265358979323846;

struct Image {
  int w = 0, h = 0, pitch = 0;
  std::vector<uint8_t> px;
  Image(int w_, int h_, int pitch_ = 0) : w(w_), h(h_), pitch(pitch_ ? pitch_ : w_), px(size_t(pitch) * h_, 0) {}
  uint8_t& at(int x, int y) { return px[size_t(y) * pitch + x]; }
  uint8_t at(int x, int y) const { return px[size_t(y) * pitch + x]; }
};

using canny_test::standard_set;

struct Result {
  int status = 0;
  Image edges{1, 1};
  std::vector<ThresholdPair> pairs;
};

// Runs detect_edges_ref; the edge map has a wider pitch filled with a canary that must survive.
Result detect(const Image& img, Options opt, int step = 3) {
  std::vector<CandidatePair> cands = standard_set(step);
  if (!opt.candidates) {
    opt.candidates = cands.data();
    opt.n_candidates = int(cands.size());
  }
  Result r;
  r.edges = Image(img.w, img.h, img.w + 3);
  std::fill(r.edges.px.begin(), r.edges.px.end(), uint8_t(0x5a));
  r.pairs.assign(size_t(canny::strip_count(img.w)), ThresholdPair{-1, -1, -1});
  std::vector<uint8_t> work(canny::workspace_bytes_ref(img.w, img.h) + 1);
  r.status = canny::detect_edges_ref(img.px.data(), img.w, img.h, img.pitch, opt, r.edges.px.data(),
                                     r.edges.pitch, r.pairs.data(), work.data() + 1, work.size() - 1);
  if (r.status == canny::kOk) {
    for (int y = 0; y < img.h; ++y) {
      for (int x = img.w; x < r.edges.pitch; ++x) EXPECT_EQ(r.edges.at(x, y), 0x5a) << "pitch padding written";
      for (int x = 0; x < img.w; ++x) EXPECT_TRUE(r.edges.at(x, y) == 0 || r.edges.at(x, y) == 255);
    }
  }
  return r;
}

Options strip_options(float sigma = 1.0f) {
  Options o;
  o.sigma = sigma;
  return o;
}

int count_edges(const Image& e) {
  int n = 0;
  for (int y = 0; y < e.h; ++y)
    for (int x = 0; x < e.w; ++x) n += e.at(x, y) != 0;
  return n;
}

// Deterministic noise (64-bit LCG), roughly Gaussian (sum of 4 uniforms), std ~ amp / 1.7.
struct Noise {
  uint64_t s;
  explicit Noise(uint64_t seed) : s(seed) {}
  double uniform() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return double(s >> 11) / double(1ull << 53);
  }
  double gauss(double amp) { return amp * (uniform() + uniform() + uniform() + uniform() - 2.0); }
};

uint8_t clamp8(double v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : std::lround(v)); }

// ---------------------------------------------------------------- candidate sets, taps

TEST(CannyCandidates, StandardSetsHaveThePaperCounts) {
  EXPECT_EQ(canny::make_candidate_set(1, nullptr, 0), 300);  // 25 values, C(25, 2)
  EXPECT_EQ(canny::make_candidate_set(3, nullptr, 0), 36);   // 1, 4, ..., 25: 9 values, C(9, 2)
  auto c3 = standard_set(3);
  ASSERT_EQ(c3.size(), 36u);
  EXPECT_EQ(c3.front().low, 1);
  EXPECT_EQ(c3.front().high, 4);
  EXPECT_EQ(c3.back().low, 22);
  EXPECT_EQ(c3.back().high, 25);
  auto c1 = standard_set(1);
  EXPECT_EQ(c1[0].low, 1);
  EXPECT_EQ(c1[0].high, 2);
  EXPECT_EQ(c1[23].high, 25);
  EXPECT_EQ(c1[24].low, 2);
  for (auto p : c1) {
    EXPECT_LT(p.low, p.high);
    EXPECT_GE(p.low, 1);
    EXPECT_LE(p.high, 25);
  }
  EXPECT_EQ(canny::check_candidates(c1.data(), 300), canny::kOk);
  EXPECT_EQ(canny::make_candidate_set(0, nullptr, 0), canny::kErrSize);
  EXPECT_EQ(canny::make_candidate_set(25, nullptr, 0), canny::kErrSize);
  EXPECT_EQ(canny::make_candidate_set(1, nullptr, 5), canny::kErrNull);
}

TEST(CannyTaps, KnownValues) {
  int32_t t[canny::kMaxTaps];
  int r = -1;
  ASSERT_EQ(canny::gaussian_taps(1.0f, t, &r), canny::kOk);
  ASSERT_EQ(r, 3);
  // exp(-i^2/2): 1, .60653066, .13533528, .01110900; sum 2.50594988; * 16384 / sum: 3965.52, 884.83,
  // 72.63, rounded; the centre takes the rest (6536; unrounded 6538.04).
  EXPECT_EQ(t[4], 3966);
  EXPECT_EQ(t[5], 885);
  EXPECT_EQ(t[6], 73);
  EXPECT_EQ(t[3], 16384 - 2 * (3966 + 885 + 73));
  ASSERT_EQ(canny::gaussian_taps(0.1f, t, &r), canny::kOk);
  EXPECT_EQ(r, 1);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 16384);
  for (float s : {0.1f, 0.3f, 0.7f, 1.0f, 1.4f, 2.0f}) {
    ASSERT_EQ(canny::gaussian_taps(s, t, &r), canny::kOk);
    EXPECT_EQ(r, std::max(1, int(std::ceil(3.0 * double(s)))));
    int sum = 0;
    for (int i = 0; i <= 2 * r; ++i) {
      EXPECT_EQ(t[i], t[2 * r - i]);
      EXPECT_GE(t[i], 0);
      if (i > 0 && i <= r) {
        EXPECT_LE(t[i - 1], t[i]);
      }
      sum += t[i];
    }
    EXPECT_EQ(sum, 16384);
  }
  EXPECT_EQ(canny::gaussian_taps(2.0f, t, &r), canny::kOk);
  EXPECT_EQ(r, 6);
  EXPECT_EQ(canny::gaussian_taps(0.09f, t, &r), canny::kErrSigma);
  EXPECT_EQ(canny::gaussian_taps(2.01f, t, &r), canny::kErrSigma);
  EXPECT_EQ(canny::gaussian_taps(std::numeric_limits<float>::quiet_NaN(), t, &r), canny::kErrSigma);
}

// ---------------------------------------------------------------- threshold search by hand

struct GMap {
  int w, h;
  std::vector<float> g;
  GMap(int w_, int h_) : w(w_), h(h_), g(size_t(w_) * h_, 0.0f) {}
};

ThresholdPair select(const GMap& m, const std::vector<CandidatePair>& c, int x0 = 0, int x1 = -1) {
  if (x1 < 0) x1 = m.w;
  size_t n = size_t(x1 - x0) * m.h;
  std::vector<uint32_t> sm(n);
  std::vector<uint8_t> mask(n);
  std::vector<int32_t> stack(n);
  ThresholdPair p{-1, -1, -1};
  EXPECT_EQ(canny::select_thresholds_ref(m.g.data(), m.w, m.w, m.h, x0, x1, c.data(), int(c.size()), &p,
                                         sm.data(), mask.data(), stack.data()),
            canny::kOk);
  return p;
}

// The x grid (canny.h NUMBERS): bin edges in half-hundredths, hand-computed from the edge formulas.
TEST(CannySelect, GridBinsByHand) {
  canny::Bins b;
  auto c3 = standard_set(3);  // grid 1, 4, ..., 25: edges -1 (so from 0), 5, 11, ..., 47, 53
  canny::make_bins(c3.data(), int(c3.size()), &b);
  const int expect3[][2] = {{0, 1},   {4, 1},   {5, 4},   {10, 4}, {11, 7},
                            {46, 22}, {47, 25}, {52, 25}, {53, 0}, {200, 0}};
  for (const auto& e : expect3) EXPECT_EQ(b.of_half[e[0]], e[1]) << e[0];
  auto c1 = standard_set(1);  // grid 1..25: [2x - 1, 2x + 1), the round-half-up reading at 0.01
  canny::make_bins(c1.data(), int(c1.size()), &b);
  EXPECT_EQ(b.of_half[0], 0);
  for (int h = 1; h <= 50; ++h) EXPECT_EQ(b.of_half[h], (h + 1) / 2) << h;
  EXPECT_EQ(b.of_half[51], 0);
  // A non-uniform grid {1, 20, 34, 90, 95, 99}: edges -17, 21, 54, 124, 185, 194, 202 (cut at 200).
  std::vector<CandidatePair> c = {{1, 90}, {20, 90}, {34, 90}, {95, 99}};
  canny::make_bins(c.data(), int(c.size()), &b);
  const int expect[][2] = {{0, 1},    {20, 1},   {21, 20},  {53, 20},  {54, 34},  {123, 34},
                           {124, 90}, {184, 90}, {185, 95}, {193, 95}, {194, 99}, {200, 99}};
  for (const auto& e : expect) EXPECT_EQ(b.of_half[e[0]], e[1]) << e[0];
}

// Rows of segments [a, g, 0] under C_0.03 (values V = 1, 4, ..., 25, NC = 36). The anchor a (itself a grid
// value) is HIGH exactly for the pairs with high <= 100 a, so g is linked by (l, h) iff l < 100 g < h <= 100 a:
// SM(g) = #{V < 100 g} x #{V in (100 g, 100 a]}. Anchors and zeros have SM = 0. Prob bins: h = 200 SM / 36
// -> SM 1 -> 5 (bin 4), 2 -> 11 (7), 3 -> 16 (7), 4 -> 22 (10), 6 -> 33 (16), 7 -> 38 (19), 8 -> 44 (22).
//   a     g     SM  binProb  h(G)  binG  100 SM >= binG * 36?
//   0.04  0.02  1   4         4    1     100 >= 36   -> 1 in D
//   0.07  0.05  2   7        10    4     200 >= 144  -> 4 in D
//   0.10  0.08  3   7        16    7     300 >= 252  -> 7 in D
//   0.13  0.11  4   10       22    10    400 >= 360  -> 10 in D
//   0.19  0.17  6   16       34    16    600 >= 576  -> 16 in D
//   0.22  0.20  7   19       40    19    700 >= 684  -> 19 in D   (twice)
//   0.25  0.23  8   22       46    22    800 >= 792  -> 22 in D
// D = {1, 4, 7, 10, 16, 19, 22}, hist {0, 1, 2, 1, 1, 2, 1}: local maxima 7 and 19. Pair (7, 19).
struct Seg {
  float a, g;
};

GMap segments(const std::vector<Seg>& segs, int rows = 1) {
  GMap m(int(segs.size()) * 3, rows);
  for (size_t i = 0; i < segs.size(); ++i) {
    m.g[3 * i] = segs[i].a;
    m.g[3 * i + 1] = segs[i].g;
  }
  return m;
}

std::vector<Seg> hand_segments() {
  return {{0.04f, 0.02f}, {0.07f, 0.05f}, {0.10f, 0.08f}, {0.13f, 0.11f},
          {0.19f, 0.17f}, {0.22f, 0.20f}, {0.22f, 0.20f}, {0.25f, 0.23f}};
}

TEST(CannySelect, HandComputedTwoMaxima) {
  const auto c3 = standard_set(3);
  ThresholdPair p = select(segments(hand_segments()), c3);
  EXPECT_EQ(p.low, 7);
  EXPECT_EQ(p.high, 19);
  EXPECT_EQ(p.found, 1);
  // Order of the pixels does not matter; neither does an all-zero second row (0 is in no bin).
  auto r = hand_segments();
  std::swap(r[0], r[7]);
  std::swap(r[2], r[5]);
  p = select(segments(r, 2), c3);
  EXPECT_EQ(p.low, 7);
  EXPECT_EQ(p.high, 19);
}

TEST(CannySelect, HandComputedOneMaximumGivesEqualThresholds) {
  // With one 0.20 segment, hist {0, 1, 2, 1, 1, 1, 1}: only 7 is a local maximum, so low = high = 7.
  auto s = hand_segments();
  s.erase(s.begin() + 6);
  ThresholdPair p = select(segments(s), standard_set(3));
  EXPECT_EQ(p.low, 7);
  EXPECT_EQ(p.high, 7);
  EXPECT_EQ(p.found, 1);
}

TEST(CannySelect, HandComputedTiesAreNotMaxima) {
  // One 0.20 segment and two 0.11 ones: hist {0, 1, 2, 2, 1, 1, 1}: 7 and 10 tie, nothing else rises
  // -> fallback, the candidate with the largest high and then low: (22, 25), found = 0.
  auto s = hand_segments();
  s.erase(s.begin() + 6);
  s.push_back({0.13f, 0.11f});
  ThresholdPair p = select(segments(s), standard_set(3));
  EXPECT_EQ(p.low, 22);
  EXPECT_EQ(p.high, 25);
  EXPECT_EQ(p.found, 0);
  // (0.25, 0.14): SM = #{1..13} x #{16..25} = 5 x 4 = 20, Prob 0.56 (h 111: no bin), G bin 13 (h 28) with
  // 2000 >= 468: 13 enters D with hist 0. (0.16, 0.14): SM 5 x 1 = 5 -> h 27, Prob bin 13 (500 >= 468):
  // hist(13) = 1, between 10 (2) and 16 (1): still no maximum.
  s.push_back({0.25f, 0.14f});
  s.push_back({0.16f, 0.14f});
  p = select(segments(s), standard_set(3));
  EXPECT_EQ(p.found, 0);
  // Two more (0.16, 0.14): hist(13) = 3 > 2 and > 1 -> the only maximum: (13, 13).
  s.push_back({0.16f, 0.14f});
  s.push_back({0.16f, 0.14f});
  p = select(segments(s), standard_set(3));
  EXPECT_EQ(p.low, 13);
  EXPECT_EQ(p.high, 13);
  EXPECT_EQ(p.found, 1);
  // D = {1, 4}: 4 is the last member, no maximum.
  p = select(segments({{0.04f, 0.02f}, {0.07f, 0.05f}}), standard_set(3));
  EXPECT_EQ(p.found, 0);
}

// C_0.01 (NC = 300) on the same construction, g at x.75 hundredths (no float lands near a bin edge):
// SM(g) = #{1..25 below 100 g} x #{values in (100 g, 100 a]}; Prob bin from h = 200 SM / 300.
//   a     g       SM          h   binProb  h(G)  binG  100 SM >= binG * 300?
//   0.09  0.0575  5 x 4 = 20  13  7        11    6     2000 >= 1800 -> 6 in D
//   0.10  0.0675  6 x 4 = 24  16  8        13    7     2400 >= 2100 -> 7 in D   (twice)
//   0.11  0.0775  7 x 4 = 28  18  9        15    8     2800 >= 2400 -> 8 in D
//   0.12  0.0875  8 x 4 = 32  21  11       17    9     3200 >= 2700 -> 9 in D
//   0.13  0.0975  9 x 4 = 36  24  12       19    10    3600 >= 3000 -> 10 in D
//   0.14  0.1075  10 x 4 = 40 26  13       21    11    4000 >= 3300 -> 11 in D
//   0.13  0.1075  10 x 3 = 30 20  10       21    11    3000 >= 3300 no (Prob only)  (twice)
// D = {6, ..., 11}, hist {0, 1, 2, 1, 2, 1}: local maxima 8 and 10. Pair (8, 10).
TEST(CannySelect, HandComputedStepOneSet) {
  ThresholdPair p = select(segments({{0.09f, 0.0575f}, {0.10f, 0.0675f}, {0.10f, 0.0675f}, {0.11f, 0.0775f},
                                     {0.12f, 0.0875f}, {0.13f, 0.0975f}, {0.14f, 0.1075f}, {0.13f, 0.1075f},
                                     {0.13f, 0.1075f}}),
                           standard_set(1));
  EXPECT_EQ(p.low, 8);
  EXPECT_EQ(p.high, 10);
  EXPECT_EQ(p.found, 1);
}

TEST(CannySelect, EmptyMapFallsBack) {
  GMap m(7, 3);
  auto c3 = standard_set(3);
  ThresholdPair p = select(m, c3);
  EXPECT_EQ(p.low, 22);
  EXPECT_EQ(p.high, 25);
  EXPECT_EQ(p.found, 0);
  auto c1 = standard_set(1);
  p = select(m, c1);
  EXPECT_EQ(p.low, 24);
  EXPECT_EQ(p.high, 25);
  EXPECT_EQ(p.found, 0);
}

TEST(CannySelect, RegionIsIsolated) {
  // The hand rows placed in columns [32, 56) of a 64-wide map, with strong unrelated content elsewhere:
  // the region's answer is the same as on its own.
  GMap src = segments(hand_segments());
  GMap m(64, 1);
  for (int x = 0; x < 64; ++x) m.g[x] = (x % 3 == 1) ? 0.15f : 0.9f;
  for (int x = 0; x < 32; ++x) m.g[32 + x] = x < src.w ? src.g[x] : 0.0f;
  ThresholdPair p = select(m, standard_set(3), 32, 64);
  EXPECT_EQ(p.low, 7);
  EXPECT_EQ(p.high, 19);
}

// ---------------------------------------------------------------- hysteresis by hand

TEST(CannyHysteresis, EightConnectedChainsAndRegionBorders) {
  // 40 x 4 map, thresholds (10, 50). HIGH at (2, 0); UNSTABLE diagonal chain (3,1) (4,2) (5,3); an isolated
  // UNSTABLE pixel (9, 2); a chain crossing the strip border: HIGH (30, 1), UNSTABLE (31, 1) (32, 1) (33, 2).
  GMap m(40, 4);
  auto set = [&](int x, int y, float v) { m.g[size_t(y) * 40 + x] = v; };
  set(2, 0, 0.6f);
  set(3, 1, 0.2f);
  set(4, 2, 0.3f);
  set(5, 3, 0.11f);
  set(9, 2, 0.4f);
  set(30, 1, 0.5f);  // G >= high is HIGH
  set(31, 1, 0.2f);
  set(32, 1, 0.2f);
  set(33, 2, 0.2f);
  set(20, 0, 0.7f);  // vertical chain: HIGH (20, 0), UNSTABLE (20, 1) (20, 2)
  set(20, 1, 0.3f);
  set(20, 2, 0.3f);
  set(12, 0, 0.1f);  // G == low is not UNSTABLE
  set(13, 0, 0.6f);
  std::vector<uint8_t> e(size_t(41) * 4, 7);
  std::vector<int32_t> stack(160);
  auto edge = [&](int x, int y) { return e[size_t(y) * 41 + x]; };
  ASSERT_EQ(canny::hysteresis_ref(m.g.data(), 40, 40, 4, 0, 40, 10, 50, e.data(), 41, stack.data()), canny::kOk);
  int n = 0;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 40; ++x) n += edge(x, y) == 255;
  EXPECT_EQ(n, 12);
  EXPECT_EQ(edge(20, 2), 255);
  EXPECT_EQ(edge(5, 3), 255);
  EXPECT_EQ(edge(33, 2), 255);
  EXPECT_EQ(edge(9, 2), 0);
  EXPECT_EQ(edge(12, 0), 0);
  EXPECT_EQ(edge(40, 0), 7);
  // Strips [0, 32) and [32, 40): the chain does not cross.
  std::fill(e.begin(), e.end(), 7);
  ASSERT_EQ(canny::hysteresis_ref(m.g.data(), 40, 40, 4, 0, 32, 10, 50, e.data(), 41, stack.data()), canny::kOk);
  ASSERT_EQ(canny::hysteresis_ref(m.g.data(), 40, 40, 4, 32, 40, 10, 50, e.data(), 41, stack.data()), canny::kOk);
  EXPECT_EQ(edge(31, 1), 255);
  EXPECT_EQ(edge(32, 1), 0);
  EXPECT_EQ(edge(33, 2), 0);
  EXPECT_EQ(edge(5, 3), 255);
}

// ---------------------------------------------------------------- gradient map by hand

TEST(CannyGradient, HandComputedRow) {
  // sigma 0.1: taps (0, 16384, 0), smoothing is the identity. s = 0 0 100 100 100 100 100 40 40.
  // gx (clamped central differences): 0 100 100 0 0 0 -60 -60 0; M = |gx|, Mmax = 100.
  // x1: forward neighbour (x2) equal -> suppressed; x2: forward 0, backward 100 >= -> kept, G = 1.
  // x6: gradient points to -x, forward x5 = 0, backward x7 = 60 >= -> kept, G = 0.6f; x7: forward x6 equal
  // -> suppressed. The kept pixel of a plateau is the one on the bright side.
  const uint8_t row[9] = {0, 0, 100, 100, 100, 100, 100, 40, 40};
  float g[9];
  std::vector<uint8_t> work(canny::workspace_bytes_ref(9, 1));
  ASSERT_EQ(canny::gradient_map_ref(row, 9, 1, 9, 0.1f, g, 9, work.data(), work.size()), canny::kOk);
  const float want[9] = {0, 0, 1.0f, 0, 0, 0, 60.0f / 100.0f, 0, 0};
  for (int x = 0; x < 9; ++x) EXPECT_EQ(g[x], want[x]) << x;
  // sigma 1.0 on an impulse of 255 at x = 3 of a 7 x 1 image (height 1: the vertical pass is
  // (h * 16384 + 2^21) >> 22). h = (tap * 255 + 32) >> 6 = 291 3526 15802 26042 ...; s = 1 14 62 102 62 14 1.
  // gx = 13 61 88 0 -88 -61 -13: only x2 and x4 survive, both with G = 1.
  const uint8_t imp[7] = {0, 0, 0, 255, 0, 0, 0};
  float gi[7];
  ASSERT_EQ(canny::gradient_map_ref(imp, 7, 1, 7, 1.0f, gi, 7, work.data(), work.size()), canny::kOk);
  const float want_i[7] = {0, 0, 1.0f, 0, 1.0f, 0, 0};
  for (int x = 0; x < 7; ++x) EXPECT_EQ(gi[x], want_i[x]) << x;
}

// ---------------------------------------------------------------- synthetic images

Image vertical_step(int w, int h, int col, uint8_t left, uint8_t right) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = x < col ? left : right;
  return img;
}

TEST(CannyEdges, FlatImageHasNoEdges) {
  for (uint8_t v : {0, 77, 255}) {
    Image img(70, 20);
    std::fill(img.px.begin(), img.px.end(), v);
    for (int step : {1, 3}) {
      Result r = detect(img, strip_options(1.4f), step);
      ASSERT_EQ(r.status, canny::kOk);
      EXPECT_EQ(count_edges(r.edges), 0);
      for (auto p : r.pairs) EXPECT_EQ(p.found, 0);
    }
  }
}

TEST(CannyEdges, VerticalAndHorizontalStepsAreOnePixelThick) {
  for (float sigma : {0.1f, 0.6f, 1.0f, 2.0f})
    for (int col : {9, 16, 31, 32, 33, 50})
      for (bool rising : {true, false}) {
        SCOPED_TRACE(testing::Message() << "sigma " << sigma << " col " << col << " rising " << rising);
        Image v = vertical_step(70, 24, col, rising ? 40 : 200, rising ? 200 : 40);
        Result r = detect(v, strip_options(sigma));
        ASSERT_EQ(r.status, canny::kOk);
        int first_x = -1;
        for (int y = 0; y < v.h; ++y) {
          int n = 0, xe = -1;
          for (int x = 0; x < v.w; ++x)
            if (r.edges.at(x, y)) ++n, xe = x;
          ASSERT_EQ(n, 1) << "row " << y;
          EXPECT_TRUE(xe == col - 1 || xe == col) << "row " << y << " x " << xe;
          if (first_x < 0) first_x = xe;
          EXPECT_EQ(xe, first_x);
        }
        // Transposed: the horizontal edge is found at the same row.
        Image t(24, 70);
        for (int y = 0; y < 70; ++y)
          for (int x = 0; x < 24; ++x) t.at(x, y) = v.at(y, x);
        Result rt = detect(t, strip_options(sigma));
        ASSERT_EQ(rt.status, canny::kOk);
        for (int x = 0; x < t.w; ++x) {
          int n = 0, ye = -1;
          for (int y = 0; y < t.h; ++y)
            if (rt.edges.at(x, y)) ++n, ye = y;
          ASSERT_EQ(n, 1) << "column " << x;
          EXPECT_EQ(ye, first_x);
        }
      }
}

// Half-plane edge through (cx, cy) with normal angle theta; checks distance to the line and thickness.
TEST(CannyEdges, DiagonalStepsAtSeveralAngles) {
  const int W = 96, H = 96;
  const double cx = 47.3, cy = 48.6;
  for (double deg : {10.0, 22.5, 30.0, 45.0, 60.0, 67.5, 80.0, 135.0, 160.0})
    for (float sigma : {0.8f, 1.4f}) {
      SCOPED_TRACE(testing::Message() << "angle " << deg << " sigma " << sigma);
      const double nx = std::cos(deg * kPi / 180), ny = std::sin(deg * kPi / 180);
      Image img(W, H);
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          // 4x4 supersampled coverage, so the step is sub-pixel exact.
          int in = 0;
          for (int sy = 0; sy < 4; ++sy)
            for (int sx = 0; sx < 4; ++sx)
              in += (x + (sx + 0.5) / 4 - 0.5 - cx) * nx + (y + (sy + 0.5) / 4 - 0.5 - cy) * ny > 0;
          img.at(x, y) = clamp8(50 + 150.0 * in / 16);
        }
      Result r = detect(img, strip_options(sigma));
      ASSERT_EQ(r.status, canny::kOk);
      const int margin = 6;
      const bool steep = std::fabs(nx) >= std::fabs(ny);  // line closer to vertical: one pixel per row
      int near = 0, far = 0;
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (!r.edges.at(x, y)) continue;
          const double d = std::fabs((x - cx) * nx + (y - cy) * ny);
          if (x < margin || y < margin || x >= W - margin || y >= H - margin) continue;
          (d <= 1.5 ? near : far) += 1;
        }
      EXPECT_EQ(far, 0);
      // Thickness: along the minor axis each line (row for steep, column otherwise) inside the margin has
      // one or two edge pixels near the line, adjacent when two.
      int lines = 0;
      for (int i = margin; i < (steep ? H : W) - margin; ++i) {
        std::vector<int> at;
        for (int j = margin; j < (steep ? W : H) - margin; ++j) {
          const int x = steep ? j : i, y = steep ? i : j;
          if (r.edges.at(x, y)) at.push_back(j);
        }
        if (at.empty()) continue;  // the line may leave the inner box
        ++lines;
        EXPECT_LE(at.size(), 2u) << "line " << i;
        if (at.size() == 2) {
          EXPECT_EQ(at[1] - at[0], 1) << "line " << i;
        }
      }
      EXPECT_GT(lines, 40);
      EXPECT_GT(near, 40);
    }
}

TEST(CannyEdges, FilledCircleGivesAClosedContourAtTheRadius) {
  const int W = 80, H = 72;
  const double cx = 40.3, cy = 35.8, R = 22.0;
  Image img(W, H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int in = 0;
      for (int sy = 0; sy < 4; ++sy)
        for (int sx = 0; sx < 4; ++sx) {
          const double dx = x + (sx + 0.5) / 4 - 0.5 - cx, dy = y + (sy + 0.5) / 4 - 0.5 - cy;
          in += dx * dx + dy * dy < R * R;
        }
      img.at(x, y) = clamp8(30 + 180.0 * in / 16);
    }
  for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame})
    for (int step : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "mode " << int(mode) << " step " << step);
      Options o = strip_options(1.0f);
      o.mode = mode;
      Result r = detect(img, o, step);
      ASSERT_EQ(r.status, canny::kOk);
      int n = 0;
      std::vector<int> comp(size_t(W) * H, 0);
      int sx = -1, sy = -1;
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
          if (r.edges.at(x, y)) {
            ++n;
            const double d = std::hypot(x - cx, y - cy);
            EXPECT_NEAR(d, R, 1.5) << x << "," << y;
            sx = x, sy = y;
          }
      ASSERT_GT(n, int(2 * kPi * R * 0.9));
      // One 8-connected component.
      std::vector<std::pair<int, int>> st{{sx, sy}};
      comp[size_t(sy) * W + sx] = 1;
      int reached = 0;
      while (!st.empty()) {
        auto [x, y] = st.back();
        st.pop_back();
        ++reached;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int X = x + dx, Y = y + dy;
            if (X < 0 || Y < 0 || X >= W || Y >= H || comp[size_t(Y) * W + X] || !r.edges.at(X, Y)) continue;
            comp[size_t(Y) * W + X] = 1;
            st.push_back({X, Y});
          }
      }
      EXPECT_EQ(reached, n);
      // Closed: a 4-connected fill of non-edge pixels from the corner never reaches the centre.
      std::vector<uint8_t> seen(size_t(W) * H, 0);
      st = {{0, 0}};
      seen[0] = 1;
      while (!st.empty()) {
        auto [x, y] = st.back();
        st.pop_back();
        const int d4[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        for (auto& d : d4) {
          int X = x + d[0], Y = y + d[1];
          if (X < 0 || Y < 0 || X >= W || Y >= H || seen[size_t(Y) * W + X] || r.edges.at(X, Y)) continue;
          seen[size_t(Y) * W + X] = 1;
          st.push_back({X, Y});
        }
      }
      EXPECT_EQ(seen[size_t(36) * W + 40], 0) << "contour is open";
    }
}

TEST(CannyEdges, NoiseGivesFewerFalseEdgesThanAFixedLowThreshold) {
  const int W = 128, H = 96;
  for (double amp : {8.0, 16.0, 30.0}) {
    SCOPED_TRACE(testing::Message() << "noise " << amp);
    Noise noise(uint64_t(amp * 1000));
    Image img(W, H);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) img.at(x, y) = clamp8((x < 64 ? 60 : 190) + noise.gauss(amp));
    auto false_edges = [&](const Result& r) {
      int n = 0;
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) n += r.edges.at(x, y) && std::abs(x - 63) > 3;
      return n;
    };
    auto found_rows = [&](const Result& r) {
      int n = 0;
      for (int y = 0; y < H; ++y) {
        bool f = false;
        for (int x = 60; x <= 67; ++x) f |= r.edges.at(x, y) != 0;
        n += f;
      }
      return n;
    };
    Options fixed = strip_options(1.0f);
    fixed.mode = ThresholdMode::kFixed;
    // The lowest pair of the candidate sets. (At noise 8 the method picks (0.02, 0.02), which keeps more
    // noise than a fixed (0.02, 0.05) would: the claim tested is against a LOW fixed pair only.)
    fixed.fixed = ThresholdPair{1, 2, 1};
    Result rf = detect(img, fixed);
    ASSERT_EQ(rf.status, canny::kOk);
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame})
      for (int step : {1, 3}) {
        Options o = strip_options(1.0f);
        o.mode = mode;
        Result r = detect(img, o, step);
        ASSERT_EQ(r.status, canny::kOk);
        EXPECT_LT(false_edges(r), false_edges(rf)) << "mode " << int(mode) << " step " << step;
        EXPECT_GE(found_rows(r), H * 9 / 10) << "mode " << int(mode) << " step " << step;
      }
  }
}

// ---------------------------------------------------------------- sizes, strips, pitch

Image textured(int w, int h, uint64_t seed, int pitch = 0) {
  Image img(w, h, pitch);
  Noise n(seed);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double dx = x - w * 0.4, dy = y - h * 0.55;
      const double base = (dx * dx + dy * dy < (w * w + h * h) / 20.0 ? 180 : 60) + ((x / 7 + y / 5) % 2) * 25;
      img.at(x, y) = clamp8(base + n.gauss(10));
    }
  return img;
}

TEST(CannySizes, TinyImages) {
  for (auto [w, h] : {std::pair{1, 1}, {5, 3}, {33, 7}, {1, 9}, {9, 1}, {2, 2}}) {
    SCOPED_TRACE(testing::Message() << w << "x" << h);
    Image img = textured(w, h, 7);
    for (int step : {1, 3}) {
      Result r = detect(img, strip_options(1.0f), step);
      ASSERT_EQ(r.status, canny::kOk);
      for (auto p : r.pairs) {
        EXPECT_GE(p.low, 1);
        EXPECT_LE(p.low, p.high);
      }
    }
  }
  Image one(1, 1);
  one.at(0, 0) = 200;
  Result r = detect(one, strip_options());
  ASSERT_EQ(r.status, canny::kOk);
  EXPECT_EQ(r.edges.at(0, 0), 0);
  EXPECT_EQ(r.pairs.size(), 1u);
  // 33 x 7 with a step at column 20: 2 strips, the edge found in the first one.
  Result s = detect(vertical_step(33, 7, 20, 10, 240), strip_options(1.0f));
  ASSERT_EQ(s.status, canny::kOk);
  ASSERT_EQ(s.pairs.size(), 2u);
  for (int y = 0; y < 7; ++y) EXPECT_TRUE(s.edges.at(19, y) || s.edges.at(20, y)) << y;
}

// Each strip of detect_edges_ref equals an independent run of select + hysteresis on a packed copy of that
// strip of G: strips do not see each other, the last one may be narrow.
TEST(CannySizes, WidthsAroundMultiplesOf32) {
  int found_by_step[4] = {};
  for (int w : {31, 32, 33, 63, 64, 65, 97})
    for (int step : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "width " << w << " step " << step);
      const int h = 29;
      Image img = textured(w, h, 100 + w);
      Result r = detect(img, strip_options(1.2f), step);
      ASSERT_EQ(r.status, canny::kOk);
      ASSERT_EQ(int(r.pairs.size()), (w + 31) / 32);
      std::vector<float> g(size_t(w) * h);
      std::vector<uint8_t> work(canny::workspace_bytes_ref(w, h));
      ASSERT_EQ(canny::gradient_map_ref(img.px.data(), w, h, w, 1.2f, g.data(), w, work.data(), work.size()),
                canny::kOk);
      auto cands = standard_set(step);
      for (int s = 0; s * 32 < w; ++s) {
        const int x0 = s * 32, sw = std::min(32, w - x0);
        GMap part(sw, h);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < sw; ++x) part.g[size_t(y) * sw + x] = g[size_t(y) * w + x0 + x];
        ThresholdPair p = select(part, cands);
        EXPECT_EQ(p.low, r.pairs[s].low) << "strip " << s;
        EXPECT_EQ(p.high, r.pairs[s].high) << "strip " << s;
        EXPECT_EQ(p.found, r.pairs[s].found) << "strip " << s;
        found_by_step[step] += p.found;
        std::vector<uint8_t> e(size_t(sw) * h);
        std::vector<int32_t> stack(size_t(sw) * h);
        ASSERT_EQ(canny::hysteresis_ref(part.g.data(), sw, sw, h, 0, sw, p.low, p.high, e.data(), sw, stack.data()),
                  canny::kOk);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < sw; ++x) ASSERT_EQ(e[size_t(y) * sw + x], r.edges.at(x0 + x, y)) << x0 + x << "," << y;
      }
    }
  // Some strips of each set found a pair by Medina-Carnicer (not only the fallback pair), so the comparison
  // covers searched pairs too.
  EXPECT_GT(found_by_step[1], 0);
  EXPECT_GT(found_by_step[3], 0);
}

TEST(CannySizes, PitchDoesNotChangeTheResult) {
  for (int w : {1, 31, 33, 65}) {
    const int h = 17;
    Image packed = textured(w, h, 9);
    Image padded(w, h, w + 13);
    std::fill(padded.px.begin(), padded.px.end(), uint8_t(255));
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) padded.at(x, y) = packed.at(x, y);
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame, ThresholdMode::kFixed}) {
      Options o = strip_options(0.9f);
      o.mode = mode;
      Result a = detect(packed, o), b = detect(padded, o);
      ASSERT_EQ(a.status, canny::kOk);
      ASSERT_EQ(b.status, canny::kOk);
      EXPECT_EQ(a.edges.px, b.edges.px) << "width " << w;
      for (size_t i = 0; i < a.pairs.size(); ++i) {
        EXPECT_EQ(a.pairs[i].low, b.pairs[i].low);
        EXPECT_EQ(a.pairs[i].high, b.pairs[i].high);
      }
    }
  }
}

// Content repeating every 32 columns, away from the strip borders: every strip has the same SM and G, the
// frame histogram is a multiple of a strip's, so the frame picks the strips' pair and the maps are equal.
TEST(CannyModes, FrameEqualsStripsWhenAllStripsAgree) {
  const int W = 128, H = 48;
  Image tile(32, H);
  Noise n(42);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < 32; ++x) {
      const double dx = x - 15.7, dy = y - 23.2;
      const bool in = dx * dx + dy * dy < 100;
      tile.at(x, y) = (x < 4 || x >= 28) ? 100 : clamp8((in ? 170 : 100) + n.gauss(12));
    }
  Image img(W, H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) img.at(x, y) = tile.at(x % 32, y);
  for (int step : {1, 3}) {
    Options o = strip_options(1.0f);
    Result s = detect(img, o, step);
    o.mode = ThresholdMode::kFrame;
    Result f = detect(img, o, step);
    ASSERT_EQ(s.status, canny::kOk);
    ASSERT_EQ(f.status, canny::kOk);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(s.pairs[k].found, 1);
      EXPECT_EQ(s.pairs[k].low, s.pairs[0].low);
      EXPECT_EQ(s.pairs[k].high, s.pairs[0].high);
      EXPECT_EQ(f.pairs[k].low, s.pairs[0].low);
      EXPECT_EQ(f.pairs[k].high, s.pairs[0].high);
    }
    EXPECT_GT(count_edges(s.edges), 0);
    EXPECT_EQ(s.edges.px, f.edges.px) << "step " << step;
  }
}

// Medina-Carnicer adapts to the content: on the standard photographs both sets choose several different
// pairs over the strips (with the x grid read at 0.01 steps, C_0.03 chose (0.03, 0.19) for every strip of
// every image; canny.h NUMBERS, the x grid). Skipped without GPUEC_SHARED_DIR/images/standard.
TEST(CannyModes, StripPairsFollowTheContent) {
  const char* dir = std::getenv("GPUEC_SHARED_DIR");
  if (!dir) GTEST_SKIP() << "skipped: GPUEC_SHARED_DIR not set";
  for (int step : {1, 3}) {
    SCOPED_TRACE(testing::Message() << "step " << step);
    std::set<std::pair<int, int>> pairs, lows;
    int images = 0;
    for (const char* name : {"barbara_512", "boat_512", "cameraman_512", "goldhill_512"}) {
      int w = 0, h = 0;
      std::vector<uint8_t> px;
      if (!canny_test::read_pgm(std::string(dir) + "/images/standard/" + name + ".pgm", &w, &h, &px)) continue;
      ++images;
      Image img(w, h);
      img.px = px;
      Result r = detect(img, strip_options(), step);
      ASSERT_EQ(r.status, canny::kOk);
      for (const ThresholdPair& p : r.pairs)
        if (p.found) pairs.insert({p.low, p.high}), lows.insert({p.low, 0});
    }
    if (images == 0) GTEST_SKIP() << "skipped: no standard images under " << dir;
    EXPECT_GE(pairs.size(), 3u);
    EXPECT_GE(lows.size(), 2u);
  }
}

TEST(CannyModes, Deterministic) {
  Image img = textured(77, 41, 3);
  Result a = detect(img, strip_options(1.3f), 1), b = detect(img, strip_options(1.3f), 1);
  EXPECT_EQ(a.edges.px, b.edges.px);
}

// ---------------------------------------------------------------- errors

TEST(CannyErrors, InvalidArgumentsAreRejected) {
  Image img(40, 10);
  auto cands = standard_set(3);
  Options ok;
  ok.candidates = cands.data();
  ok.n_candidates = int(cands.size());
  std::vector<uint8_t> edges(400);
  std::vector<ThresholdPair> pairs(2);
  std::vector<uint8_t> work(canny::workspace_bytes_ref(40, 10));
  auto run = [&](const uint8_t* src, int w, int h, int pitch, const Options& o, uint8_t* e, int ep,
                 ThresholdPair* p, void* wk, size_t wb) {
    return canny::detect_edges_ref(src, w, h, pitch, o, e, ep, p, wk, wb);
  };
  const uint8_t* s = img.px.data();
  uint8_t* e = edges.data();
  ThresholdPair* p = pairs.data();
  void* wk = work.data();
  const size_t wb = work.size();
  EXPECT_EQ(run(s, 40, 10, 40, ok, e, 40, p, wk, wb), canny::kOk);
  EXPECT_EQ(run(nullptr, 40, 10, 40, ok, e, 40, p, wk, wb), canny::kErrNull);
  EXPECT_EQ(run(s, 40, 10, 40, ok, nullptr, 40, p, wk, wb), canny::kErrNull);
  EXPECT_EQ(run(s, 40, 10, 40, ok, e, 40, nullptr, wk, wb), canny::kErrNull);
  EXPECT_EQ(run(s, 40, 10, 40, ok, e, 40, p, nullptr, wb), canny::kErrNull);
  EXPECT_EQ(run(s, 0, 10, 40, ok, e, 40, p, wk, wb), canny::kErrSize);
  EXPECT_EQ(run(s, 40, 0, 40, ok, e, 40, p, wk, wb), canny::kErrSize);
  EXPECT_EQ(run(s, -3, 10, 40, ok, e, 40, p, wk, wb), canny::kErrSize);
  EXPECT_EQ(run(s, canny::kMaxDim + 1, 1, canny::kMaxDim + 1, ok, e, 40, p, wk, wb), canny::kErrSize);
  EXPECT_EQ(run(s, 20000, 20000, 20000, ok, e, 20000, p, wk, wb), canny::kErrSize);
  EXPECT_EQ(run(s, 40, 10, 39, ok, e, 40, p, wk, wb), canny::kErrPitch);
  EXPECT_EQ(run(s, 40, 10, 40, ok, e, 39, p, wk, wb), canny::kErrPitch);
  EXPECT_EQ(run(s, 40, 10, 40, ok, e, 40, p, wk, wb - 1), canny::kErrWorkspace);
  EXPECT_EQ(canny::workspace_bytes_ref(0, 5), 0u);
  EXPECT_EQ(canny::workspace_bytes_ref(5, canny::kMaxDim + 1), 0u);
  for (float sg : {0.0f, 0.05f, 2.5f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                   std::numeric_limits<float>::infinity()}) {
    Options o = ok;
    o.sigma = sg;
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrSigma) << sg;
  }
  {
    Options o = ok;
    o.candidates = nullptr;
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrNull);
    o = ok;
    o.n_candidates = 0;
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrCandidates);
    o.n_candidates = canny::kMaxCandidates + 1;
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrCandidates);
    for (CandidatePair bad : {CandidatePair{5, 5}, CandidatePair{6, 5}, CandidatePair{0, 5}, CandidatePair{5, 101}}) {
      std::vector<CandidatePair> c = cands;
      c[7] = bad;
      o = ok;
      o.candidates = c.data();
      EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrCandidates);
    }
    o = ok;
    o.mode = ThresholdMode(7);
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrMode);
    o = ok;
    o.mode = ThresholdMode::kFixed;
    o.candidates = nullptr;  // not needed in fixed mode
    EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kOk);
    for (ThresholdPair bad : {ThresholdPair{0, 5, 1}, ThresholdPair{6, 5, 1}, ThresholdPair{5, 101, 1}}) {
      o.fixed = bad;
      EXPECT_EQ(run(s, 40, 10, 40, o, e, 40, p, wk, wb), canny::kErrThresholds);
    }
  }
  // Step functions: bad regions.
  std::vector<float> g(400);
  std::vector<uint32_t> sm(400);
  std::vector<uint8_t> mask(400);
  std::vector<int32_t> st(400);
  ThresholdPair out;
  auto sel = [&](int x0, int x1) {
    return canny::select_thresholds_ref(g.data(), 40, 40, 10, x0, x1, cands.data(), int(cands.size()), &out,
                                        sm.data(), mask.data(), st.data());
  };
  EXPECT_EQ(sel(0, 40), canny::kOk);
  EXPECT_EQ(sel(-1, 10), canny::kErrSize);
  EXPECT_EQ(sel(10, 10), canny::kErrSize);
  EXPECT_EQ(sel(30, 41), canny::kErrSize);
  EXPECT_EQ(canny::hysteresis_ref(g.data(), 40, 40, 10, 0, 40, 0, 5, e, 40, st.data()), canny::kErrThresholds);
  EXPECT_EQ(canny::hysteresis_ref(g.data(), 40, 40, 10, 0, 41, 1, 5, e, 40, st.data()), canny::kErrSize);
  EXPECT_EQ(canny::gradient_map_ref(s, 40, 10, 40, 3.0f, g.data(), 40, wk, wb), canny::kErrSigma);
  EXPECT_EQ(canny::gradient_map_ref(s, 40, 10, 40, 1.0f, g.data(), 39, wk, wb), canny::kErrPitch);
}

}  // namespace
