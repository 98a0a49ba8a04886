// The canny pairs of gpuec-bitexact: steps 1-3 (gradient_map_ref / gradient_map_cuda, floats bit for bit) and the
// whole detector (detect_edges_ref / detect_edges_cuda: edge map and the pair of every strip) in its three
// threshold modes. The oracle is canny/canny.h's NUMBERS section written out plainly here: Gaussian taps from
// their definition, the two integer passes, central differences, NMS with interpolation, hysteresis as the fixed
// point of growing the HIGH set through UNSTABLE 8-neighbours, and Medina-Carnicer's search from its definition
// (SM by running every candidate pair's hysteresis, the grid bins, the instability zone, local maxima).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "canny/canny.h"
#include "canny_images.h"
#include "harness.h"

#if defined(GPUEC_HAVE_CUDA)
#include "canny/canny_cuda.h"
#include "device_buffer.h"
#endif

namespace bitexact {
namespace {

using canny::CandidatePair;
using canny::ThresholdMode;
using canny::ThresholdPair;
constexpr double kPi = 3.14159265358979323846;

using canny_test::clamp255;
using canny_test::Image;
using canny_test::paint_structure;
using canny_test::standard_set;

enum class Content { kStructure, kStep, kCircles, kNoise, kFlat, kMax };
constexpr Kind<Content> kContents[] = {
    {Content::kStructure, "random structure"}, {Content::kStep, "step edge"}, {Content::kCircles, "circles"},
    {Content::kNoise, "noise"}, {Content::kFlat, "flat"}, {Content::kMax, "all-255 with a dark block"},
};

Image make_image(std::mt19937& rng, int w, int h, Content c) {
  Image img(w, h);
  std::uniform_real_distribution<double> u(0, 1);
  switch (c) {
    case Content::kStep: {
      const double a = u(rng) * 2 * kPi, cs = std::cos(a), sn = std::sin(a);
      const uint8_t lo = uint8_t(rng() % 128), hi = uint8_t(128 + rng() % 128);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img.at(x, y) = ((x - w / 2.0) * cs + (y - h / 2.0) * sn) >= 0 ? hi : lo;
      break;
    }
    case Content::kCircles:
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img.at(x, y) = (int(std::hypot(x - w / 2.0 + 0.3, y - h / 2.0 - 0.2) / 5.0) & 1) ? 200 : 40;
      break;
    case Content::kNoise: {
      const unsigned amp = 1 + rng() % 256;
      for (auto& v : img.px) v = uint8_t(rng() % amp);
      break;
    }
    case Content::kFlat: std::fill(img.px.begin(), img.px.end(), uint8_t(rng())); break;
    case Content::kMax:
      std::fill(img.px.begin(), img.px.end(), 255);
      for (int y = h / 3; y < 2 * h / 3; ++y)
        for (int x = w / 3; x < 2 * w / 3; ++x) img.at(x, y) = 0;
      break;
    case Content::kStructure:
      paint_structure(rng, img, 5, 20);
      break;
  }
  return img;
}

// ---------------------------------------------------------------- the plain definitions

// Taps from their definition (canny/canny.h NUMBERS, Gaussian).
int plain_taps(float sigma, std::vector<int64_t>* w) {
  int r = int(std::ceil(3.0 * double(sigma)));
  r = std::max(1, std::min(6, r));
  std::vector<double> g(size_t(2 * r + 1));
  double sum = 0;
  for (int i = -r; i <= r; ++i) sum += (g[size_t(i + r)] = std::exp(-double(i) * i / (2.0 * double(sigma) * double(sigma))));
  w->assign(size_t(2 * r + 1), 0);
  int64_t rest = 0;
  for (int i = -r; i <= r; ++i)
    if (i != 0) rest += ((*w)[size_t(i + r)] = std::llround(16384.0 * g[size_t(i + r)] / sum));
  (*w)[size_t(r)] = 16384 - rest;
  return r;
}

// Steps 1-3: G (pitch w).
std::vector<float> plain_gradient(const Image& img, float sigma) {
  const int W = img.w, H = img.h;
  auto cx = [&](int x) { return std::min(W - 1, std::max(0, x)); };
  auto cy = [&](int y) { return std::min(H - 1, std::max(0, y)); };
  std::vector<int64_t> w;
  const int r = plain_taps(sigma, &w);
  std::vector<int64_t> hp(size_t(W) * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int64_t s = 0;
      for (int i = -r; i <= r; ++i) s += w[size_t(i + r)] * img.px[size_t(y) * W + cx(x + i)];
      hp[size_t(y) * W + x] = (s + 32) >> 6;
    }
  std::vector<int> sm(size_t(W) * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int64_t s = 0;
      for (int i = -r; i <= r; ++i) s += w[size_t(i + r)] * hp[size_t(cy(y + i)) * W + x];
      sm[size_t(y) * W + x] = int((s + (int64_t{1} << 21)) >> 22);
    }
  std::vector<int> gx(size_t(W) * H), gy(size_t(W) * H);
  std::vector<float> m(size_t(W) * H);
  int max_sq = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t p = size_t(y) * W + x;
      gx[p] = sm[size_t(y) * W + cx(x + 1)] - sm[size_t(y) * W + cx(x - 1)];
      gy[p] = sm[size_t(cy(y + 1)) * W + x] - sm[size_t(cy(y - 1)) * W + x];
      const int sq = gx[p] * gx[p] + gy[p] * gy[p];
      max_sq = std::max(max_sq, sq);
      m[p] = std::sqrt(float(sq));
    }
  const float mmax = std::sqrt(float(max_sq));
  auto M = [&](int x, int y) { return (x < 0 || y < 0 || x >= W || y >= H) ? 0.0f : m[size_t(y) * W + x]; };
  auto sign = [](int v) { return v > 0 ? 1 : v < 0 ? -1 : 0; };
  std::vector<float> g(size_t(W) * H, 0.0f);
  if (max_sq == 0) return g;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t p = size_t(y) * W + x;
      if (!(m[p] > 0)) continue;
      const int ax = std::abs(gx[p]), ay = std::abs(gy[p]);
      int mjx, mjy, mnx, mny;
      float t;
      if (ax >= ay) {
        mjx = sign(gx[p]), mjy = 0, mnx = 0, mny = sign(gy[p]);
        t = float(ay) / float(ax);
      } else {
        mjx = 0, mjy = sign(gy[p]), mnx = sign(gx[p]), mny = 0;
        t = float(ax) / float(ay);
      }
      const float a = M(x + mjx, y + mjy), b = M(x + mjx + mnx, y + mjy + mny);
      const float c = M(x - mjx, y - mjy), d = M(x - mjx - mnx, y - mjy - mny);
      // One rounding per operation (the target is built with -ffp-contract=off).
      const float db = b - a, tdb = t * db, fwd = a + tdb;
      const float dd = d - c, tdd = t * dd, bwd = c + tdd;
      if (m[p] > fwd && m[p] >= bwd) g[p] = m[p] / mmax;
    }
  return g;
}

