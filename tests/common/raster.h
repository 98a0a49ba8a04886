// Raster-order copies of macroblock records (cavlc/mb.h GPUEC_COEF_RASTER) for the coefficient-order
// tests: a record and its raster copy must code to the same bits. The zigzag is built here by walking the
// anti-diagonals of the 4x4 block (H.264 Figure 8-8 a), not taken from cavlc::kRasterOfScan, so that a
// wrong table in the library cannot pass.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "cavlc/mb.h"

namespace cavlc_test {

struct Zigzag {
  uint8_t raster[16];  // scan index -> raster position 4 * y + x
};

// Diagonal d = x + y; even diagonals run up (y falling), odd ones down (x falling), starting (0,0), (1,0).
constexpr Zigzag make_zigzag() {
  Zigzag z{};
  int i = 0;
  for (int d = 0; d <= 6; ++d)
    for (int k = d < 3 ? d : 3; k >= (d > 3 ? d - 3 : 0); --k) {
      const int y = d % 2 == 0 ? k : d - k, x = d - y;
      z.raster[i++] = static_cast<uint8_t>(4 * y + x);
    }
  return z;
}
constexpr Zigzag kZigzag = make_zigzag();
static_assert(kZigzag.raster[1] == 1 && kZigzag.raster[2] == 4 && kZigzag.raster[3] == 8 && kZigzag.raster[5] == 2 &&
                  kZigzag.raster[6] == 3 && kZigzag.raster[9] == 12 && kZigzag.raster[12] == 7 &&
                  kZigzag.raster[15] == 15,
              "frame zigzag 0 1 4 8 5 2 3 6 9 12 13 10 7 11 14 15");

inline void block_to_raster(const int16_t* scan, int16_t* raster) {
  for (int i = 0; i < 16; ++i) raster[kZigzag.raster[i]] = scan[i];
}

// m (in scan order) with coef_order GPUEC_COEF_RASTER and, for a GPUEC_MB_NORMAL or GPUEC_MB_I16x16
// record, every 4x4 block (luma, chroma AC, luma DC) in raster order; chroma DC is the same in both.
// Skipped, I_PCM and malformed-kind records get the field only.
inline gpuec_mb to_raster(const gpuec_mb& m) {
  gpuec_mb r = m;
  r.coef_order = GPUEC_COEF_RASTER;
  if (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) return r;
  const auto& c = m.u.coef;
  auto& d = r.u.coef;
  for (int b = 0; b < 16; ++b) block_to_raster(c.luma[b], d.luma[b]);
  for (int b = 0; b < 8; ++b) block_to_raster(c.chroma_ac[b], d.chroma_ac[b]);
  block_to_raster(c.luma_dc, d.luma_dc);
  return r;
}

// Whether the raster copy of m holds its levels at other indices than m (a test of the order must see
// some such record, or it cannot fail).
inline bool raster_differs(const gpuec_mb& m) {
  if (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) return false;
  const gpuec_mb r = to_raster(m);
  const auto& a = m.u.coef;
  const auto& b = r.u.coef;
  for (int b16 = 0; b16 < 16; ++b16)
    for (int i = 0; i < 16; ++i)
      if (a.luma[b16][i] != b.luma[b16][i]) return true;
  for (int b8 = 0; b8 < 8; ++b8)
    for (int i = 0; i < 16; ++i)
      if (a.chroma_ac[b8][i] != b.chroma_ac[b8][i]) return true;
  for (int i = 0; i < 16; ++i)
    if (a.luma_dc[i] != b.luma_dc[i]) return true;
  return false;
}

// A copy of a scan-order frame where each record is, at random, left in scan order or converted to raster
// order; skipped and I_PCM records get a random coef_order byte (ignored for them). *rasters (when given)
// receives the number of coded records converted.
inline std::vector<gpuec_mb> mixed_orders(const std::vector<gpuec_mb>& recs, std::mt19937& rng, int raster_pct = 50,
                                          int* rasters = nullptr) {
  std::vector<gpuec_mb> out(recs);
  int n = 0;
  for (auto& m : out) {
    if (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) {
      m.coef_order = static_cast<uint8_t>(rng());
    } else if (static_cast<int>(rng() % 100) < raster_pct) {
      m = to_raster(m);
      ++n;
    }
  }
  if (rasters) *rasters = n;
  return out;
}

}  // namespace cavlc_test
