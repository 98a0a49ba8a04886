// The GUD-Canny CUDA twin (canny/canny_cuda.h) against its CPU twin detect_edges_ref, byte for byte: the edge
// map (with a canary in the pitch padding and in two rows after the last one), the pairs per strip (with a
// canary entry after the last strip), and gradient_map_cuda against gradient_map_ref (floats bit for bit).
// Workspace filled with garbage first. Images: steps at several angles, circles, noise, flat planes,
// random structure; tiny sizes, widths around the 32-column strips, pitches != width, every sigma of
// {0.1, 0.5, 1.0, 1.4, 2.0} (and 1.2: every radius of the taps inside the image), candidate sets C_0.01 and C_0.03, kStrip / kFrame / kFixed; the standard
// images (GPUEC_SHARED_DIR/images/standard/*.pgm, skipped when absent); 512x512 and 1920x1080 (kept small
// under compute-sanitizer). Seed: printed; set it with --seed=N or GPUEC_SEED=N.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "canary.h"
#include "dev_buf.h"
#include "pgm.h"
#include "gpu_test.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cuda.h"
#include "canny_images.h"
#include "clip.h"  // gpuec_sequences: JPEG luma and y4m frames
#include "gpu/device.h"

// The tests on the shared data (images, sequences) skip without a GPU or without GPUEC_SHARED_DIR; `dir`
// names the folder.
#define REQUIRE_GPU_AND_SHARED_DIR(dir)             \
  REQUIRE_GPU();                                    \
  const char* dir = std::getenv("GPUEC_SHARED_DIR"); \
  if (!dir) GTEST_SKIP() << "skipped: GPUEC_SHARED_DIR not set"

namespace {

using canny::CandidatePair;
using canny::Options;
using canny::ThresholdMode;
using canny::ThresholdPair;

using gpuec_test::kCanary;
constexpr int kCanaryRows = 2;
constexpr double kPi = 3.14159265358979323846;
const float kSigmas[] = {0.1f, 0.5f, 1.0f, 1.4f, 2.0f};

uint32_t test_seed() { return gpuec_test::test_seed("canny_cuda_test"); }
using gpuec_test::under_sanitizer;

using gpuec_test::DevBuf;

using canny_test::clamp255;
using canny_test::Image;
using canny_test::standard_set;

Image step_image(int w, int h, double angle_deg, uint8_t a, uint8_t b) {
  Image img(w, h);
  const double c = std::cos(angle_deg * kPi / 180), s = std::sin(angle_deg * kPi / 180);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = ((x - w / 2.0) * c + (y - h / 2.0) * s) >= 0 ? b : a;
  return img;
}

Image circles_image(int w, int h) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double r = std::hypot(x - w / 2.0 + 0.3, y - h / 2.0 - 0.2);
      img.at(x, y) = (int(r / 5.0) & 1) ? 200 : 40;
    }
  return img;
}

Image noise_image(int w, int h, std::mt19937& rng, int amp = 256) {
  Image img(w, h);
  for (auto& v : img.px) v = uint8_t(rng() % unsigned(amp));
  return img;
}

Image flat_image(int w, int h, uint8_t v) {
  Image img(w, h);
  std::fill(img.px.begin(), img.px.end(), v);
  return img;
}

// Random structure: shaded background, rectangles, discs, lines, mild noise.
Image structure_image(int w, int h, std::mt19937& rng) {
  Image img(w, h);
  canny_test::paint_structure(rng, img, 10, 30);
  return img;
}

// The top-left 96 x 64 pixels (at most) of img: what the sanitizer runs, which are about 100x slower, compare
// of the large images.
Image top_left(const Image& img) {
  Image crop(std::min(img.w, 96), std::min(img.h, 64));
  for (int y = 0; y < crop.h; ++y) std::memcpy(&crop.at(0, y), &img.px[size_t(y) * img.w], size_t(crop.w));
  return crop;
}

// Runs body(value) with the test hook `var` set to each of `values` in turn ("": the default rule), then unsets it.
template <class Body>
void for_each_hook(const char* var, std::initializer_list<const char*> values, Body body) {
  for (const char* value : values) {
    setenv(var, value, 1);
    SCOPED_TRACE(std::string(var) + "=" + value);
    body(value);
  }
  unsetenv(var);
}

struct Config {
  float sigma = 1.0f;
  ThresholdMode mode = ThresholdMode::kStrip;
  int step = 3;                        // candidate set (kStrip / kFrame)
  ThresholdPair fixed = {10, 20, 1};   // kFixed
  int src_pad = 0, edges_pad = 0;      // pitch - width
  std::vector<CandidatePair> custom;   // when not empty: this candidate list instead of the step's set
};

std::string describe(const Image& img, const Config& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%dx%d sigma %.1f mode %d step %d fixed (%d,%d) src_pad %d edges_pad %d", img.w,
                img.h, double(c.sigma), int(c.mode), c.step, c.fixed.low, c.fixed.high, c.src_pad, c.edges_pad);
  return buf;
}

