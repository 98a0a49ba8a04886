// The block-by-block cavlc::mb_totals that the SIMD one replaced (as of commit 0a3df2a, unchanged): the
// reference of tests/cavlc/totals_test.cpp and the twin tools/bench/bench_totals.cpp times against.
#pragma once

#include <cstdint>

#include "cavlc/cavlc.h"
#include "cavlc/mb.h"

namespace cavlc_test {

inline int mb_totals_twin(const gpuec_mb& m, uint8_t t[GPUEC_TC_COUNT]) {
  const int cbp_luma = m.cbp & 15, cbp_chroma = m.cbp >> 4;
  if (m.kind > GPUEC_MB_PCM || cbp_chroma > 2 ||
      (m.kind == GPUEC_MB_I16x16 && cbp_luma != 0 && cbp_luma != 15))
    return -1;
  if (m.kind == GPUEC_MB_SKIP || m.kind == GPUEC_MB_PCM) {
    const uint8_t v = m.kind == GPUEC_MB_PCM ? 16 : 0;
    for (int i = 0; i < GPUEC_TC_COUNT; ++i) t[i] = v;
    return 0;
  }
  bool overflow = false;
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  const auto& c = m.u.coef;
  for (int b = 0; b < 16; ++b) {
    t[GPUEC_TC_LUMA + b] = 0;
    if (!(i16 ? (m.cbp & 15) != 0 : ((m.cbp >> (b >> 2)) & 1))) continue;
    const int16_t* l = i16 ? c.luma[b] + 1 : c.luma[b];
    const int n = i16 ? 15 : 16;
    t[GPUEC_TC_LUMA + b] = static_cast<uint8_t>(cavlc::total_coeff(l, n));
    overflow |= cavlc::level_overflow(l, n);
  }
  t[GPUEC_TC_LUMA_DC] = 0;
  if (i16) {
    t[GPUEC_TC_LUMA_DC] = static_cast<uint8_t>(cavlc::total_coeff(c.luma_dc, 16));
    overflow |= cavlc::level_overflow(c.luma_dc, 16);
  }
  for (int ch = 0; ch < 2; ++ch) {
    t[GPUEC_TC_CHROMA_DC + ch] = 0;
    if (cbp_chroma) {
      t[GPUEC_TC_CHROMA_DC + ch] = static_cast<uint8_t>(cavlc::total_coeff(c.chroma_dc[ch], 4));
      overflow |= cavlc::level_overflow(c.chroma_dc[ch], 4);
    }
  }
  for (int b = 0; b < 8; ++b) {
    t[GPUEC_TC_CHROMA_AC + b] = 0;
    if (cbp_chroma == 2) {
      t[GPUEC_TC_CHROMA_AC + b] = static_cast<uint8_t>(cavlc::total_coeff(c.chroma_ac[b] + 1, 15));
      overflow |= cavlc::level_overflow(c.chroma_ac[b] + 1, 15);
    }
  }
  return overflow ? 1 : 0;
}

}  // namespace cavlc_test
