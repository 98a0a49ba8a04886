// GUD-Canny CPU twin. Every numeric rule is specified in canny/canny.h ("NUMBERS"); this file must be
// compiled with -ffp-contract=off (canny/CMakeLists.txt) so that a + t * (b - a) stays three roundings.
#include "canny/canny.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "pick_pair.h"

namespace canny {
namespace {

constexpr uint8_t kLabNone = 0, kLabUnstable = 1, kLabHigh = 2, kLabLinked = 3;

bool valid_size(int width, int height) {
  return width >= 1 && height >= 1 && width <= kMaxDim && height <= kMaxDim &&
         int64_t(width) * height <= kMaxPixels;
}

inline float threshold_value(int k) { return float(k) / 100.0f; }

// Labels the region [x0, x1) x [0, height) of g into lab (row y at lab + y * lab_pitch, column x - x0):
// HIGH, UNSTABLE, then every UNSTABLE pixel 8-connected through UNSTABLE pixels to a HIGH one becomes
// LINKED. Each pixel enters the stack at most once, so `stack` needs (x1 - x0) * height entries.
void label_hysteresis(const float* g, int g_pitch, int height, int x0, int x1, int low, int high,
                      uint8_t* lab, int lab_pitch, int32_t* stack) {
  const float lo = threshold_value(low), hi = threshold_value(high);
  const int w = x1 - x0;
  int32_t n = 0;
  for (int y = 0; y < height; ++y) {
    const float* row = g + size_t(y) * g_pitch + x0;
    uint8_t* lrow = lab + size_t(y) * lab_pitch;
    for (int x = 0; x < w; ++x) {
      const float v = row[x];
      uint8_t l = kLabNone;
      if (v >= hi) {
        l = kLabHigh;
        stack[n++] = y * w + x;
      } else if (v > lo && v < hi) {
        l = kLabUnstable;
      }
      lrow[x] = l;
    }
  }
  while (n > 0) {
    const int32_t p = stack[--n];
    const int py = p / w, px = p % w;
    for (int dy = -1; dy <= 1; ++dy) {
      const int y = py + dy;
      if (y < 0 || y >= height) continue;
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = px + dx;
        if (x < 0 || x >= w) continue;
        uint8_t& l = lab[size_t(y) * lab_pitch + x];
        if (l == kLabUnstable) {
          l = kLabLinked;
          stack[n++] = y * w + x;
        }
      }
    }
  }
}

struct Workspace {
  uint16_t* h;
  uint8_t* s;
  int16_t* gx;
  int16_t* gy;
  float* m;
  float* g;
  uint32_t* sm;
  uint8_t* mask;
  int32_t* stack;
};

size_t align16(size_t n) { return (n + 15) & ~size_t(15); }

size_t layout(int width, int height, uint8_t* base, Workspace* ws) {
  const size_t n = size_t(width) * size_t(height);
  size_t off = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + off : nullptr;
    off += align16(bytes);
    return p;
  };
  uint8_t* h = take(n * 2);
  uint8_t* s = take(n);
  uint8_t* gx = take(n * 2);
  uint8_t* gy = take(n * 2);
  uint8_t* m = take(n * 4);
  uint8_t* g = take(n * 4);
  uint8_t* sm = take(n * 4);
  uint8_t* mask = take(n);
  uint8_t* stack = take(n * 4);
  if (ws) {
    ws->h = reinterpret_cast<uint16_t*>(h);
    ws->s = s;
    ws->gx = reinterpret_cast<int16_t*>(gx);
    ws->gy = reinterpret_cast<int16_t*>(gy);
    ws->m = reinterpret_cast<float*>(m);
    ws->g = reinterpret_cast<float*>(g);
    ws->sm = reinterpret_cast<uint32_t*>(sm);
    ws->mask = mask;
    ws->stack = reinterpret_cast<int32_t*>(stack);
  }
  return off + 15;  // slack to align the base
}