// Runs both twins and compares. Returns false (after recording failures) when they differ.
bool compare(const Image& img, const Config& cfg, std::vector<ThresholdPair>* cpu_pairs = nullptr) {
  const std::string what = describe(img, cfg);
  SCOPED_TRACE(what);
  const int W = img.w, H = img.h, ns = canny::strip_count(W);
  std::vector<CandidatePair> cands = cfg.custom.empty() ? standard_set(cfg.step) : cfg.custom;
  Options opt;
  opt.sigma = cfg.sigma;
  opt.mode = cfg.mode;
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());
  opt.fixed = cfg.fixed;

  // CPU twin.
  std::vector<uint8_t> ref_edges(size_t(W) * H, 0);
  std::vector<ThresholdPair> ref_pairs(static_cast<size_t>(ns));
  std::vector<uint8_t> work(canny::workspace_bytes_ref(W, H));
  const int st = canny::detect_edges_ref(img.px.data(), W, H, W, opt, ref_edges.data(), W, ref_pairs.data(),
                                         work.data(), work.size());
  EXPECT_EQ(st, canny::kOk);
  if (st != canny::kOk) return false;
  if (cpu_pairs) *cpu_pairs = ref_pairs;

  // CUDA twin.
  const int sp = W + cfg.src_pad, ep = W + cfg.edges_pad;
  std::vector<uint8_t> src(size_t(sp) * H, 0x77);
  for (int y = 0; y < H; ++y) std::memcpy(&src[size_t(y) * sp], &img.px[size_t(y) * W], size_t(W));
  const size_t edges_bytes = size_t(ep) * (H + kCanaryRows);
  const size_t ws_bytes = canny::detect_edges_cuda_workspace_bytes(W, H);
  DevBuf<uint8_t> d_src(src.size()), d_edges(edges_bytes), d_ws(ws_bytes);
  DevBuf<ThresholdPair> d_pairs(size_t(ns) + 1);
  EXPECT_EQ(cudaMemcpy(d_src.p, src.data(), src.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_edges.p, kCanary, edges_bytes), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_pairs.p, kCanary, (size_t(ns) + 1) * sizeof(ThresholdPair)), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_ws.p, 0xCD, ws_bytes), cudaSuccess);
  const gpu::CudaError e = canny::detect_edges_cuda(d_src.p, W, H, sp, opt, d_edges.p, ep, d_pairs.p, d_ws.p,
                                                    ws_bytes, nullptr);
  EXPECT_FALSE(e) << e.str();
  if (e) return false;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> edges(edges_bytes);
  std::vector<ThresholdPair> pairs(size_t(ns) + 1);
  EXPECT_EQ(cudaMemcpy(edges.data(), d_edges.p, edges_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(pairs.data(), d_pairs.p, pairs.size() * sizeof(ThresholdPair), cudaMemcpyDeviceToHost),
            cudaSuccess);

  bool ok = true;
  for (int s = 0; s < ns && ok; ++s) {
    const ThresholdPair a = ref_pairs[size_t(s)], b = pairs[size_t(s)];
    if (a.low != b.low || a.high != b.high || a.found != b.found) {
      ADD_FAILURE() << "strip " << s << ": ref (" << a.low << "," << a.high << "," << a.found << ") cuda (" << b.low
                    << "," << b.high << "," << b.found << ")";
      ok = false;
    }
  }
  {
    const uint8_t* c = reinterpret_cast<const uint8_t*>(&pairs[size_t(ns)]);
    for (size_t i = 0; i < sizeof(ThresholdPair); ++i)
      if (c[i] != kCanary) {
        ADD_FAILURE() << "pairs written past strip_count";
        ok = false;
        break;
      }
  }
  int diffs = 0;
  for (int y = 0; y < H + kCanaryRows; ++y)
    for (int x = 0; x < ep; ++x) {
      const uint8_t got = edges[size_t(y) * ep + x];
      const uint8_t want = (y < H && x < W) ? ref_edges[size_t(y) * W + x] : kCanary;
      if (got != want) {
        if (++diffs <= 5)
          ADD_FAILURE() << "edge byte (" << x << "," << y << "): cuda " << int(got) << " want " << int(want)
                        << ((y < H && x < W) ? "" : " (canary)");
        ok = false;
      }
    }
  if (diffs > 5) ADD_FAILURE() << diffs << " differing bytes in all";
  return ok;
}

// compare() for both standard candidate sets (C_0.01, then C_0.03), the rest of cfg as given.
void compare_sets(const Image& img, Config cfg) {
  for (int step : {1, 3}) {
    cfg.step = step;
    compare(img, cfg);
  }
}

// gradient_map_cuda against gradient_map_ref, floats bit for bit, canary floats in the padding and after.
bool compare_gradient(const Image& img, float sigma, int g_pad) {
  Config cfg;
  cfg.sigma = sigma;
  SCOPED_TRACE(describe(img, cfg) + " g_pad " + std::to_string(g_pad));
  const int W = img.w, H = img.h, gp = W + g_pad;
  std::vector<float> ref(size_t(W) * H);
  std::vector<uint8_t> work(canny::workspace_bytes_ref(W, H));
  EXPECT_EQ(canny::gradient_map_ref(img.px.data(), W, H, W, sigma, ref.data(), W, work.data(), work.size()),
            canny::kOk);
  const size_t g_elems = size_t(gp) * (H + kCanaryRows);
  const size_t ws_bytes = canny::detect_edges_cuda_workspace_bytes(W, H);
  DevBuf<uint8_t> d_src(img.px.size()), d_ws(ws_bytes);
  DevBuf<float> d_g(g_elems);
  EXPECT_EQ(cudaMemcpy(d_src.p, img.px.data(), img.px.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_g.p, kCanary, g_elems * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_ws.p, 0xCD, ws_bytes), cudaSuccess);
  const gpu::CudaError e = canny::gradient_map_cuda(d_src.p, W, H, W, sigma, d_g.p, gp, d_ws.p, ws_bytes, nullptr);
  EXPECT_FALSE(e) << e.str();
  if (e) return false;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> got(g_elems);
  EXPECT_EQ(cudaMemcpy(got.data(), d_g.p, g_elems * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  int diffs = 0;
  for (int y = 0; y < H + kCanaryRows; ++y)
    for (int x = 0; x < gp; ++x) {
      uint32_t want = 0xA5A5A5A5u;
      if (y < H && x < W) std::memcpy(&want, &ref[size_t(y) * W + x], 4);
      if (got[size_t(y) * gp + x] != want && ++diffs <= 5)
        ADD_FAILURE() << "G (" << x << "," << y << "): cuda 0x" << std::hex << got[size_t(y) * gp + x] << " want 0x"
                      << want << std::dec;
    }
  if (diffs > 5) ADD_FAILURE() << diffs << " differing floats in all";
  return diffs == 0;
}

// Every mode / candidate set combination for one image and sigma.
void compare_all_modes(const Image& img, float sigma, int src_pad = 0, int edges_pad = 0) {
  for (int step : {1, 3})
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame}) {
      Config c;
      c.sigma = sigma;
      c.mode = mode;
      c.step = step;
      c.src_pad = src_pad;
      c.edges_pad = edges_pad;
      compare(img, c);
    }
  for (ThresholdPair f : {ThresholdPair{10, 20, 1}, ThresholdPair{5, 5, 1}, ThresholdPair{1, 100, 1}}) {
    Config c;
    c.sigma = sigma;
    c.mode = ThresholdMode::kFixed;
    c.fixed = f;
    c.src_pad = src_pad;
    c.edges_pad = edges_pad;
    compare(img, c);
  }
}

