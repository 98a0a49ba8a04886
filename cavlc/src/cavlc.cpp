#include "cavlc/cavlc.h"

#include "cavlc/tables.h"

#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)
#include <emmintrin.h>
#endif

namespace cavlc {
namespace {

using tables::Vlc;

// The non-zero levels of a block in scan order (level[0] is the lowest frequency), the zeros below each
// (run[j]: zeros between level[j - 1] and level[j], i.e. the run_before of level[j]), and the counts.
// CAVLC codes them from the top: level[total_coeff - 1] first.
struct RunLevels {
  int total_coeff;
  int total_zeros;    // zeros below the highest non-zero coefficient
  int trailing_ones;  // 0..3
  int level[16];
  int run[16];
};

inline int lowest_bit(uint32_t x) {  // x != 0
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctz(x);
#else
  int i = 0;
  while (!((x >> i) & 1)) ++i;
  return i;
#endif
}

// Bit i set when coeffs[i] != 0 (n <= 16).
inline uint32_t nonzero_mask(const int16_t* coeffs, int n) {
#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)
  if (n >= 8) {  // two overlapping 8-coefficient loads cover 8..16 coefficients without reading past n
    const __m128i zero = _mm_setzero_si128();
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(coeffs));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(coeffs + n - 8));
    const __m128i is_zero = _mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero));
    const uint32_t nz = ~static_cast<uint32_t>(_mm_movemask_epi8(is_zero));
    return (nz & 0xffu) | (((nz >> 8) & 0xffu) << (n - 8));
  }
#endif
  uint32_t mask = 0;
  for (int i = 0; i < n; ++i) mask |= static_cast<uint32_t>(coeffs[i] != 0) << i;
  return mask;
}

inline void scan(const int16_t* coeffs, int n, RunLevels& rl) {
  uint32_t mask = nonzero_mask(coeffs, n);
  int tc = 0, prev = -1;
  while (mask) {
    const int pos = lowest_bit(mask);
    mask &= mask - 1;
    rl.level[tc] = coeffs[pos];
    rl.run[tc] = pos - prev - 1;
    prev = pos;
    ++tc;
  }
  rl.total_coeff = tc;
  rl.total_zeros = prev + 1 - tc;
  int t1 = 0;
  while (t1 < tc && t1 < 3 && static_cast<unsigned>(rl.level[tc - 1 - t1] + 1) <= 2u) ++t1;  // +-1
  rl.trailing_ones = t1;
}

// Collects the block's bits in a local 64-bit accumulator; most blocks fit and reach the BitWriter in
// one or two calls at the end. A longer block hands over 32 bits whenever the next code would not fit
// (codes are at most 28 bits).
struct Writer {
  vle::BitWriter& bw;
  uint64_t acc = 0;
  int pending = 0;  // 0..64 valid bits at the bottom of acc
  void put(uint32_t val, int len) {
    if (pending + len > 64) {
      pending -= 32;
      bw.put(static_cast<uint32_t>(acc >> pending), 32);
    }
    acc = (acc << len) | val;
    pending += len;
  }
  void put(Vlc v) { put(v.val, v.len); }
  void finish() {
    if (pending > 32) {
      pending -= 32;
      bw.put(static_cast<uint32_t>((acc >> 32) & ((uint64_t{1} << pending) - 1)), pending);  // pending <= 32
      pending = 32;
    }
    if (pending) bw.put(static_cast<uint32_t>(acc & ((uint64_t{1} << pending) - 1)), pending);
  }
};

struct Counter {
  int bits = 0;
  void put(uint32_t, int len) { bits += len; }
  void put(Vlc v) { bits += v.len; }
};

// Level codes of |level| < 64 for every suffixLength, precomputed from tables::level_vlc (same bits):
// [suffixLength][level + 64] -> code and the next suffixLength. Not used for the reduced first level.
struct LevelEntry {
  uint32_t bits;
  uint8_t len;
  uint8_t next_suffix_length;
};
constexpr int kLevelTableHalf = 64;
struct LevelTable {
  LevelEntry entry[7][2 * kLevelTableHalf];
};
constexpr LevelTable make_level_table() {
  LevelTable t{};
  for (int sl = 0; sl < 7; ++sl)
    for (int level = -kLevelTableHalf; level < kLevelTableHalf; ++level) {
      if (level == 0) continue;
      const tables::LevelVlc v = tables::level_vlc(tables::level_code_of(level), sl);
      t.entry[sl][level + kLevelTableHalf] = LevelEntry{
          v.bits, v.len, static_cast<uint8_t>(tables::next_suffix_length(sl, level < 0 ? -level : level))};
    }
  return t;
}
constexpr LevelTable kLevelTable = make_level_table();