bool carve(void* work, size_t work_bytes, int width, int height, Workspace* ws) {
  if (!work || work_bytes < workspace_bytes_ref(width, height)) return false;
  uintptr_t p = reinterpret_cast<uintptr_t>(work);
  uint8_t* base = static_cast<uint8_t*>(work) + ((16 - (p & 15)) & 15);
  layout(width, height, base, ws);
  return true;
}

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

inline float mag_at(const float* m, int width, int height, int x, int y) {
  if (x < 0 || y < 0 || x >= width || y >= height) return 0.0f;
  return m[size_t(y) * width + x];
}

}  // namespace

int check_candidates(const CandidatePair* pairs, int count) {
  if (count < 1 || count > kMaxCandidates) return kErrCandidates;
  if (!pairs) return kErrNull;
  for (int i = 0; i < count; ++i)
    if (pairs[i].low < 1 || pairs[i].low >= pairs[i].high || pairs[i].high > kMaxThreshold)
      return kErrCandidates;
  return kOk;
}

int make_candidate_set(int step, CandidatePair* out, int capacity) {
  if (step < 1 || step > 24) return kErrSize;
  if (!out && capacity > 0) return kErrNull;
  int n = 0;
  for (int lo = 1; lo <= 25; lo += step)
    for (int hi = lo + step; hi <= 25; hi += step) {
      if (n < capacity) out[n] = CandidatePair{uint8_t(lo), uint8_t(hi)};
      ++n;
    }
  return n;
}

int gaussian_taps(float sigma, int32_t taps[kMaxTaps], int* radius) {
  if (!taps || !radius) return kErrNull;
  if (!(sigma >= kMinSigma && sigma <= kMaxSigma)) return kErrSigma;  // NaN fails both
  const double sd = double(sigma);
  const int r = std::max(1, std::min(kMaxRadius, int(std::ceil(3.0 * sd))));
  double g[kMaxTaps], sum = 0.0;
  for (int i = -r; i <= r; ++i) {
    g[i + r] = std::exp(-double(i) * double(i) / (2.0 * sd * sd));
    sum += g[i + r];
  }
  int32_t side = 0;
  for (int i = -r; i <= r; ++i) {
    if (i == 0) continue;
    taps[i + r] = int32_t(std::llround(double(kTapsOne) * g[i + r] / sum));
    side += taps[i + r];
  }
  taps[r] = kTapsOne - side;
  for (int i = 2 * r + 1; i < kMaxTaps; ++i) taps[i] = 0;
  *radius = r;
  return kOk;
}

size_t workspace_bytes_ref(int width, int height) {
  if (!valid_size(width, height)) return 0;
  return layout(width, height, nullptr, nullptr);
}