bool read_pgm(const std::string& path, Image* out) {
  int w = 0, h = 0;
  std::vector<uint8_t> px;
  if (!canny_test::read_pgm(path, &w, &h, &px)) return false;
  *out = Image(w, h);
  out->px = std::move(px);
  return true;
}

TEST(CannyCuda, TinySizes) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed());
  const int sizes[][2] = {{1, 1}, {5, 3}, {33, 7}, {2, 2}, {9, 1}, {1, 9}, {3, 40}};
  for (const auto& s : sizes)
    for (float sigma : {0.1f, 1.0f, 2.0f}) {
      compare_all_modes(noise_image(s[0], s[1], rng), sigma, 3, 5);
      compare_all_modes(step_image(s[0], s[1], 30, 20, 220), sigma);
      compare_gradient(noise_image(s[0], s[1], rng), sigma, 1);
    }
}

TEST(CannyCuda, StripWidthsAndPitches) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 1);
  for (int w : {31, 32, 33, 63, 64, 65, 97})
    for (int h : {17, 40})
      for (float sigma : kSigmas) {
        const int angle = int(rng() % 180);
        compare_all_modes(step_image(w, h, angle, 30, 200), sigma, w % 3, 1 + w % 5);
        compare_all_modes(circles_image(w, h), sigma);
        compare_all_modes(noise_image(w, h, rng), sigma, 7, 0);
        compare_gradient(circles_image(w, h), sigma, 3);
      }
}

TEST(CannyCuda, StepsAtAnglesAndCircles) {
  REQUIRE_GPU();
  for (int angle = 0; angle < 180; angle += 15)
    for (float sigma : kSigmas) {
      compare_all_modes(step_image(96, 64, angle, 10, 240), sigma);
      compare_gradient(step_image(96, 64, angle, 10, 240), sigma, 0);
    }
  for (float sigma : kSigmas) compare_all_modes(circles_image(130, 70), sigma, 2, 2);
}

// The front kernel's inside tiles (the whole halo in the image: 4-byte loads of the source, 4 columns of the
// horizontal pass a thread, the vertical pass down a column's segment in registers) at every radius of the taps
// (sigma 0.1, 0.5, 1.0, 1.2, 1.4, 2.0: R = 1 .. 6), the source rows at every alignment (pitches 203 and 206), for both
// tile heights: 203x171 has 16-row tiles (fewer than kFrontSmallTiles, 512, of 32 x 32), 1056x1000 32-row ones (1056).
TEST(CannyCuda, InsideTilesEveryRadius) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 4);
  for (float sigma : {0.1f, 0.5f, 1.0f, 1.2f, 1.4f, 2.0f}) {
    const Image img = structure_image(203, 171, rng);
    compare_gradient(img, sigma, 5);
    compare_all_modes(img, sigma, 3, 1);
    compare_gradient(structure_image(1056, 1000, rng), sigma, 3);
  }
}

TEST(CannyCuda, FlatAndLowContrast) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 2);
  for (uint8_t v : {uint8_t(0), uint8_t(128), uint8_t(255)}) compare_all_modes(flat_image(70, 33, v), 1.0f);
  for (float sigma : kSigmas) compare_all_modes(noise_image(70, 33, rng, 3), sigma);
}

TEST(CannyCuda, RandomStructureLarge) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 3);
  const bool small = under_sanitizer();
  const int sizes[][2] = {{512, 512}, {1920, 1080}};
  for (const auto& s : sizes) {
    const int w = small ? s[0] / 8 : s[0], h = small ? s[1] / 8 : s[1];
    const Image img = structure_image(w, h, rng);
    for (float sigma : {0.5f, 1.4f}) compare_all_modes(img, sigma, 16, 64);
    compare_gradient(img, 1.0f, 32);
  }
  // Taller than any cluster of blocks holds (8 x 720 rows): the tile path, labels in global memory.
  if (!small) {
    const Image tall = structure_image(40, 9000, rng);
    Config c;
    c.step = 3;
    compare(tall, c);
    c.mode = ThresholdMode::kFrame;
    compare(tall, c);
  }
}

TEST(CannyCuda, StandardImages) {
  REQUIRE_GPU_AND_SHARED_DIR(dir);
  const char* names[] = {"cameraman_256.pgm", "barbara_512.pgm", "boat_512.pgm", "peppers_512.pgm",
                         "fingerprint_512.pgm", "man_512.pgm"};
  int found = 0;
  for (const char* n : names) {
    Image img(1, 1);
    if (!read_pgm(std::string(dir) + "/images/standard/" + n, &img)) continue;
    ++found;
    SCOPED_TRACE(n);
    if (under_sanitizer()) img = top_left(img);
    for (float sigma : {1.0f, 1.4f}) compare_all_modes(img, sigma);
  }
  if (found == 0) GTEST_SKIP() << "skipped: no standard images under " << dir;
}

// Candidate lists other than the standard sets: many distinct lows (several label batches of the CUDA twin),
// duplicates (weights), highs up to 100, a single pair.
TEST(CannyCuda, CustomCandidateSets) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 4);
  const Image img = structure_image(under_sanitizer() ? 70 : 300, under_sanitizer() ? 40 : 200, rng);
  std::vector<std::vector<CandidatePair>> sets;
  sets.push_back({{7, 9}});
  std::vector<CandidatePair> wide;
  for (int low = 1; low < 100; low += 4) wide.push_back({uint8_t(low), uint8_t(std::min(100, low + 1 + int(rng() % 40)))});
  sets.push_back(wide);
  std::vector<CandidatePair> dup = standard_set(3);
  for (int k = 0; k < 20; ++k) dup.push_back(dup[rng() % dup.size()]);
  sets.push_back(dup);
  std::vector<CandidatePair> rnd;
  for (int k = 0; k < 200; ++k) {
    const int low = 1 + int(rng() % 60);
    rnd.push_back({uint8_t(low), uint8_t(low + 1 + int(rng() % 30))});
  }
  sets.push_back(rnd);
  std::vector<CandidatePair> all_lows;  // 99 distinct lows: more than the planes of component maxima
  for (int low = 1; low < 100; ++low) all_lows.push_back({uint8_t(low), uint8_t(low + 1)});
  sets.push_back(all_lows);
  std::vector<CandidatePair> every_pair;  // kMaxCandidates: SM up to 4950, the most its 16 bits a pixel hold
  for (int low = 1; low < 100; ++low)
    for (int high = low + 1; high <= 100; ++high) every_pair.push_back({uint8_t(low), uint8_t(high)});
  sets.push_back(every_pair);
  for (const auto& set : sets)
    for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame}) {
      Config c;
      c.mode = mode;
      c.custom = set;
      compare(img, c);
    }
}