// Hysteresis on columns [x0, x1): HIGH (G >= high) plus UNSTABLE (low < G < high) pixels 8-connected to HIGH
// through UNSTABLE ones inside the region, grown until nothing changes (forward and backward raster sweeps).
void plain_hysteresis(const std::vector<float>& g, int W, int H, int x0, int x1, int low, int high,
                      std::vector<uint8_t>* mark) {
  const float lo = float(low) / 100.0f, hi = float(high) / 100.0f;
  for (int y = 0; y < H; ++y)
    for (int x = x0; x < x1; ++x) (*mark)[size_t(y) * W + x] = g[size_t(y) * W + x] >= hi;
  auto unstable = [&](size_t p) { return g[p] > lo && g[p] < hi; };
  auto try_mark = [&](int x, int y) {
    const size_t p = size_t(y) * W + x;
    if ((*mark)[p] || !unstable(p)) return false;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int nx = x + dx, ny = y + dy;
        if ((dx || dy) && nx >= x0 && nx < x1 && ny >= 0 && ny < H && (*mark)[size_t(ny) * W + nx]) {
          (*mark)[p] = 1;
          return true;
        }
      }
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int y = 0; y < H; ++y)
      for (int x = x0; x < x1; ++x) changed |= try_mark(x, y);
    for (int y = H - 1; y >= 0; --y)
      for (int x = x1 - 1; x >= x0; --x) changed |= try_mark(x, y);
  }
}