// The levels below the trailing ones, highest frequency first. Returns true on a baseline overflow (see
// level_overflow). Requires trailing_ones < total_coeff.
template <class Sink>
inline bool code_levels(Sink& out, const RunLevels& rl) {
  const int tc = rl.total_coeff, t1 = rl.trailing_ones;
  int suffix_length = (tc > 10 && t1 < 3) ? 1 : 0;
  bool overflow = false;
  int j = tc - 1 - t1;
  if (t1 < 3) {  // first level after fewer than 3 trailing ones: |level| >= 2, coded as |level| - 1
    const int level = rl.level[j--];
    const tables::LevelVlc v = tables::level_vlc(tables::level_code_of(level) - 2, suffix_length);
    out.put(v.bits, v.len);
    overflow = v.overflow;
    suffix_length = tables::next_suffix_length(suffix_length, level < 0 ? -level : level);
  }
  for (; j >= 0; --j) {
    const int level = rl.level[j];
    if (static_cast<unsigned>(level + kLevelTableHalf) < 2u * kLevelTableHalf) {
      const LevelEntry& e = kLevelTable.entry[suffix_length][level + kLevelTableHalf];
      out.put(e.bits, e.len);
      suffix_length = e.next_suffix_length;
    } else {
      const tables::LevelVlc v = tables::level_vlc(tables::level_code_of(level), suffix_length);
      out.put(v.bits, v.len);
      overflow |= v.overflow;
      suffix_length = tables::next_suffix_length(suffix_length, level < 0 ? -level : level);
    }
  }
  return overflow;
}

template <class Sink>
inline void code_block(Sink& out, const RunLevels& rl, int n, int nC) {
  const int tc = rl.total_coeff, t1 = rl.trailing_ones;
  out.put(tables::kCoeffToken[tables::coeff_token_table(nC)][tc][t1]);
  if (tc == 0) return;

  uint32_t signs = 0;  // trailing-one signs, highest frequency first, 1 = negative
  for (int j = tc - 1; j >= tc - t1; --j) signs = (signs << 1) | (rl.level[j] < 0 ? 1u : 0u);
  out.put(signs, t1);

  if (t1 < tc) code_levels(out, rl);

  int zeros_left = rl.total_zeros;
  if (tc < n) {
    out.put(n == 4 ? tables::kTotalZerosChromaDC[tc - 1][zeros_left]
                   : tables::kTotalZeros4x4[tc - 1][zeros_left]);
  }
  for (int j = tc - 1; j > 0 && zeros_left > 0; --j) {
    const int run = rl.run[j];
    out.put(tables::kRunBefore[tables::run_before_row(zeros_left)][run]);
    zeros_left -= run;
  }
}

// kMaxSafeAbsLevel (cavlc.h) against level_vlc: no suffixLength overflows the largest level code of the
// bound (negative, unreduced; the escape suffix grows with levelCode), and some overflows one more.
constexpr bool overflows_at_some_suffix_length(int abs_level) {
  for (int sl = 0; sl <= 6; ++sl)
    if (tables::level_vlc(tables::level_code_of(-abs_level), sl).overflow) return true;
  return false;
}
static_assert(!overflows_at_some_suffix_length(kMaxSafeAbsLevel) &&
                  overflows_at_some_suffix_length(kMaxSafeAbsLevel + 1),
              "kMaxSafeAbsLevel is the largest |level| that never overflows");

}  // namespace

int total_coeff(const int16_t* coeffs, int n) {
  int tc = 0;
  for (int i = 0; i < n; ++i) tc += coeffs[i] != 0;
  return tc;
}

int write_block(vle::BitWriter& bw, const int16_t* coeffs, int n, int nC) {
  RunLevels rl;
  scan(coeffs, n, rl);
  Writer out{bw};
  code_block(out, rl, n, nC);
  out.finish();
  return rl.total_coeff;
}

int block_bits(const int16_t* coeffs, int n, int nC) {
  RunLevels rl;
  scan(coeffs, n, rl);
  Counter out;
  code_block(out, rl, n, nC);
  return out.bits;
}

bool level_overflow(const int16_t* coeffs, int n) {
  bool large = false;
  for (int i = 0; i < n; ++i) {
    large |= coeffs[i] > kMaxSafeAbsLevel || coeffs[i] < -kMaxSafeAbsLevel;
  }
  if (!large) return false;
  RunLevels rl;
  scan(coeffs, n, rl);
  Counter out;
  return rl.trailing_ones < rl.total_coeff && code_levels(out, rl);
}

}  // namespace cavlc