// A set of two lows (1 and 2) with highs 3 to 60: more grid values than the standard sets' lows, so that picks
// fall on grid values that are not lows (the strip path's and the tile path's final passes label again).
std::vector<CandidatePair> two_lows_set() {
  std::vector<CandidatePair> set;
  for (int high = 3; high <= 60; ++high) set.push_back({1, uint8_t(high)}), set.push_back({2, uint8_t(high)});
  return set;
}

// The three ways the strip-mode final pass writes the map (canny.cu, strip_final_kernel): low == high (a
// plain threshold), a low of the candidate set (the counting pass's component maxima), and a low that is
// only a high of the set (labelled again). Which one a strip takes follows from its pair, so the CPU twin's
// pairs show that each way was compared. Sets: C_0.03, C_0.01 and lows {0.01, 0.02} with highs 0.03..0.60.
TEST(CannyCuda, StripFinalPassPaths) {
  REQUIRE_GPU_AND_SHARED_DIR(dir);
  const std::vector<CandidatePair> few_lows = two_lows_set();
  int equal = 0, planes = 0, relabel = 0, found = 0;
  // The final pass's labelling with its lists of pixels of S and without (GPUEC_CANNY_LIST_CAP=0: the search).
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"", "0"}, [&](const char*) {
    for (const char* n : {"barbara_512.pgm", "cameraman_512.pgm", "boat_512.pgm"}) {
      Image img(1, 1);
      if (!read_pgm(std::string(dir) + "/images/standard/" + n, &img)) continue;
      ++found;
      SCOPED_TRACE(n);
      if (under_sanitizer()) img = top_left(img);
      for (int set = 0; set < 3; ++set) {
        Config c;
        if (set < 2) c.step = set == 0 ? 3 : 1;
        else c.custom = few_lows;
        const std::vector<CandidatePair> cands = c.custom.empty() ? standard_set(c.step) : c.custom;
        std::vector<ThresholdPair> pairs;
        if (!compare(img, c, &pairs)) continue;
        for (const ThresholdPair& p : pairs) {
          bool is_low = false;
          for (const CandidatePair& cp : cands) is_low = is_low || cp.low == p.low;
          if (p.low == p.high) ++equal;
          else if (is_low) ++planes;
          else ++relabel;
        }
      }
    }
  });
  if (found == 0) GTEST_SKIP() << "skipped: no standard images under " << dir;
  if (under_sanitizer()) return;  // the crops need not reach every path
  EXPECT_GT(equal, 0);
  EXPECT_GT(planes, 0);
  EXPECT_GT(relabel, 0);
}

// The tile path's final pass (canny.cu, CclParams::kept): the map of a region whose pair has low == high needs no
// labels; one whose low is in the last batch of lows reads that batch's label planes; any other is labelled again.
// The batches take the lows in decreasing order, 8 a batch up to 4 Mpixels (4 up to 16), the first one the
// remainder, so the kept lows are the smallest min(8, lows) ones. Which way a region went follows from the CPU
// twin's pairs: frame mode on several images and sets, and strip mode on strips too tall for the shared-memory
// paths (the tile path), must each reach the kept and the relabelled ways.
TEST(CannyCuda, TileFinalPassPaths) {
  REQUIRE_GPU_AND_SHARED_DIR(dir);
  setenv("GPUEC_CANNY_FRAME_JOINED", "0", 1);  // frame mode on the tile path at every size (FrameJoined)
  std::mt19937 rng(test_seed() + 12);
  const bool small = under_sanitizer();
  std::vector<std::vector<CandidatePair>> sets = {standard_set(1), standard_set(3)};
  const std::vector<CandidatePair> few_lows = two_lows_set();
  std::vector<CandidatePair> nine_lows;
  for (int low = 1; low <= 9; ++low)
    for (int high = low + 1; high <= low + 20; ++high) nine_lows.push_back({uint8_t(low), uint8_t(high)});
  sets.push_back(few_lows);
  sets.push_back(nine_lows);
  sets.push_back({{2, 10}, {5, 20}, {5, 30}});
  int kept = 0, relabel = 0, equal = 0;
  auto tally = [&](const std::vector<CandidatePair>& set, const std::vector<ThresholdPair>& pairs, int w, int h) {
    std::vector<int> lows;
    for (const CandidatePair& cp : set)
      if (std::find(lows.begin(), lows.end(), int(cp.low)) == lows.end()) lows.push_back(cp.low);
    std::sort(lows.begin(), lows.end());
    const int64_t n = int64_t(w) * h;
    const size_t per_batch = n <= (int64_t(1) << 22) ? 8 : (n <= (int64_t(1) << 24) ? 4 : 1);
    lows.resize(std::min(lows.size(), per_batch));  // the kept batch: the smallest lows
    for (const ThresholdPair& p : pairs) {
      if (p.low == p.high) ++equal;
      else if (std::find(lows.begin(), lows.end(), p.low) != lows.end()) ++kept;
      else ++relabel;
    }
  };
  std::vector<Image> images;
  for (const char* n : {"barbara_512.pgm", "boat_512.pgm", "cameraman_512.pgm"}) {
    Image img(1, 1);
    if (read_pgm(std::string(dir) + "/images/standard/" + n, &img)) images.push_back(small ? top_left(img) : img);
  }
  images.push_back(structure_image(small ? 70 : 300, small ? 40 : 200, rng));
  for (const Image& img : images)
    for (const auto& set : sets) {
      Config c;
      c.mode = ThresholdMode::kFrame;
      c.custom = set;
      std::vector<ThresholdPair> pairs;
      if (compare(img, c, &pairs)) tally(set, {pairs[0]}, img.w, img.h);
    }
  if (!small) {  // strips of 5800 rows: beyond the shared-memory paths (8 x 720 rows at most), so the tile path
    const Image tall = structure_image(96, 5800, rng);
    for (const auto& set : {few_lows, nine_lows, standard_set(1)}) {
      Config c;
      c.custom = set;
      std::vector<ThresholdPair> pairs;
      if (compare(tall, c, &pairs)) tally(set, pairs, tall.w, tall.h);
    }
  }
  unsetenv("GPUEC_CANNY_FRAME_JOINED");
  if (small) return;  // the crops need not reach every way
  EXPECT_GT(kept, 0);
  EXPECT_GT(relabel, 0);
  std::printf("tile final pass: %d kept, %d labelled again, %d low == high\n", kept, relabel, equal);
}