// Medina-Carnicer's pair on columns [x0, x1) (canny/canny.h NUMBERS).
ThresholdPair plain_select(const std::vector<float>& g, int W, int H, int x0, int x1,
                           const std::vector<CandidatePair>& cands) {
  const long nc = long(cands.size());
  std::vector<uint32_t> sm(size_t(W) * H, 0);
  std::vector<uint8_t> mark(size_t(W) * H);
  for (const CandidatePair& c : cands) {
    plain_hysteresis(g, W, H, x0, x1, c.low, c.high, &mark);
    const float hi = float(c.high) / 100.0f;
    for (int y = 0; y < H; ++y)
      for (int x = x0; x < x1; ++x) {
        const size_t p = size_t(y) * W + x;
        sm[p] += mark[p] && !(g[p] >= hi);  // the linking map: hysteresis map minus HIGH map
      }
  }
  std::vector<int> grid;
  for (const CandidatePair& c : cands) grid.push_back(c.low), grid.push_back(c.high);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  const int m = int(grid.size());
  auto bin = [&](int h) {  // index of the grid point whose bin holds half-hundredth h, -1 for none
    for (int i = 0; i < m; ++i) {
      const int e0 = i == 0 ? 2 * grid[0] - (grid[1] - grid[0]) : grid[i - 1] + grid[i];
      const int e1 = i == m - 1 ? 2 * grid[m - 1] + (grid[m - 1] - grid[m - 2]) : grid[i] + grid[i + 1];
      if (h >= e0 && h < e1) return i;
    }
    return -1;
  };
  std::vector<bool> in_d(size_t(m), false);
  std::vector<long> hist(size_t(m), 0);
  for (int y = 0; y < H; ++y)
    for (int x = x0; x < x1; ++x) {
      const size_t p = size_t(y) * W + x;
      if (g[p] > 0 && g[p] <= 1) {
        const int b = bin(int(g[p] * 200.0f));
        if (b >= 0 && 100L * sm[p] >= long(grid[size_t(b)]) * nc) in_d[size_t(b)] = true;
      }
      if (sm[p] > 0) {
        const int b = bin(int((200L * sm[p]) / nc));
        if (b >= 0) ++hist[size_t(b)];
      }
    }
  std::vector<int> d;
  for (int i = 0; i < m; ++i)
    if (in_d[size_t(i)]) d.push_back(i);
  int first = -1, last = -1;
  for (size_t k = 1; k + 1 < d.size(); ++k)
    if (hist[size_t(d[k])] > hist[size_t(d[k - 1])] && hist[size_t(d[k])] > hist[size_t(d[k + 1])]) {
      if (first < 0) first = grid[size_t(d[k])];
      last = grid[size_t(d[k])];
    }
  if (first >= 0) return {first, last, 1};
  ThresholdPair fb{0, 0, 0};
  for (const CandidatePair& c : cands)
    if (c.high > fb.high || (c.high == fb.high && c.low > fb.low)) fb = {c.low, c.high, 0};
  return fb;
}

// ---------------------------------------------------------------- cases

struct Config {
  float sigma;  // the rest: mode, candidate set step, fixed pair, src and edges pitch - width
  ThresholdMode mode;
  int step;
  ThresholdPair fixed;
  int src_pad, edges_pad;
};

std::string describe(int w, int h, Content c, const Config& k) {
  char s[200];
  std::snprintf(s, sizeof s, "%dx%d %s, sigma %.1f, %s, step %d, fixed (%d,%d), pitch +%d/+%d", w, h,
                kind_name(kContents, c), double(k.sigma),
                k.mode == ThresholdMode::kStrip ? "strip" : k.mode == ThresholdMode::kFrame ? "frame" : "fixed", k.step,
                k.fixed.low, k.fixed.high, k.src_pad, k.edges_pad);
  return s;
}

struct Size {
  int w, h;
};
// Tiny; around the 32-column strips and 32 x 32 tiles; strips of up to 1184 rows (labelled in shared memory)
// and taller ones (union-find); big is for the GPU side only.
const Size kSizes[] = {{1, 1}, {2, 3}, {7, 5}, {31, 9}, {32, 32}, {33, 17}, {64, 48}, {65, 33}, {96, 64}, {40, 1184}, {40, 1185}};
const Size kBigSizes[] = {{512, 512}, {1920, 1080}};
const float kSigmas[] = {0.1f, 0.5f, 1.0f, 1.4f, 2.0f};

