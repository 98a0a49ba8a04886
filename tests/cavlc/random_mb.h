// Random macroblock records with x264-like statistics, for the slice/frame coder tests and the
// CAVLCU kernel's bit-exactness tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cavlc/mb.h"

namespace cavlc_test {

// Levels: mostly zero, small magnitudes near the high-frequency end, occasionally large; `dense`
// makes all 16 coefficients non-zero; `huge` puts levels near (not past) the overflow limit.
inline void random_block(std::mt19937& rng, int16_t* c, int n, int density_pct, bool dense, bool huge) {
  for (int i = 0; i < n; ++i) {
    const bool nz = dense || static_cast<int>(rng() % 100) < density_pct * (n - i / 2) / n;
    if (!nz) { c[i] = 0; continue; }
    int v = 1 + static_cast<int>(rng() % (rng() % 8 == 0 ? 60 : 3));
    if (huge && rng() % 4 == 0) v = 1000 + static_cast<int>(rng() % 1000);  // below 2048: never overflows
    c[i] = static_cast<int16_t>(rng() % 2 ? v : -v);
  }
}

// One record: kind mix of skip, normal, I16x16 and I_PCM; cbp consistent with the coefficients
// (blocks outside the cbp are zero, as x264 hands them).
inline gpuec_mb random_mb(std::mt19937& rng, int addr, int density_pct) {
  gpuec_mb m;
  std::memset(&m, 0, sizeof m);
  m.mb_addr = addr;
  const int r = static_cast<int>(rng() % 100);
  m.kind = r < 15 ? GPUEC_MB_SKIP : r < 80 ? GPUEC_MB_NORMAL : r < 97 ? GPUEC_MB_I16x16 : GPUEC_MB_PCM;
  if (m.kind == GPUEC_MB_SKIP) return m;
  if (m.kind == GPUEC_MB_PCM) {
    for (auto& s : m.u.pcm) s = static_cast<uint8_t>(rng());
    m.cbp = 0x2F;
    return m;
  }
  const bool dense = rng() % 20 == 0, huge = rng() % 10 == 0;
  auto& c = m.u.coef;
  const int cbp_chroma = static_cast<int>(rng() % 3);
  int cbp_luma = m.kind == GPUEC_MB_I16x16 ? (rng() % 2 ? 15 : 0) : static_cast<int>(rng() % 16);
  for (int b = 0; b < 16; ++b) {
    const bool coded = (cbp_luma >> (b >> 2)) & 1;
    if (!coded) continue;
    if (m.kind == GPUEC_MB_I16x16) random_block(rng, c.luma[b] + 1, 15, density_pct, dense, huge);
    else random_block(rng, c.luma[b], 16, density_pct, dense, huge);
  }
  if (m.kind == GPUEC_MB_I16x16) random_block(rng, c.luma_dc, 16, density_pct + 20, dense, huge);
  if (cbp_chroma) for (auto& dc : c.chroma_dc) random_block(rng, dc, 4, 60, false, huge);
  if (cbp_chroma == 2) for (auto& ac : c.chroma_ac) random_block(rng, ac + 1, 15, density_pct / 2, false, false);
  m.cbp = static_cast<uint8_t>(cbp_luma | cbp_chroma << 4);
  return m;
}

inline std::vector<gpuec_mb> random_frame(std::mt19937& rng, int nmb, int density_pct) {
  std::vector<gpuec_mb> v;
  v.reserve(static_cast<size_t>(nmb));
  for (int a = 0; a < nmb; ++a) v.push_back(random_mb(rng, a, density_pct));
  return v;
}

}  // namespace cavlc_test