// Heights around the CUDA twin's limits: 256 rows (48 KB of shared memory per strip, the default limit),
// 1184 (the largest strip one block keeps in shared memory) and 1185 (a cluster of blocks on sm_90, else the
// tile path).
TEST(CannyCuda, HeightsAroundSharedMemoryLimits) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 5);
  for (int h : {255, 256, 257, 1184, 1185}) {
    if (under_sanitizer() && h > 257) continue;
    const Image img = structure_image(70, h, rng);
    compare_sets(img, Config{});
  }
}

// Every labelling kernel (strips, clusters, tiles, the final pass) lists each warp's pixels of S in the shared
// memory the labels and codes leave (on an H100 or H200 over 80 % of a warp's pixels at 1080 rows, 56 % at 1184,
// 82 % in a cluster's block of 540 rows, about half in a tile of 602 rows or in the final pass, where NMS keeps at
// most about 40 %); a chunk whose pixels of S overflow its list is searched in its rows' masks instead. Noise
// keeps many pixels through NMS, and C_0.01's lowest low puts nearly all of them in S. The test hook
// GPUEC_CANNY_LIST_CAP caps the lists: 0 (no lists: every chunk searched) and 96 (most chunks of the lower lows
// overflow, those of the higher ones fit), then the device's own; strip and frame mode (StripFinalPassPaths: the
// final pass with and without lists).
TEST(CannyCuda, DenseSetsAndTheLists) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 17);
  const bool small = under_sanitizer();
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"0", "96", ""}, [&](const char*) {
    for (int h : {256, 1080, 1184, 2160}) {
      if (small && h != 1184) continue;
      // 1080 rows: 9 strips, so that C_0.01's 216 (strip, low) blocks outnumber the multiprocessors and the
      // counting pass is strip_count_listed_kernel's (the union-find over the lists); with a cap of 96 its lists
      // overflow and strip_count_redo_kernel labels those pairs.
      const Image img = noise_image(small ? 40 : h == 1080 ? 288 : 70, h, rng);
      for (float sigma : {0.5f, 1.0f}) {
        Config c;
        c.step = 1;
        c.sigma = sigma;
        compare(img, c);
        c.mode = ThresholdMode::kFrame;
        compare(img, c);
      }
    }
  });
  // 99 lows: four batches of the listed kernel (32 lows a launch; 1080 rows, 9 strips), each with its own overflows
  // and redo: a batch's redo must take its own marks only (LayersOf::tag). (The listed clusters never take more than
  // one batch: more than 32 lows leave some low without a plane of maxima, and such sets take the tile path.)
  // Caps of 32 and 256 entries a warp: the lower lows overflow, higher batches' pairs whose indices an earlier batch
  // marked do not. (Before the tags this case passed too: the picks did not move with those pairs counted twice.)
  std::vector<CandidatePair> all_lows;  // ten highs a low: SM (and the picks) move with every pair counted twice
  for (int low = 1; low < 100; ++low)
    for (int high = low + 1; high <= std::min(100, low + 10); ++high)
      all_lows.push_back({uint8_t(low), uint8_t(high)});
  const Image dense = noise_image(288, 1080, rng);
  if (small) return;
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"32", "256"}, [&](const char*) {
    Config c;
    c.custom = all_lows;
    SCOPED_TRACE("99 lows");
    compare(dense, c);
  });
}

// The tile path (frame mode) cuts the frame into tiles of 32 columns and as many rows as two blocks of a
// multiprocessor hold: 602 rows on an H100 or H200 (228 KB of shared memory per SM), so one tile up to 602
// rows, then equal parts (2 x 602, 3 x 602, ...). Heights around those part boundaries, widths of whole and
// partial strips, both candidate sets: the tiles' first rows and columns join across tiles, and a component
// may cross several of them. From 603 rows up to the rows one block holds with a label a pixel (1184) a strip is one
// tile over the lists instead (ccl_tile_listed_kernel: 603 here; DenseSetsAndTheLists at 1080 and 1184 rows with its
// overflows).
TEST(CannyCuda, TilePathPartBoundaries) {
  REQUIRE_GPU();
  setenv("GPUEC_CANNY_FRAME_JOINED", "0", 1);  // frames up to 1184 rows on the tile path (FrameJoined)
  std::mt19937 rng(test_seed() + 13);
  const bool small = under_sanitizer();
  for (int h : {601, 602, 603, 1204, 1205, 1807}) {
    if (small && h != 603 && h != 1205) continue;
    for (int w : {70, 96}) {
      if (small && w != 70) continue;
      const Image img = structure_image(w, h, rng);
      Config c;
      c.mode = ThresholdMode::kFrame;
      compare_sets(img, c);
      Config f;  // the fixed pair's map: the tile path's one labelling
      f.mode = ThresholdMode::kFixed;
      compare(img, f);
    }
  }
  unsetenv("GPUEC_CANNY_FRAME_JOINED");
}