template <class Fn>
void for_each_image(Context& ctx, bool big, Fn fn) {
  int k = 0;
  auto one = [&](Size s, Content c, Config cfg) {
    ctx.begin_case(describe(s.w, s.h, c, cfg));
    const Image img = make_image(ctx.rng, s.w, s.h, c);
    fn(img, cfg);
  };
  for (const Size& s : kSizes)
    for (const Kind<Content>& kind : kContents) {
      const Content c = kind.value;
      // Every mode on the images with structure; one (rotating) on the others.
      const bool all_modes = c == Content::kStructure || c == Content::kNoise || c == Content::kCircles;
      for (int m = 0; m < 3; ++m) {
        if (!all_modes && m != k % 3) continue;
        Config cfg{kSigmas[k % 5], ThresholdMode(m), 3, {5 + k % 20, 25 + k % 30, 1}, k % 4 == 1 ? 5 : 0,
                   k % 4 == 2 ? 3 : 0};
        if (s.w * s.h <= 64 * 48 && k % 7 < 2) cfg.step = 1;  // C_0.01 (300 pairs) on small images
        if (k % 11 == 0) cfg.fixed = {20, 20, 1};             // low == high: no UNSTABLE pixel
        ++k;
        one(s, c, cfg);
        if (!ctx.ok()) return;
      }
    }
  if (!big) return;
  for (const Size& s : kBigSizes)
    for (int m = 0; m < 3; ++m) {
      one(s, Content::kStructure, Config{1.0f, ThresholdMode(m), 3, {10, 20, 1}, 0, 0});
      if (!ctx.ok()) return;
    }
}

canny::Options options_of(const Config& cfg, const std::vector<CandidatePair>& cands) {
  canny::Options o;
  o.sigma = cfg.sigma;
  o.mode = cfg.mode;
  o.candidates = cands.data();
  o.n_candidates = int(cands.size());
  o.fixed = cfg.fixed;
  return o;
}

// The CPU twin with canary-filled outputs (pitch padding, two rows after the last, a pair after the last
// strip); checks those canaries.
struct Edges {
  std::vector<uint8_t> map;  // pitch ep, H + 2 rows
  std::vector<ThresholdPair> pairs;  // strips + 1
  int ep = 0;
};
bool detect_ref(Context& ctx, const Image& img, const Config& cfg, Edges* e) {
  const int W = img.w, H = img.h, ns = canny::strip_count(W);
  const int sp = W + cfg.src_pad;
  std::vector<uint8_t> src(size_t(sp) * H, 0x33);
  for (int y = 0; y < H; ++y) std::memcpy(&src[size_t(y) * sp], &img.px[size_t(y) * W], size_t(W));
  const std::vector<CandidatePair> cands = standard_set(cfg.step);
  e->ep = W + cfg.edges_pad;
  e->map.assign(size_t(e->ep) * (H + 2), kCanary);
  e->pairs.assign(size_t(ns) + 1, ThresholdPair{gpuec_test::canary<int32_t>(), gpuec_test::canary<int32_t>(),
                                                gpuec_test::canary<int32_t>()});
  std::vector<uint8_t> work(canny::workspace_bytes_ref(W, H));
  const int st = canny::detect_edges_ref(src.data(), W, H, sp, options_of(cfg, cands), e->map.data(), e->ep,
                                         e->pairs.data(), work.data(), work.size());
  if (st != canny::kOk) return ctx.fail("detect_edges_ref returned " + std::to_string(st));
  for (int y = 0; y < H; ++y)
    if (!ctx.canary_intact("detect_edges_ref edge map pitch padding", &e->map[size_t(y) * e->ep], size_t(W),
                           size_t(e->ep)))
      return false;
  return ctx.canary_intact("detect_edges_ref rows after the last", e->map.data(), size_t(e->ep) * H, e->map.size()) &&
         ctx.canary_intact("detect_edges_ref pair after the last strip", e->pairs.data(), size_t(ns) * 12,
                           e->pairs.size() * 12);
}

