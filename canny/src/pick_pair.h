// The last step of Medina-Carnicer's threshold search, shared by the CPU twin (canny.cpp) and the CUDA twin
// (cuda/canny.cu) so that both pick the same way by construction (canny/canny.h, NUMBERS; the grid bins
// are make_bins there).
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