// Frame mode where one block holds a strip (frame_count_joined_kernel: a block per strip and low labels its strip in
// shared memory, the strips of a low joined over their border pixels in global memory (a strip's merges once its left
// neighbour has published its border, then barriers of the low's blocks); a launch takes the lows whose blocks the
// device holds at once, at most kJoinedLaunches launches, 2): widths of 1 strip to 135, whole and partial, heights of 1
// to 1184 rows and 1185 (the tile path); C_0.01 at 512x512 (16 of its 24 lows a launch, two launches on an H100 or
// H200); with GPUEC_CANNY_FRAME_JOINED=8, up to 8 launches (1080p: 4 launches of 2 lows for C_0.03; 132 and 135 strips:
// 2 and 1 lows a launch), which the default leaves to the tile path. Noise (components across many borders) and random
// structure, both candidate sets, with the warps' lists (GPUEC_CANNY_LIST_CAP: none, overflowing, the device's).
TEST(CannyCuda, FrameJoined) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 23);
  const bool small = under_sanitizer();
  struct Size {
    int w, h;
    const char* launches;  // GPUEC_CANNY_FRAME_JOINED ("": unset)
  };
  const Size sizes[] = {{1, 1, ""},       {31, 7, ""},     {32, 64, ""},     {33, 33, ""},      {96, 300, ""},
                        {64, 300, ""},    {95, 512, ""},   {250, 257, ""},   {256, 256, ""},    {256, 1100, ""},
                        {64, 1184, ""},   {257, 100, ""},  {200, 1185, ""},  {288, 33, ""},     {480, 360, ""},
                        {512, 512, ""},   {513, 64, ""},   {1000, 1, ""},    {999, 1184, "8"},  {1920, 1080, "8"},
                        {4200, 30, "8"},  {4300, 20, "8"}, {600, 1185, "8"}};
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"0", "96", ""}, [&](const char* cap) {
    for (const Size& z : sizes) {
      if (small && (z.w * z.h > 40000 || *cap)) continue;
      if (z.w * z.h > 500000 && *cap) continue;  // the lists' other paths: on the smaller frames
      if (*z.launches) setenv("GPUEC_CANNY_FRAME_JOINED", z.launches, 1);
      for (bool noise : {false, true}) {
        const Image img = noise ? noise_image(z.w, z.h, rng) : structure_image(z.w, z.h, rng);
        Config c;
        c.mode = ThresholdMode::kFrame;
        SCOPED_TRACE(std::string(noise ? "noise" : "structure") + " GPUEC_CANNY_FRAME_JOINED=" + z.launches);
        compare_sets(img, c);
      }
      unsetenv("GPUEC_CANNY_FRAME_JOINED");
    }
  });
}

// Frame mode in split passes (frame_split_label_kernel .. frame_split_finish_kernel: 1080p and 2160p, where a label a
// pixel leaves one block a multiprocessor), forced by GPUEC_CANNY_FRAME_SPLIT=N (at most N lows a batch: one batch and
// several) on 9 strips of 1080 rows, a partial last strip, 700 and 1088 rows (a tile a strip: about the most the lists
// allow), 2 strips; tiles: 1185 rows (2 of 593), 1200 rows of 2 strips, 2160 rows (2 of 1080), 2201 rows (3, the last
// shorter); 1920x1080. With the hook set the call fails where the split passes cannot run, so every case is known to
// take them. Both candidate sets, structure and noise, the device's lists and lists of 96 entries (the noise overflows
// them: those blocks label a label a pixel in global memory and publish from there).
TEST(CannyCuda, FrameSplit) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 29);
  const bool small = under_sanitizer();
  struct Size {
    int w, h;
    const char* force;
  };
  const Size sizes[] = {{288, 1080, "3"}, {280, 1080, "32"}, {96, 700, "1"},  {64, 1088, "2"},   {64, 1185, "3"},
                        {33, 1200, "2"},  {96, 2160, "8"},   {64, 2201, "32"}, {1920, 1080, "32"}};
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"", "96"}, [&](const char* cap) {
    for (const Size& z : sizes) {
      if (small && z.w * z.h > 70000) continue;
      if (z.force) setenv("GPUEC_CANNY_FRAME_SPLIT", z.force, 1);
      for (bool noise : {false, true}) {
        if (small && noise != (*cap != '\0')) continue;
        const Image img = noise ? noise_image(z.w, z.h, rng) : structure_image(z.w, z.h, rng);
        for (int step : {1, 3}) {
          if (small && step != 3) continue;
          Config c;
          c.mode = ThresholdMode::kFrame;
          c.step = step;
          SCOPED_TRACE(std::string(noise ? "noise" : "structure") +
                       (z.force ? std::string(" GPUEC_CANNY_FRAME_SPLIT=") + z.force : std::string()) + " " +
                       std::to_string(z.w) + "x" + std::to_string(z.h) + " step " + std::to_string(step));
          compare(img, c);
        }
      }
      unsetenv("GPUEC_CANNY_FRAME_SPLIT");
    }
  });
}

// Strips taller than one block's shared memory (1185 rows and more) are labelled by a cluster of K blocks, one
// union-find over their distributed shared memory (sm_90): the rows split evenly, at most cluster_rows a block
// (601 on an H100 or H200: two blocks a multiprocessor), up to 8 blocks (4808 rows there); taller ones, and
// sets whose pair may need labelling again, take the tile path. Heights around those block counts (1202 / 1203:
// 2 / 3 blocks; 4808 / 4809: 8 blocks / the tile path), both candidate sets; a custom set with a grid value
// that is not a low (no plane of maxima for it).
TEST(CannyCuda, TallStripsInClusters) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 11);
  const bool small = under_sanitizer();
  for (int h : {1185, 1202, 1203, 1537, 2049, 2160, 4096, 4808, 4809}) {
    if (small && h != 1185 && h != 2049) continue;
    // Width 96: whole strips, rows of 16-byte loads; 70 (a partial strip, scalar loads) at one height.
    const Image img = structure_image(small ? 40 : (h == 2160 ? 70 : 96), h, rng);
    compare_sets(img, Config{});
  }
  const Image img = structure_image(40, 1300, rng);
  Config c;
  c.custom = {{2, 10}, {5, 20}, {5, 30}};
  compare(img, c);
}

// select_kernel's blocks by size (detect_edges_cuda): twice kSelectPixels on strips of 2048 rows or more
// (kSelectTallBlocks) where the frame is not small (2^20 pixels or more; the other tall-strip tests are narrow, small
// frames, which take half): 520 x 2049 (17 strips, the last partial) and 512 x 2048 (the bounds of both rules), both
// sets.
TEST(CannyCuda, TallStripsSelectBlocks) {
  REQUIRE_GPU();
  if (under_sanitizer()) GTEST_SKIP() << "a megapixel frame a config: the sanitizer runs in docs/benchmarks.md";
  std::mt19937 rng(test_seed() + 23);
  for (const auto& [w, h] : {std::pair<int, int>{520, 2049}, std::pair<int, int>{512, 2048}}) {
    const Image img = structure_image(w, h, rng);
    compare_sets(img, Config{});
  }
}