std::vector<float> gradient_ref(Context& ctx, const Image& img, float sigma, int gp) {
  std::vector<float> g(size_t(gp) * (img.h + 2));
  gpuec_test::fill_canary(g.data(), g.size() * 4);
  std::vector<uint8_t> work(canny::workspace_bytes_ref(img.w, img.h));
  const int st = canny::gradient_map_ref(img.px.data(), img.w, img.h, img.w, sigma, g.data(), gp, work.data(), work.size());
  if (st != canny::kOk) ctx.fail("gradient_map_ref returned " + std::to_string(st));
  return g;
}

bool same_rows(Context& ctx, const char* what, const void* want, const void* got, int w_bytes, int pitch_bytes, int h) {
  for (int y = 0; y < h; ++y) {
    const uint8_t* a = static_cast<const uint8_t*>(want) + size_t(y) * pitch_bytes;
    const uint8_t* b = static_cast<const uint8_t*>(got) + size_t(y) * pitch_bytes;
    if (std::memcmp(a, b, size_t(w_bytes)) != 0)
      return ctx.same_bytes((std::string(what) + " row " + std::to_string(y)).c_str(), a, b, size_t(w_bytes));
  }
  return ctx.same_bytes(what, want, got, size_t(pitch_bytes) * h);
}

// A twin's gradient map `got` (pitch gp floats, canary-filled before the twin ran) against `want` (same
// pitch): the w x h floats, then the pitch padding and the rows after the last untouched.
void same_gradient(Context& ctx, const std::string& twin, const std::vector<float>& want, const std::vector<float>& got,
                   int w, int h, int gp) {
  if (!same_rows(ctx, "G (floats)", want.data(), got.data(), w * 4, gp * 4, h)) return;
  for (int y = 0; y < h; ++y)
    if (!ctx.canary_intact((twin + " pitch padding").c_str(), &got[size_t(y) * gp], size_t(w) * 4, size_t(gp) * 4))
      return;
  ctx.canary_intact((twin + " rows after the last").c_str(), got.data(), size_t(gp) * h * 4, got.size() * 4);
}

void gradient_oracle(Context& ctx) {
  for_each_image(ctx, false, [&](const Image& img, const Config& cfg) {
    std::vector<int64_t> w;
    const int r = plain_taps(cfg.sigma, &w);
    int32_t taps[canny::kMaxTaps];
    int lib_r = 0;
    if (canny::gaussian_taps(cfg.sigma, taps, &lib_r) != canny::kOk) {
      ctx.fail("gaussian_taps refused sigma");
      return;
    }
    if (!ctx.same_value("Gaussian radius", uint64_t(r), uint64_t(lib_r))) return;
    std::vector<int32_t> want_taps(w.begin(), w.end());
    if (!ctx.same_bytes("Gaussian taps (Q14)", want_taps.data(), taps, want_taps.size() * 4)) return;
    const int gp = img.w + cfg.edges_pad;
    const std::vector<float> got = gradient_ref(ctx, img, cfg.sigma, gp);
    if (!ctx.ok()) return;
    const std::vector<float> want = plain_gradient(img, cfg.sigma);
    std::vector<float> want_p(got);
    for (int y = 0; y < img.h; ++y) std::memcpy(&want_p[size_t(y) * gp], &want[size_t(y) * img.w], size_t(img.w) * 4);
    same_gradient(ctx, "gradient_map_ref", want_p, got, img.w, img.h, gp);
  });
}

void detect_oracle(Context& ctx) {
  for_each_image(ctx, false, [&](const Image& img, const Config& cfg) {
    Edges got;
    if (!detect_ref(ctx, img, cfg, &got)) return;
    const int W = img.w, H = img.h, ns = canny::strip_count(W);
    const std::vector<float> g = plain_gradient(img, cfg.sigma);
    const std::vector<CandidatePair> cands = standard_set(cfg.step);
    std::vector<ThresholdPair> pairs(static_cast<size_t>(ns));
    std::vector<uint8_t> mark(size_t(W) * H, 0);
    if (cfg.mode == ThresholdMode::kStrip) {
      for (int s = 0; s < ns; ++s) {
        const int x0 = s * canny::kStripWidth, x1 = std::min(W, x0 + canny::kStripWidth);
        pairs[size_t(s)] = plain_select(g, W, H, x0, x1, cands);
        plain_hysteresis(g, W, H, x0, x1, pairs[size_t(s)].low, pairs[size_t(s)].high, &mark);
      }
    } else {
      const ThresholdPair p =
          cfg.mode == ThresholdMode::kFrame ? plain_select(g, W, H, 0, W, cands) : ThresholdPair{cfg.fixed.low, cfg.fixed.high, 1};
      std::fill(pairs.begin(), pairs.end(), p);
      plain_hysteresis(g, W, H, 0, W, p.low, p.high, &mark);
    }
    if (!ctx.same_bytes("pairs per strip (low, high, found as int32)", pairs.data(), got.pairs.data(), size_t(ns) * 12))
      return;
    std::vector<uint8_t> want(got.map);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) want[size_t(y) * got.ep + x] = mark[size_t(y) * W + x] ? 255 : 0;
    same_rows(ctx, "edge map", want.data(), got.map.data(), W, got.ep, H);
  });
}