int gradient_map_ref(const uint8_t* src, int width, int height, int pitch, float sigma, float* g,
                     int g_pitch, void* work, size_t work_bytes) {
  if (!src || !g || !work) return kErrNull;
  if (!valid_size(width, height)) return kErrSize;
  if (pitch < width || g_pitch < width) return kErrPitch;
  int32_t taps[kMaxTaps];
  int r = 0;
  if (int e = gaussian_taps(sigma, taps, &r); e != kOk) return e;
  Workspace ws;
  if (!carve(work, work_bytes, width, height, &ws)) return kErrWorkspace;
  const int W = width, H = height;

  // 1. Gaussian: horizontal to Q8, vertical back to 8 bits.
  for (int y = 0; y < H; ++y) {
    const uint8_t* row = src + size_t(y) * pitch;
    for (int x = 0; x < W; ++x) {
      int32_t acc = 0;
      for (int i = -r; i <= r; ++i) acc += taps[i + r] * int32_t(row[clampi(x + i, 0, W - 1)]);
      ws.h[size_t(y) * W + x] = uint16_t((acc + 32) >> 6);
    }
  }
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int32_t acc = 0;
      for (int i = -r; i <= r; ++i) acc += taps[i + r] * int32_t(ws.h[size_t(clampi(y + i, 0, H - 1)) * W + x]);
      ws.s[size_t(y) * W + x] = uint8_t((acc + (1 << 21)) >> 22);
    }

  // 2. Central differences, magnitude, maximum of the squared magnitude.
  int32_t max2 = 0;
  for (int y = 0; y < H; ++y) {
    const uint8_t* up = ws.s + size_t(clampi(y - 1, 0, H - 1)) * W;
    const uint8_t* mid = ws.s + size_t(y) * W;
    const uint8_t* down = ws.s + size_t(clampi(y + 1, 0, H - 1)) * W;
    for (int x = 0; x < W; ++x) {
      const int32_t dx = int32_t(mid[clampi(x + 1, 0, W - 1)]) - int32_t(mid[clampi(x - 1, 0, W - 1)]);
      const int32_t dy = int32_t(down[x]) - int32_t(up[x]);
      const int32_t m2 = dx * dx + dy * dy;
      max2 = std::max(max2, m2);
      ws.gx[size_t(y) * W + x] = int16_t(dx);
      ws.gy[size_t(y) * W + x] = int16_t(dy);
      ws.m[size_t(y) * W + x] = std::sqrt(float(m2));  // float overload: sqrtf
    }
  }
  const float mmax = std::sqrt(float(max2));

  // 3. Non-maximum suppression with interpolation, normalised by the maximum.
  for (int y = 0; y < H; ++y) {
    float* grow = g + size_t(y) * g_pitch;
    for (int x = 0; x < W; ++x) {
      const size_t i = size_t(y) * W + x;
      const float mc = ws.m[i];
      if (mc == 0.0f) {
        grow[x] = 0.0f;
        continue;
      }
      const int dx = ws.gx[i], dy = ws.gy[i];
      const int ax = std::abs(dx), ay = std::abs(dy);
      const int sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
      int mjx, mjy, mnx, mny;
      float t;
      if (ax >= ay) {
        mjx = sx; mjy = 0; mnx = 0; mny = sy;
        t = float(ay) / float(ax);
      } else {
        mjx = 0; mjy = sy; mnx = sx; mny = 0;
        t = float(ax) / float(ay);
      }
      const float a = mag_at(ws.m, W, H, x + mjx, y + mjy);
      const float b = mag_at(ws.m, W, H, x + mjx + mnx, y + mjy + mny);
      const float c = mag_at(ws.m, W, H, x - mjx, y - mjy);
      const float d = mag_at(ws.m, W, H, x - mjx - mnx, y - mjy - mny);
      const float tf = t * (b - a);
      const float fwd = a + tf;
      const float tb = t * (d - c);
      const float bwd = c + tb;
      grow[x] = (mc > fwd && mc >= bwd) ? mc / mmax : 0.0f;
    }
  }
  return kOk;
}

int select_thresholds_ref(const float* g, int g_pitch, int width, int height, int x0, int x1,
                          const CandidatePair* candidates, int n_candidates, ThresholdPair* out,
                          uint32_t* sm, uint8_t* mask, int32_t* stack) {
  if (!g || !out || !sm || !mask || !stack) return kErrNull;
  if (!valid_size(width, height) || x0 < 0 || x1 > width || x0 >= x1) return kErrSize;
  if (g_pitch < width) return kErrPitch;
  if (int e = check_candidates(candidates, n_candidates); e != kOk) return e;
  const int w = x1 - x0;
  const size_t n = size_t(w) * height;
  const int64_t nc = n_candidates;

  // SM: how many candidate pairs link each pixel (linking map = LINKED labels).
  std::fill(sm, sm + n, 0u);
  for (int c = 0; c < n_candidates; ++c) {
    const CandidatePair cp = candidates[c];
    label_hysteresis(g, g_pitch, height, x0, x1, cp.low, cp.high, mask, w, stack);
    for (size_t i = 0; i < n; ++i) sm[i] += mask[i] == kLabLinked;
  }

  // P(F(x)) != 0 and the histogram of Prob, on the grid of the candidate set (canny.h NUMBERS), then the pick.
  Bins bins;
  make_bins(candidates, n_candidates, &bins);
  *out = pair_of_sm(g, g_pitch, x0, w, height, sm, nc, bins, pick_limits(candidates, n_candidates));
  return kOk;
}