// Strip mode's histograms, pairs and map in one launch of clusters, a strip's blocks a cluster
// (select_map_cluster_kernel), against select_kernel and strip_edges_kernel: GPUEC_CANNY_SELECT_CLUSTERS=1 takes the
// clusters wherever they can run (1 to 8 blocks a strip: 33 x 7, 256 x 256, 70 x 511 with a partial strip and an output
// pitch, 512 x 512; 1080p over the lists; 520 x 2049, strips labelled in clusters, the last partial), =0 never; both
// sets, and the default rule. The two large frames run with =1 alone: =0 and the default rule take select_kernel there,
// which StandardImages, RandomStructureLarge and TallStripsSelectBlocks already compare.
TEST(CannyCuda, SelectClusters) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 29);
  const bool small = under_sanitizer();
  for_each_hook("GPUEC_CANNY_SELECT_CLUSTERS", {"1", "0", ""}, [&](const char* hook) {
    for (const auto& [w, h] : {std::pair<int, int>{33, 7}, std::pair<int, int>{256, 256}, std::pair<int, int>{70, 511},
                               std::pair<int, int>{512, 512}, std::pair<int, int>{1920, 1080},
                               std::pair<int, int>{520, 2049}}) {
      if (w * h > 300000 && (small || *hook != '1')) continue;
      const Image img = structure_image(w, h, rng);
      Config c;
      c.edges_pad = w == 70 ? 5 : 0;
      compare_sets(img, c);
    }
  });
}

// select_kernel reading G before its wait (select_kernel<true>): GPUEC_CANNY_SELECT_PREFETCH=1 at every size, =0 never,
// and the default rule (strips up to 2^19 pixels, frames up to 2^20), in strip mode with the clusters off (so that
// select_kernel runs) and in frame mode, where a block's region spans the frame's width (pieces of several chunks a
// row): 33 x 7, 256 x 256, 70 x 511 with an output pitch, 640 x 480 (not under a sanitizer); 1920 x 1080 with =1 alone
// (=0 and the rule take select_kernel<false> there, as RandomStructureLarge compares); both sets. At every size run,
// the rule takes select_kernel<true> as =1 does (its host path is what "" adds). select_map_cluster_kernel always reads
// before its wait: SelectClusters.
TEST(CannyCuda, SelectPrefetch) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 31);
  const bool small = under_sanitizer();
  setenv("GPUEC_CANNY_SELECT_CLUSTERS", "0", 1);
  for_each_hook("GPUEC_CANNY_SELECT_PREFETCH", {"1", "0", ""}, [&](const char* hook) {
    for (const auto& [w, h] : {std::pair<int, int>{33, 7}, std::pair<int, int>{256, 256}, std::pair<int, int>{70, 511},
                               std::pair<int, int>{640, 480}, std::pair<int, int>{1920, 1080}}) {
      if (w * h > 300000 && (small || (w == 1920 && *hook != '1'))) continue;
      const Image img = structure_image(w, h, rng);
      for (ThresholdMode mode : {ThresholdMode::kStrip, ThresholdMode::kFrame}) {
        Config c;
        c.mode = mode;
        c.edges_pad = w == 70 ? 5 : 0;
        compare_sets(img, c);
      }
    }
  });
  unsetenv("GPUEC_CANNY_SELECT_CLUSTERS");
}

// Strips taller than one block holds, over the lists in clusters (strip_count_listed_cluster_kernel: K blocks of a
// code byte a pixel and the warps' lists, two blocks a multiprocessor; on an H100 or H200 two blocks up to about 2380
// rows, three up to about 3500, four up to about 3640, the cluster's entries below 0xff00), where the (strip, low)
// pairs' blocks outnumber the multiprocessors: C_0.01's 24 lows on 3 strips. GPUEC_CANNY_LIST_CAP=96 makes the lists of
// the noise overflow: strip_count_cluster_kernel labels those pairs again (its redo loop over the marks).
TEST(CannyCuda, TallStripsOverTheLists) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 19);
  const bool small = under_sanitizer();
  for_each_hook("GPUEC_CANNY_LIST_CAP", {"96", ""}, [&](const char*) {
    for (int h : {1185, 2160, 2400, 3600}) {
      if (small && h != 1185) continue;
      for (bool noise : {false, true}) {
        const Image img = noise ? noise_image(96, h, rng) : structure_image(96, h, rng);
        Config c;
        c.step = 1;
        SCOPED_TRACE("h=" + std::to_string(h) + (noise ? " noise" : ""));
        compare(img, c);
      }
    }
  });
}

// The join of a listed cluster's blocks (strip_count_listed_cluster_kernel) where the block above has a warp without
// rows: 1537 rows are two blocks of 769, chunks of 25 rows, so warp 31 of the first block has none and its last row
// is warp 30's. Until the join took that warp's row, the first block's last row (768) and the second's first (769)
// were never joined there. Heights 1537, 1540 and 1603 (blocks of 769, 770 and 802 rows: an empty last warp each),
// C_0.01 on three strips (72 pairs, so the listed clusters run). Random structure with a flat bar in each strip
// (columns 2 to 29) holding a vertical step edge whose contrast is low (20, 28 and 36 grey levels) down to the join
// and then grows by 2 a row up to 210: the CPU twin's edge maps then hold, in 7 of the 9 strips, 56 to 838 pixels above
// the join that are edges only through their link across it. Then the image of the random run that found the bug
// (seed 1664857951 of TallStripsInClusters).
TEST(CannyCuda, ListedClusterJoins) {
  REQUIRE_GPU();
  const bool small = under_sanitizer();  // there the first image alone
  for (int h : {1537, 1540, 1603}) {
    const int join = (h + 1) / 2;  // the second block's first row
    std::mt19937 rng{uint32_t(h)};
    Image img = structure_image(96, h, rng);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < 96; ++x) {
        const int xs = x % 32, weak = 20 + 8 * (x / 32);
        const int step = y < join ? weak : std::min(210, weak + 2 * (y - join));
        if (xs >= 2 && xs < 30) img.at(x, y) = uint8_t(std::min(255, 40 + (xs >= 16 ? step : 0) + int(rng() % 3)));
      }
    Config c;
    c.step = 1;
    SCOPED_TRACE("bars, h=" + std::to_string(h));
    compare(img, c);
    if (small) return;
  }
  std::mt19937 rng(1664857951u + 11);  // TallStripsInClusters' images up to its 1537 rows
  for (int h : {1185, 1202, 1203}) structure_image(96, h, rng);
  Config c;
  c.step = 1;
  SCOPED_TRACE("TallStripsInClusters, seed 1664857951, h=1537");
  compare(structure_image(96, 1537, rng), c);
}