// ---------------------------------------------------------------- GPU twins

#if defined(GPUEC_HAVE_CUDA)

void gradient_gpu(Context& ctx) {
  for_each_image(ctx, true, [&](const Image& img, const Config& cfg) {
    const int gp = img.w + cfg.edges_pad;
    const std::vector<float> want = gradient_ref(ctx, img, cfg.sigma, gp);
    if (!ctx.ok()) return;
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(img.w, img.h);
    DeviceBuffer<uint8_t> d_src(img.px.size()), d_ws(ws);
    DeviceBuffer<float> d_g(want.size());
    if (!BX_CUDA(ctx, cudaMemcpy(d_src.p, img.px.data(), img.px.size(), cudaMemcpyHostToDevice)) ||
        !BX_CUDA(ctx, cudaMemset(d_g.p, kCanary, want.size() * 4)) || !BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, ws)))
      return;
    if (!twin_ok(ctx, canny::gradient_map_cuda(d_src.p, img.w, img.h, img.w, cfg.sigma, d_g.p, gp, d_ws.p, ws, nullptr),
                 "gradient_map_cuda") ||
        !BX_CUDA(ctx, cudaDeviceSynchronize()))
      return;
    std::vector<float> got(want.size());
    if (!BX_CUDA(ctx, cudaMemcpy(got.data(), d_g.p, got.size() * 4, cudaMemcpyDeviceToHost))) return;
    same_gradient(ctx, "gradient_map_cuda", want, got, img.w, img.h, gp);
  });
}

void detect_gpu(Context& ctx) {
  for_each_image(ctx, true, [&](const Image& img, const Config& cfg) {
    Edges want;
    if (!detect_ref(ctx, img, cfg, &want)) return;
    const int W = img.w, H = img.h, ns = canny::strip_count(W), sp = W + cfg.src_pad;
    std::vector<uint8_t> src(size_t(sp) * H, 0x33);
    for (int y = 0; y < H; ++y) std::memcpy(&src[size_t(y) * sp], &img.px[size_t(y) * W], size_t(W));
    const std::vector<CandidatePair> cands = standard_set(cfg.step);
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(W, H);
    DeviceBuffer<uint8_t> d_src(src.size()), d_edges(want.map.size()), d_ws(ws);
    DeviceBuffer<ThresholdPair> d_pairs(want.pairs.size());
    if (!BX_CUDA(ctx, cudaMemcpy(d_src.p, src.data(), src.size(), cudaMemcpyHostToDevice)) ||
        !BX_CUDA(ctx, cudaMemset(d_edges.p, kCanary, want.map.size())) ||
        !BX_CUDA(ctx, cudaMemset(d_pairs.p, kCanary, want.pairs.size() * 12)) ||
        !BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, ws)))
      return;
    if (!twin_ok(ctx, canny::detect_edges_cuda(d_src.p, W, H, sp, options_of(cfg, cands), d_edges.p, want.ep, d_pairs.p,
                                               d_ws.p, ws, nullptr),
                 "detect_edges_cuda") ||
        !BX_CUDA(ctx, cudaDeviceSynchronize()))
      return;
    Edges got;
    got.ep = want.ep;
    got.map.resize(want.map.size());
    got.pairs.resize(want.pairs.size());
    if (!BX_CUDA(ctx, cudaMemcpy(got.map.data(), d_edges.p, got.map.size(), cudaMemcpyDeviceToHost)) ||
        !BX_CUDA(ctx, cudaMemcpy(got.pairs.data(), d_pairs.p, got.pairs.size() * 12, cudaMemcpyDeviceToHost)))
      return;
    if (!ctx.same_bytes("pairs per strip (low, high, found as int32)", want.pairs.data(), got.pairs.data(), size_t(ns) * 12))
      return;
    if (!same_rows(ctx, "edge map", want.map.data(), got.map.data(), W, want.ep, H)) return;
    for (int y = 0; y < H; ++y)
      if (!ctx.canary_intact("detect_edges_cuda pitch padding", &got.map[size_t(y) * got.ep], size_t(W), size_t(got.ep)))
        return;
    if (!ctx.canary_intact("detect_edges_cuda rows after the last", got.map.data(), size_t(got.ep) * H, got.map.size()))
      return;
    ctx.canary_intact("detect_edges_cuda pair after the last strip", got.pairs.data(), size_t(ns) * 12,
                      got.pairs.size() * 12);
  });
}

