// The last step of Medina-Carnicer's threshold search (canny/canny.h, NUMBERS; the grid bins are make_bins there).
//   pick_pair: over the instability zone D = { j in 1..nx : g_count[j] > 0 }, low = the first and high = the
//   last local maximum of p_hist (strictly above its nearest members of D on both sides), else the fallback
//   pair with found = 0. d is scratch of kMaxThreshold + 1 ints. The CPU twin's (canny.cpp) and the fast path's;
//   the CUDA twin picks with one warp instead (pick_pair_warp in cuda/canny.cu: the same rule over ballot masks),
//   and every GPU test and benchmark compares its pairs with the twin's.
//   pick_limits (host): what pick_pair takes from the candidate set (nx and the fallback pair), for both twins
//   and the fast path (canny_cpu.cpp); low_tables (host): F_low of each low, the candidates of a low by high.
//   pair_of_sm (host): the step before pick_pair on the CPU, shared by the twin's select_thresholds_ref and the
//   fast path: the grid's histograms |F(x)| and Prob's from SM (add_histograms, which the fast path's frame mode
//   runs on bands of rows), then pick_pair.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canny/canny.h"

namespace canny {

inline ThresholdPair pick_pair(const uint32_t* g_count, const uint32_t* p_hist, int nx, int* d, int fb_low,
                               int fb_high) {
  int nd = 0;
  for (int j = 1; j <= nx; ++j)
    if (g_count[j] > 0) d[nd++] = j;
  int first = -1, last = -1;
  for (int k = 1; k + 1 < nd; ++k) {
    const uint32_t h = p_hist[d[k]];
    if (h > p_hist[d[k - 1]] && h > p_hist[d[k + 1]]) {
      if (first < 0) first = d[k];
      last = d[k];
    }
  }
  return first < 0 ? ThresholdPair{fb_low, fb_high, 0} : ThresholdPair{first, last, 1};
}

// F_low(v) for v = 0 .. kMaxThreshold of each of the nl distinct lows low[0 .. nl), into f + i * (kMaxThreshold + 1):
// how many candidates (low[i], high) of the set have high <= v (canny.h NUMBERS: a pixel of S_low whose component's
// maximum of A is m and whose own A is a is linked by F_low(m) - F_low(a) of them), for both twins' counts of SM (the
// CUDA twin's counting kernels, each call; the CPU path's one pass). One pass over the candidates for all the lows: the
// CUDA twin's host work for C_0.01 (300 pairs, 24 lows) before its counting launch was about 14 µs with a pass a low.
template <class Low>
inline void low_tables(const CandidatePair* candidates, int nc, const Low* low, int nl, uint16_t* f) {
  constexpr int kV = kMaxThreshold + 1;
  int slot[kV];
  for (int v = 0; v < kV; ++v) slot[v] = -1;
  for (int i = 0; i < nl; ++i) slot[low[i]] = i;
  for (size_t k = 0; k < size_t(nl) * kV; ++k) f[k] = 0;
  for (int c = 0; c < nc; ++c)
    if (const int s = slot[candidates[c].low]; s >= 0) ++f[size_t(s) * kV + candidates[c].high];
  for (int i = 0; i < nl; ++i) {
    uint16_t* r = f + size_t(i) * kV;
    for (int v = 1; v < kV; ++v) r[v] = uint16_t(r[v] + r[v - 1]);
  }
}

// nx: the largest high of the candidate set (the instability zone ends there); the fallback pair: the candidate
// with the largest high, of those the one with the largest low.
struct PickLimits {
  int nx = 0, fb_low = 0, fb_high = 0;
};
inline PickLimits pick_limits(const CandidatePair* candidates, int n) {
  PickLimits l;
  for (int c = 0; c < n; ++c) {
    const CandidatePair cp = candidates[c];
    if (cp.high > l.nx) l.nx = cp.high;
    if (cp.high > l.fb_high || (cp.high == l.fb_high && cp.low > l.fb_low)) {
      l.fb_high = cp.high;
      l.fb_low = cp.low;
    }
  }
  return l;
}

// Adds the pixels of rows [y0, y1) of the region [x0, x0 + w) of g (row y at g + y * g_pitch) to the grid's
// histograms (canny.h NUMBERS, "THE x GRID"): |F(x)| into g_count and #{p : binProb(p) == x} into p_hist (each
// kMaxThreshold + 1 counts), from SM (row y at sm + y * w: how many of the nc candidates link each pixel).
inline void add_histograms(const float* g, int g_pitch, int x0, int w, int y0, int y1, const uint32_t* sm, int64_t nc,
                           const Bins& bins, uint32_t* g_count, uint32_t* p_hist) {
  for (int y = y0; y < y1; ++y) {
    const float* grow = g + static_cast<size_t>(y) * g_pitch + x0;
    const uint32_t* smrow = sm + static_cast<size_t>(y) * w;
    for (int x = 0; x < w; ++x) {
      const int64_t s = smrow[x];
      if (s == 0) continue;  // Prob = 0 is in no bin, and 100 * 0 >= x * nc never holds
      if (const int bin_p = bins.of_half[(200 * s) / nc]) ++p_hist[bin_p];
      const float v = grow[x];
      if (!(v > 0.0f && v <= 1.0f)) continue;  // 0 (and anything outside G's range) is in no bin
      const int bin_g = bins.of_half[int(v * 200.0f)];
      if (bin_g && 100 * s >= int64_t(bin_g) * nc) ++g_count[bin_g];
    }
  }
}

// The pair of the region [x0, x0 + w) x [0, height) of g from its SM (add_histograms over all its rows), then
// pick_pair with the candidate set's limits.
inline ThresholdPair pair_of_sm(const float* g, int g_pitch, int x0, int w, int height, const uint32_t* sm, int64_t nc,
                                const Bins& bins, const PickLimits& limits) {
  uint32_t g_count[kMaxThreshold + 1] = {};  // |F(x)|
  uint32_t p_hist[kMaxThreshold + 1] = {};   // #{p : binProb(p) == x}
  add_histograms(g, g_pitch, x0, w, 0, height, sm, nc, bins, g_count, p_hist);
  int d[kMaxThreshold + 1];
  return pick_pair(g_count, p_hist, limits.nx, d, limits.fb_low, limits.fb_high);
}

}  // namespace canny
