// tests/common/cavlc_slow_decode.h: an independent CAVLC block decoder for tests, and the level distribution
// of their random blocks (clause 9.2), bit by bit,
// searching cavlc/tables.h's encode tables for coeff_token, total_zeros and run_before. The oracle of the
// encoder's property tests (tests/cavlc/block_test.cpp) and of the table-driven decoder
// (tests/avc/residual_test.cpp).
//
// Reader: bool read(int n, uint32_t& v) (n bits, MSB first; false past the end) and
// int match(const cavlc::tables::Vlc* codes, int count) (the index of the code the stream continues with,
// consuming it; -1 when none).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "cavlc/cavlc.h"
#include "cavlc/tables.h"

namespace gpuec_test {

// A level of a random block: mostly small magnitudes, some escapes, a few near the int16 limit (which
// baseline may not be able to code: callers check cavlc::level_overflow).
inline int random_level(std::mt19937& rng) {
  const int r = static_cast<int>(rng() % 1000);
  int mag;
  if (r < 550) mag = 1;
  else if (r < 800) mag = 2 + static_cast<int>(rng() % 3);
  else if (r < 930) mag = 5 + static_cast<int>(rng() % 60);
  else if (r < 985) mag = 65 + static_cast<int>(rng() % 2100);
  else mag = 2000 + static_cast<int>(rng() % 30768);
  return (rng() & 1) ? -mag : mag;
}

// A random block of the round-trip tests: a category (any of the five), its nC (-1 for chroma DC, else 0..16)
// and n levels, each non-zero (random_level) with one of the five densities (per mille); it may overflow.
struct RandomCatBlock {
  cavlc::BlockCat cat;
  int n, nC;
  std::vector<int16_t> c;
};
inline RandomCatBlock random_cat_block(std::mt19937& rng, const int (&density_per_mille)[5]) {
  const cavlc::BlockCat cats[] = {cavlc::kLumaDC, cavlc::kLumaAC, cavlc::kLuma4x4, cavlc::kChromaDC,
                                  cavlc::kChromaAC};
  RandomCatBlock b;
  b.cat = cats[rng() % 5];
  b.n = cavlc::max_coeffs(b.cat);
  b.nC = b.cat == cavlc::kChromaDC ? -1 : static_cast<int>(rng() % 17);
  const int density = density_per_mille[rng() % 5];
  b.c.assign(static_cast<size_t>(b.n), 0);
  for (auto& x : b.c)
    if (static_cast<int>(rng() % 1000) < density) x = static_cast<int16_t>(random_level(rng));
  return b;
}

// Decodes one block of n coefficients (4, 15 or 16) with nC (-1 for chroma DC); levels[pos] gets the level
// at scan position pos (0..n-1; the caller zeroes levels first). Returns TotalCoeff, or -1 when the bits
// are not a valid block (or a level_prefix above 15, or a level outside int16).
template <class Reader>
int slow_decode_block(Reader& br, int n, int nC, int16_t* levels) {
  using namespace cavlc::tables;
  const int token = br.match(&kCoeffToken[coeff_token_table(nC)][0][0], 17 * 4);
  if (token < 0) return -1;
  const int tc = token / 4, t1 = token % 4;
  if (tc > n) return -1;
  if (tc == 0) return 0;
  int level[16], run[16];
  uint32_t v;
  for (int i = 0; i < t1; ++i) {
    if (!br.read(1, v)) return -1;
    level[i] = v ? -1 : 1;
  }
  int suffix_length = (tc > 10 && t1 < 3) ? 1 : 0;
  for (int i = t1; i < tc; ++i) {
    int prefix = 0;
    for (;;) {
      if (!br.read(1, v)) return -1;
      if (v) break;
      if (++prefix > 15) return -1;  // baseline: level_prefix <= 15
    }
    const int suffix_size =
        (prefix == 14 && suffix_length == 0) ? 4 : prefix >= 15 ? prefix - 3 : suffix_length;
    uint32_t suffix = 0;
    if (!br.read(suffix_size, suffix)) return -1;
    int level_code = ((prefix < 15 ? prefix : 15) << suffix_length) + static_cast<int>(suffix);
    if (prefix >= 15 && suffix_length == 0) level_code += 15;
    if (i == t1 && t1 < 3) level_code += 2;
    level[i] = (level_code % 2 == 0) ? (level_code + 2) >> 1 : (-level_code - 1) >> 1;
    if (suffix_length == 0) suffix_length = 1;
    const int mag = level[i] < 0 ? -level[i] : level[i];
    if (mag > (3 << (suffix_length - 1)) && suffix_length < 6) ++suffix_length;
  }
  int zeros_left = 0;
  if (tc < n) {
    zeros_left = n == 4 ? br.match(kTotalZerosChromaDC[tc - 1], 5 - tc) : br.match(kTotalZeros4x4[tc - 1], 17 - tc);
    if (zeros_left < 0) return -1;
  }
  for (int i = 0; i < tc - 1; ++i) {
    run[i] = 0;
    if (zeros_left > 0) {
      run[i] = br.match(kRunBefore[run_before_row(zeros_left)], zeros_left > 6 ? 15 : zeros_left + 1);
      if (run[i] < 0 || run[i] > zeros_left) return -1;
      zeros_left -= run[i];
    }
  }
  run[tc - 1] = zeros_left;
  int pos = -1;
  for (int i = tc - 1; i >= 0; --i) {
    pos += run[i] + 1;
    if (pos >= n || level[i] < -32768 || level[i] > 32767) return -1;
    levels[pos] = static_cast<int16_t>(level[i]);
  }
  return tc;
}

}  // namespace gpuec_test