#endif  // GPUEC_HAVE_CUDA

// ---------------------------------------------------------------- bench

BenchResult detect_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const Image img = make_image(rng, 1920, 1080, Content::kStructure);
  const std::vector<CandidatePair> cands = standard_set(3);
  const Config cfg{1.0f, ThresholdMode::kStrip, 3, {10, 20, 1}, 0, 0};
  const canny::Options o = options_of(cfg, cands);
  std::vector<uint8_t> edges(img.px.size()), work(canny::workspace_bytes_ref(img.w, img.h));
  std::vector<ThresholdPair> pairs(size_t(canny::strip_count(img.w)));
  BenchResult r{"1920x1080 structure, strips, C_0.03", -1, -1};
  r.cpu_us = median_us(opt, [&] {
    canny::detect_edges_ref(img.px.data(), img.w, img.h, img.w, o, edges.data(), img.w, pairs.data(), work.data(),
                            work.size());
  });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(img.w, img.h);
    DeviceBuffer<uint8_t> d_src(img.px), d_edges(edges.size()), d_ws(ws);
    DeviceBuffer<ThresholdPair> d_pairs(pairs.size());
    r.gpu_us = median_gpu_us(opt, [&] {
      canny::detect_edges_cuda(d_src.p, img.w, img.h, img.w, o, d_edges.p, img.w, d_pairs.p, d_ws.p, ws, nullptr);
    });
  }
#endif
  return r;
}

BenchResult gradient_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const Image img = make_image(rng, 1920, 1080, Content::kStructure);
  std::vector<float> g(img.px.size());
  std::vector<uint8_t> work(canny::workspace_bytes_ref(img.w, img.h));
  BenchResult r{"1920x1080 structure, sigma 1.0", -1, -1};
  r.cpu_us = median_us(opt, [&] {
    canny::gradient_map_ref(img.px.data(), img.w, img.h, img.w, 1.0f, g.data(), img.w, work.data(), work.size());
  });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(img.w, img.h);
    DeviceBuffer<uint8_t> d_src(img.px), d_ws(ws);
    DeviceBuffer<float> d_g(g.size());
    r.gpu_us = median_gpu_us(opt, [&] {
      canny::gradient_map_cuda(d_src.p, img.w, img.h, img.w, 1.0f, d_g.p, img.w, d_ws.p, ws, nullptr);
    });
  }
#endif
  return r;
}

#if defined(GPUEC_HAVE_CUDA)
constexpr CheckFn kGradientGpu = gradient_gpu, kDetectGpu = detect_gpu;
#else
constexpr CheckFn kGradientGpu = nullptr, kDetectGpu = nullptr;
#endif

}  // namespace

void register_canny_pairs(std::vector<Pair>& pairs) {
  pairs.push_back({"canny.gradient", "gradient_map_ref / gradient_map_cuda (steps 1-3)",
                   "canny.h's Gaussian, gradient and NMS written out plainly (and gaussian_taps by its definition)",
                   gradient_oracle, kGradientGpu, gradient_bench});
  pairs.push_back({"canny.detect", "detect_edges_ref / detect_edges_cuda (strip, frame, fixed)",
                   "the plain gradient, Medina-Carnicer by its definition and hysteresis as a fixed point",
                   detect_oracle, kDetectGpu, detect_bench});
}

}  // namespace bitexact
