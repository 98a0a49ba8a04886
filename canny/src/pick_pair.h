// The x grid and the last step of Medina-Carnicer's threshold search, shared by the CPU twin (canny.cpp) and
// the CUDA twin (cuda/canny.cu) so that both bin and pick the same way by construction (canny/canny.h,
// NUMBERS).
//   make_bins: the bin of every h = floor(200 v) (half-hundredths 0..200) under the candidate set's grid.
//   pick_pair: over the instability zone D = { j in 1..nx : g_count[j] > 0 }, low = the first and high = the
//   last local maximum of p_hist (strictly above its nearest members of D on both sides), else the fallback
//   pair with found = 0. d is scratch of kMaxThreshold + 1 ints (shared memory on the device: no
//   local-memory stack frame).
#pragma once

#include <cstdint>

#include "canny/canny.h"

#if defined(__CUDACC__)
#define CANNY_HOST_DEVICE __host__ __device__
#else
#define CANNY_HOST_DEVICE
#endif

namespace canny {

constexpr int kHalfSteps = 2 * kMaxThreshold;  // h = floor(200 v) of a value v in [0, 1]: 0..200

// of_half[h]: the grid value (hundredths) whose bin holds h, 0 for none. Index 0 is also used for values
// 0 < v < 0.005; the callers never look up v = 0 (SM = 0 or G = 0).
struct Bins {
  uint8_t of_half[kHalfSteps + 1];
};

// candidates: already checked (check_candidates), so there are at least two distinct values.
inline void make_bins(const CandidatePair* candidates, int n, Bins* b) {
  bool has[kMaxThreshold + 1] = {};
  for (int c = 0; c < n; ++c) has[candidates[c].low] = has[candidates[c].high] = true;
  int x[kMaxThreshold + 1], m = 0;
  for (int v = 1; v <= kMaxThreshold; ++v)
    if (has[v]) x[m++] = v;
  for (int h = 0; h <= kHalfSteps; ++h) b->of_half[h] = 0;
  for (int i = 0; i < m; ++i) {
    const int e0 = i == 0 ? 2 * x[0] - (x[1] - x[0]) : x[i - 1] + x[i];
    const int e1 = i == m - 1 ? 2 * x[m - 1] + (x[m - 1] - x[m - 2]) : x[i] + x[i + 1];
    for (int h = e0 < 0 ? 0 : e0; h < e1 && h <= kHalfSteps; ++h) b->of_half[h] = uint8_t(x[i]);
  }
}

CANNY_HOST_DEVICE inline ThresholdPair pick_pair(const uint32_t* g_count, const uint32_t* p_hist, int nx, int* d,
                                                 int fb_low, int fb_high) {
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

}  // namespace canny