// The BSDS500 test subset (GPUEC_SHARED_DIR/images/bsds500_subset/images/*.jpg, luma of the JPEG): both
// candidate sets in strip and frame mode.
TEST(CannyCuda, Bsds500Subset) {
  REQUIRE_GPU_AND_SHARED_DIR(dir);
  const std::string folder = std::string(dir) + "/images/bsds500_subset/images";
  std::vector<std::string> files;
  if (std::FILE* m = std::fopen((std::string(dir) + "/images/bsds500_subset/MANIFEST.tsv").c_str(), "r")) {
    char line[1024];
    while (std::fgets(line, sizeof line, m)) {
      const std::string l(line);
      if (l.compare(0, 7, "images/") == 0) files.push_back(l.substr(7, l.find('\t') - 7));
    }
    std::fclose(m);
  }
  if (files.empty()) GTEST_SKIP() << "skipped: no BSDS500 subset under " << dir;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    Image img(1, 1);
    try {
      img.px = gpuec::clip::jpeg_luma(folder + "/" + f, &img.w, &img.h);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    if (under_sanitizer()) img = top_left(img);
    compare_all_modes(img, 1.0f, 5, 3);
    if (under_sanitizer()) break;
  }
}

// Frames of the shared sequences (GPUEC_SHARED_DIR/sequences/*.y4m.xz, the luma plane of frames 0 and 20).
TEST(CannyCuda, SequenceFrames) {
  REQUIRE_GPU_AND_SHARED_DIR(dir);
  int found = 0;
  for (const char* name : {"foreman_qcif.y4m.xz", "foreman_cif.y4m.xz", "suzie_cif.y4m.xz"}) {
    const std::string path = std::string(dir) + "/sequences/" + name;
    std::FILE* probe = std::fopen(path.c_str(), "rb");
    if (!probe) continue;
    std::fclose(probe);
    ++found;
    SCOPED_TRACE(name);
    std::vector<Image> frames;
    try {
      const gpuec::clip::LocalClip clip = gpuec::clip::probe_local_clip(path);
      const size_t luma = size_t(clip.width) * clip.height;
      long piece = 0;
      gpuec::clip::copy_y4m(path, 21, [&](const void* data, size_t size) {
        // piece 0: header; 2k + 1: FRAME line of frame k; 2k + 2: data of frame k
        if ((piece == 2 || piece == 42) && size >= luma) {
          Image im(clip.width, clip.height);
          std::memcpy(im.px.data(), data, luma);
          frames.push_back(std::move(im));
        }
        ++piece;
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(frames.size(), 2u);
    for (const Image& img : frames) {
      if (under_sanitizer()) {
        compare_all_modes(top_left(img), 1.0f);
        break;
      }
      compare_all_modes(img, 1.0f);
    }
  }
  if (found == 0) GTEST_SKIP() << "skipped: no sequences under " << dir;
}

TEST(CannyCuda, ArgumentErrors) {
  REQUIRE_GPU();
  const int W = 40, H = 20;
  const size_t ws_bytes = canny::detect_edges_cuda_workspace_bytes(W, H);
  ASSERT_GT(ws_bytes, 0u);
  EXPECT_EQ(canny::detect_edges_cuda_workspace_bytes(0, 5), 0u);
  DevBuf<uint8_t> src(size_t(W) * H), edges(size_t(W) * H), ws(ws_bytes + 256);
  DevBuf<ThresholdPair> pairs(2);
  std::vector<CandidatePair> cands = standard_set(3);
  Options opt;
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());
  auto run = [&](const Options& o, int pitch, int ep, void* w, size_t wb) {
    return canny::detect_edges_cuda(src.p, W, H, pitch, o, edges.p, ep, pairs.p, w, wb, nullptr).code;
  };
  const int inval = int(cudaErrorInvalidValue);
  EXPECT_EQ(run(opt, W, W, ws.p, ws_bytes), 0);
  EXPECT_EQ(run(opt, W - 1, W, ws.p, ws_bytes), inval);
  EXPECT_EQ(run(opt, W, W - 1, ws.p, ws_bytes), inval);
  EXPECT_EQ(run(opt, W, W, ws.p, ws_bytes - 1), inval);
  EXPECT_EQ(run(opt, W, W, ws.p + 16, ws_bytes), inval);
  EXPECT_EQ(run(opt, W, W, nullptr, ws_bytes), inval);
  Options o = opt;
  o.sigma = 0.05f;
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  o.sigma = std::nanf("");
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  o = opt;
  o.mode = static_cast<ThresholdMode>(7);
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  o = opt;
  o.n_candidates = 0;
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  CandidatePair bad[1] = {{5, 5}};
  o.candidates = bad;
  o.n_candidates = 1;
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  o = opt;
  o.mode = ThresholdMode::kFixed;
  o.fixed = ThresholdPair{30, 20, 1};
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), inval);
  o.fixed = ThresholdPair{20, 20, 1};
  EXPECT_EQ(run(o, W, W, ws.p, ws_bytes), 0);
  EXPECT_EQ(canny::detect_edges_cuda(src.p, 0, H, W, opt, edges.p, W, pairs.p, ws.p, ws_bytes, nullptr).code, inval);
  EXPECT_EQ(canny::detect_edges_cuda(nullptr, W, H, W, opt, edges.p, W, pairs.p, ws.p, ws_bytes, nullptr).code, inval);
  DevBuf<float> g(size_t(W) * H);
  EXPECT_EQ(canny::gradient_map_cuda(src.p, W, H, W, 3.0f, g.p, W, ws.p, ws_bytes, nullptr).code, inval);
  EXPECT_EQ(canny::gradient_map_cuda(src.p, W, H, W, 1.0f, g.p, W - 1, ws.p, ws_bytes, nullptr).code, inval);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
