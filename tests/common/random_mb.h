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

// Extreme blocks: all-zero coded blocks, 16 (15, 4) non-zero blocks, runs of +-1 (trailing ones), levels
// up to +-2063 (the largest magnitude that never overflows, cavlc.cpp kMinOverflowAbsLevel - 1), and
// the escape boundaries of every suffixLength.
inline void extreme_block(std::mt19937& rng, int16_t* c, int n) {
  const int mode = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    int v = 0;
    switch (mode) {
      case 0: v = 0; break;                                                          // coded, empty
      case 1: v = 1 + static_cast<int>(rng() % 4); break;                            // all non-zero
      case 2: v = rng() % 3 ? 1 : 0; break;                                          // +-1 patterns
      case 3: v = rng() % 2 ? 2063 - static_cast<int>(rng() % 8) : 0; break;         // huge
      case 4: {                                                                      // escape edges
        static const int kEdges[] = {1, 2, 3, 7, 8, 14, 15, 16, 22, 23, 30, 45, 46, 47, 48, 94, 95, 96, 190, 191, 192, 382, 383, 1000, 2047, 2048, 2063};
        v = rng() % 4 ? kEdges[rng() % (sizeof kEdges / sizeof kEdges[0])] : 0;
        break;
      }
      default: v = rng() % 5 == 0 ? 1 + static_cast<int>(rng() % 2063) : 0; break;  // sparse, any size
    }
    c[i] = static_cast<int16_t>(rng() % 2 ? v : -v);
  }
}

inline gpuec_mb extreme_mb(std::mt19937& rng, int addr) {
  gpuec_mb m = random_mb(rng, addr, 30);
  if (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16) return m;
  auto& c = m.u.coef;
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  std::memset(&m.u, 0, sizeof m.u);
  const int cbp_chroma = static_cast<int>(rng() % 3);
  const int cbp_luma = i16 ? (rng() % 4 ? 15 : 0) : static_cast<int>(rng() % 16);
  for (int b = 0; b < 16; ++b)
    if ((cbp_luma >> (b >> 2)) & 1) extreme_block(rng, i16 ? c.luma[b] + 1 : c.luma[b], i16 ? 15 : 16);
  if (i16) extreme_block(rng, c.luma_dc, 16);
  if (cbp_chroma)
    for (auto& dc : c.chroma_dc) extreme_block(rng, dc, 4);
  if (cbp_chroma == 2)
    for (auto& ac : c.chroma_ac) extreme_block(rng, ac + 1, 15);
  m.cbp = static_cast<uint8_t>(cbp_luma | cbp_chroma << 4);
  return m;
}

// Every block coded (cbp 0x2F), mostly 16 non-zero levels: neighbours reach nC 8..16. Every fifth
// macroblock (by address) is Intra16x16, the others GPUEC_MB_NORMAL.
inline gpuec_mb dense_mb(std::mt19937& rng, int addr) {
  gpuec_mb m;
  std::memset(&m, 0, sizeof m);
  m.mb_addr = addr;
  m.kind = addr % 5 ? GPUEC_MB_NORMAL : GPUEC_MB_I16x16;
  auto& c = m.u.coef;
  for (int b = 0; b < 16; ++b)
    random_block(rng, m.kind == GPUEC_MB_I16x16 ? c.luma[b] + 1 : c.luma[b], m.kind == GPUEC_MB_I16x16 ? 15 : 16, 100,
                 rng() % 3 != 0, false);
  random_block(rng, c.luma_dc, 16, 100, true, false);
  for (auto& dc : c.chroma_dc) random_block(rng, dc, 4, 100, true, false);
  for (auto& ac : c.chroma_ac) random_block(rng, ac + 1, 15, 100, true, false);
  m.cbp = 0x2F;
  return m;
}

inline std::vector<gpuec_mb> random_frame(std::mt19937& rng, int nmb, int density_pct) {
  std::vector<gpuec_mb> v;
  v.reserve(static_cast<size_t>(nmb));
  for (int a = 0; a < nmb; ++a) v.push_back(random_mb(rng, a, density_pct));
  return v;
}

// A random slice skeleton for the slice coder: 4096 random bytes, the slice data starting at a random whole byte
// (start), records first..last inserted at increasing random bit positions past a random header (their
// skel_bit), and the slice ending a random number of bits after the last one (end).
struct RandomSkeleton {
  std::vector<uint8_t> bytes;
  int64_t start, end;
};
inline RandomSkeleton random_skeleton(std::mt19937& rng, gpuec_mb* recs, int first, int last) {
  RandomSkeleton k{std::vector<uint8_t>(4096), 0, 0};
  for (auto& b : k.bytes) b = static_cast<uint8_t>(rng());
  k.start = 8 * static_cast<int64_t>(rng() % 64);
  int64_t pos = k.start + 20 + static_cast<int64_t>(rng() % 40);
  for (int a = first; a <= last; ++a) {
    pos += static_cast<int64_t>(rng() % 24);
    recs[a].skel_bit = pos;
  }
  k.end = pos + static_cast<int64_t>(rng() % 30);
  return k;
}

}  // namespace cavlc_test