int hysteresis_ref(const float* g, int g_pitch, int width, int height, int x0, int x1, int low, int high,
                   uint8_t* edges, int edges_pitch, int32_t* stack) {
  if (!g || !edges || !stack) return kErrNull;
  if (!valid_size(width, height) || x0 < 0 || x1 > width || x0 >= x1) return kErrSize;
  if (g_pitch < width || edges_pitch < width) return kErrPitch;
  if (low < 1 || low > high || high > kMaxThreshold) return kErrThresholds;
  uint8_t* lab = edges + x0;  // the region's bytes of edges hold the labels, then the 0/255 result
  label_hysteresis(g, g_pitch, height, x0, x1, low, high, lab, edges_pitch, stack);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = lab + size_t(y) * edges_pitch;
    for (int x = 0; x < x1 - x0; ++x) row[x] = (row[x] == kLabHigh || row[x] == kLabLinked) ? 255 : 0;
  }
  return kOk;
}

int detect_edges_ref(const uint8_t* src, int width, int height, int pitch, const Options& options,
                     uint8_t* edges, int edges_pitch, ThresholdPair* pairs, void* work, size_t work_bytes) {
  if (!src || !edges || !pairs || !work) return kErrNull;
  if (!valid_size(width, height)) return kErrSize;
  if (pitch < width || edges_pitch < width) return kErrPitch;
  if (!(options.sigma >= kMinSigma && options.sigma <= kMaxSigma)) return kErrSigma;
  const ThresholdMode mode = options.mode;
  if (mode != ThresholdMode::kStrip && mode != ThresholdMode::kFrame && mode != ThresholdMode::kFixed)
    return kErrMode;
  if (mode == ThresholdMode::kFixed) {
    const ThresholdPair f = options.fixed;
    if (f.low < 1 || f.low > f.high || f.high > kMaxThreshold) return kErrThresholds;
  } else if (int e = check_candidates(options.candidates, options.n_candidates); e != kOk) {
    return e;
  }
  Workspace ws;
  if (!carve(work, work_bytes, width, height, &ws)) return kErrWorkspace;

  if (int e = gradient_map_ref(src, width, height, pitch, options.sigma, ws.g, width, work, work_bytes);
      e != kOk)
    return e;

  const int ns = strip_count(width);
  if (mode == ThresholdMode::kStrip) {
    for (int s = 0; s < ns; ++s) {
      const int x0 = s * kStripWidth, x1 = std::min(width, x0 + kStripWidth);
      int e = select_thresholds_ref(ws.g, width, width, height, x0, x1, options.candidates, options.n_candidates,
                                    &pairs[s], ws.sm, ws.mask, ws.stack);
      if (e == kOk)
        e = hysteresis_ref(ws.g, width, width, height, x0, x1, pairs[s].low, pairs[s].high, edges, edges_pitch,
                           ws.stack);
      if (e != kOk) return e;
    }
    return kOk;
  }
  ThresholdPair p = options.fixed;
  p.found = 1;
  if (mode == ThresholdMode::kFrame) {
    if (int e = select_thresholds_ref(ws.g, width, width, height, 0, width, options.candidates,
                                      options.n_candidates, &p, ws.sm, ws.mask, ws.stack);
        e != kOk)
      return e;
  }
  for (int s = 0; s < ns; ++s) pairs[s] = p;
  return hysteresis_ref(ws.g, width, width, height, 0, width, p.low, p.high, edges, edges_pitch, ws.stack);
}

}  // namespace canny
