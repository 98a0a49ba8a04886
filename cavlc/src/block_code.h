// cavlc/src/block_code.h (private): the CAVLC block coder (H.264 7.3.5.3.2, 9.2) on any bit sink, shared
// by the public write_block (cavlc.cpp, through vle::BitWriter) and the frame coder's commit (slice.cpp,
// straight into words of the slice's output). Table-driven as x264's writer: coeff_token and the
// trailing-one signs in one code, levels |L| < 64 from a table of codes and next suffixLength (the reduced
// first level too), total_zeros and run_before from tables.h.
#pragma once

#include <cstdint>
#include <cstring>

#include "cavlc/tables.h"
#include "vle/bitwriter.h"

#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)
#include <emmintrin.h>
#endif

// Forced inlining: the coder is one loop body per block with the sink in registers.
#if defined(__GNUC__) || defined(__clang__)
#define CAVLC_BLOCK_INLINE inline __attribute__((always_inline))
#define CAVLC_BLOCK_INLINE_LAMBDA __attribute__((always_inline))
#else
#define CAVLC_BLOCK_INLINE inline
#define CAVLC_BLOCK_INLINE_LAMBDA
#endif

namespace cavlc {
namespace block_code {

using tables::Vlc;

// The non-zero levels of a block in scan order (level[0] is the lowest frequency), where they are (mask)
// and the counts. CAVLC codes them from the top: level[total_coeff - 1] first.
struct RunLevels {
  uint32_t mask;      // bit i set when coefficient i is non-zero
  int total_coeff;
  int total_zeros;    // zeros below the highest non-zero coefficient
  int trailing_ones;  // 0..3
  int level[16];
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
CAVLC_BLOCK_INLINE uint32_t nonzero_mask(const int16_t* coeffs, int n) {
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

// The levels from the lowest frequency up: each step removes the lowest set bit.
CAVLC_BLOCK_INLINE void scan(const int16_t* coeffs, int n, RunLevels& rl) {
  uint32_t mask = nonzero_mask(coeffs, n);
  rl.mask = mask;
  int tc = 0, top = 0;
  while (mask) {
    const int pos = lowest_bit(mask);
    mask &= mask - 1;
    rl.level[tc] = coeffs[pos];
    top = pos + 1;
    ++tc;
  }
  rl.total_coeff = tc;
  rl.total_zeros = top - tc;
  int t1 = 0;
  while (t1 < tc && t1 < 3 && static_cast<unsigned>(rl.level[tc - 1 - t1] + 1) <= 2u) ++t1;  // +-1
  rl.trailing_ones = t1;
}

// MSB-first bits straight into memory at p, unchecked and without a branch: every put stores the pending
// bits as one big-endian 8-byte word and moves p past the whole bytes. The caller guarantees room for the
// code and 8 bytes more. Every put has len >= 1.
struct WordWriter {
  uint8_t* p;
  uint64_t acc = 0;  // the low n bits are pending (bits above them are stale)
  int n = 0;         // < 8 between calls
  CAVLC_BLOCK_INLINE void put(uint32_t val, int len) { put_long(val, len); }
  // Up to 56 bits.
  CAVLC_BLOCK_INLINE void put_long(uint64_t val, int len) {
    acc = (acc << len) | val;
    n += len;  // <= 63
    vle::store_be64(p, acc << (64 - n));
    p += n >> 3;
    n &= 7;
  }
  CAVLC_BLOCK_INLINE void put(Vlc v) { put(v.val, v.len); }
  // Zero bits to the next byte boundary, then `bytes` bytes copied (I_PCM: pcm_alignment_zero_bits and the
  // samples); the caller guarantees room for them and 8 bytes more.
  void put_aligned_bytes(const uint8_t* src, size_t bytes) {
    if (n) put(0, 8 - n);
    std::memcpy(p, src, bytes);
    p += bytes;
  }
  // The bits written since `start` (the last byte's bits after them are zero).
  uint64_t finish(const uint8_t* start) const {
    return static_cast<uint64_t>(p - start) * 8 + static_cast<uint64_t>(n);
  }
};

struct Counter {
  int bits = 0;
  void put(uint32_t, int len) { bits += len; }
  void put_long(uint64_t, int len) { bits += len; }
  void put(Vlc v) { bits += v.len; }
};

// run_before of a whole block from its non-zero mask (x264's approach): for every 16-bit mask, the
// run_before codes of its levels from the highest down while zeros are left (9.2.3), concatenated, as
// code << 5 | length. At most 25 bits (static_assert below); 0 when total_zeros is 0. Only the mask
// matters: zerosLeft starts at the zeros below the highest set bit.
struct RunBeforeTable {
  uint32_t entry[1 << 16];
};
// Built from the top level down: a mask's codes are its highest level's run_before (zerosLeft = its
// total_zeros) followed by the codes of the mask without that level, whose total_zeros is what is left.
constexpr RunBeforeTable make_run_before_table() {
  RunBeforeTable t{};
  for (uint32_t mask = 1; mask < (1u << 16); ++mask) {
    int top = 15, tc = 0;
    while (!((mask >> top) & 1)) --top;
    for (uint32_t m = mask; m; m &= m - 1) ++tc;
    const uint32_t rest = mask & ~(1u << top);
    const int zeros_left = top + 1 - tc;
    if (rest == 0 || zeros_left == 0) continue;
    int below = top - 1;
    while (!((rest >> below) & 1)) --below;
    const Vlc v = tables::kRunBefore[tables::run_before_row(zeros_left)][top - below - 1];
    const uint32_t r = t.entry[rest];
    t.entry[mask] = ((static_cast<uint32_t>(v.val) << (r & 31)) | (r >> 5)) << 5 | (v.len + (r & 31));
  }
  return t;
}
inline constexpr RunBeforeTable kRunBeforeOfMask = make_run_before_table();
constexpr int longest_run_before() {
  int longest = 0;
  for (uint32_t e : kRunBeforeOfMask.entry) longest = static_cast<int>(e & 31) > longest ? static_cast<int>(e & 31) : longest;
  return longest;
}
static_assert(longest_run_before() <= 25, "run_before codes of a block fit 27 bits beside a 5-bit length");

// Level codes of |level| < 64 for every suffixLength, precomputed from tables::level_vlc (same bits):
// [suffixLength][level + 64] -> code and the next suffixLength. Not used for the reduced first level.
struct LevelEntry {
  uint32_t bits;
  uint8_t len;
  uint8_t next_suffix_length;
  uint8_t suffix_class;  // suffix_class(|level|), the same in every row
};
inline constexpr int kLevelTableHalf = 64;
struct LevelTable {
  LevelEntry entry[7][2 * kLevelTableHalf];
};
constexpr LevelTable make_level_table() {
  LevelTable t{};
  for (int sl = 0; sl < 7; ++sl)
    for (int level = -kLevelTableHalf; level < kLevelTableHalf; ++level) {
      if (level == 0) continue;
      const tables::LevelVlc v = tables::level_vlc(tables::level_code_of(level), sl);
      const int a = level < 0 ? -level : level;
      t.entry[sl][level + kLevelTableHalf] =
          LevelEntry{v.bits, v.len, static_cast<uint8_t>(tables::next_suffix_length(sl, a)),
                     static_cast<uint8_t>((a > 3) + (a > 6) + (a > 12) + (a > 24) + (a > 48))};
    }
  return t;
}
inline constexpr LevelTable kLevelTable = make_level_table();

// How many of the suffixLength thresholds 3 << (s - 1), s = 1..5 (9.2.2.1), a level of magnitude
// abs_level exceeds: next_suffix_length(s, abs_level) = s + (class >= s) for s = 1..6. Off the chain.
CAVLC_BLOCK_INLINE int suffix_class(int abs_level) {
  return (abs_level > 3) + (abs_level > 6) + (abs_level > 12) + (abs_level > 24) + (abs_level > 48);
}

// The code of one level at suffixLength sl: from the table, or computed (escapes; *overflow raised).
struct LevelCode {
  uint32_t bits;
  int len;
};
CAVLC_BLOCK_INLINE LevelCode level_code(int level, int sl, bool* overflow) {
  if (static_cast<unsigned>(level + kLevelTableHalf) < 2u * kLevelTableHalf) {
    const LevelEntry& e = kLevelTable.entry[sl][level + kLevelTableHalf];
    return LevelCode{e.bits, e.len};
  }
  const tables::LevelVlc v = tables::level_vlc(tables::level_code_of(level), sl);
  *overflow |= v.overflow;
  return LevelCode{v.bits, v.len};
}
// suffixLength after a level, from sl >= 1: a compare and an add on the chain from level to level (a
// table's next suffixLength would put a load on it); the level's class comes off the chain.
CAVLC_BLOCK_INLINE int next_suffix_length(int level, int sl) {
  if (static_cast<unsigned>(level + kLevelTableHalf) < 2u * kLevelTableHalf)
    return sl + (kLevelTable.entry[1][level + kLevelTableHalf].suffix_class >= sl);
  return sl + (suffix_class(level < 0 ? -level : level) >= sl);
}

// The levels below the trailing ones, highest frequency first, after `prefix` (prefix_len <= 19 bits: the
// block's coeff_token and trailing-one signs, which go out with the first level). Level codes are at most
// 28 bits, so two go out in one put_long. Returns true on a baseline overflow (see level_overflow).
// Requires trailing_ones < total_coeff.
template <class Sink>
CAVLC_BLOCK_INLINE bool code_levels(Sink& out, const RunLevels& rl, uint32_t prefix, int prefix_len) {
  const int tc = rl.total_coeff, t1 = rl.trailing_ones;
  int suffix_length = (tc > 10 && t1 < 3) ? 1 : 0;
  bool overflow = false;
  int j = tc - 1 - t1;
  {  // the first level; after fewer than 3 trailing ones |level| >= 2, coded as |level| - 1
    const int level = rl.level[j--];
    const int reduce = (t1 < 3) * ((level >> 31) | 1);  // levelCode - 2: the level one closer to 0
    LevelCode c;
    if (static_cast<unsigned>(level + kLevelTableHalf) < 2u * kLevelTableHalf) {
      const LevelEntry& e = kLevelTable.entry[suffix_length][level + kLevelTableHalf - reduce];
      c = LevelCode{e.bits, e.len};
    } else {
      const tables::LevelVlc v =
          tables::level_vlc(tables::level_code_of(level) - (reduce ? 2 : 0), suffix_length);
      c = LevelCode{v.bits, v.len};
      overflow = v.overflow;
    }
    out.put_long((static_cast<uint64_t>(prefix) << c.len) | c.bits, prefix_len + c.len);
    suffix_length += suffix_length == 0;
    suffix_length = next_suffix_length(level, suffix_length);
  }
  for (; j >= 1; j -= 2) {  // suffix_length >= 1 from here
    const LevelCode a = level_code(rl.level[j], suffix_length, &overflow);
    suffix_length = next_suffix_length(rl.level[j], suffix_length);
    const LevelCode b = level_code(rl.level[j - 1], suffix_length, &overflow);
    suffix_length = next_suffix_length(rl.level[j - 1], suffix_length);
    out.put_long((static_cast<uint64_t>(a.bits) << b.len) | b.bits, a.len + b.len);
  }
  if (j == 0) {
    const LevelCode a = level_code(rl.level[0], suffix_length, &overflow);
    out.put(a.bits, a.len);
  }
  return overflow;
}

// suffix_class against next_suffix_length, for every suffixLength and the magnitudes around the thresholds.
constexpr bool suffix_class_matches() {
  for (int sl = 0; sl <= 6; ++sl)
    for (int a = 1; a <= 200; ++a) {
      const int s = sl == 0 ? 1 : sl;
      const int c = (a > 3) + (a > 6) + (a > 12) + (a > 24) + (a > 48);
      if (s + (c >= s) != tables::next_suffix_length(sl, a)) return false;
    }
  return true;
}
static_assert(suffix_class_matches(), "suffix_class gives tables::next_suffix_length");

// coeff_token_table(nC) for nC = -1..16, at index nC + 1.
struct CoeffTokenTableOfNc {
  uint8_t table[18];
};
constexpr CoeffTokenTableOfNc make_coeff_token_table_of_nc() {
  CoeffTokenTableOfNc t{};
  for (int nc = -1; nc <= 16; ++nc) t.table[nc + 1] = static_cast<uint8_t>(tables::coeff_token_table(nc));
  return t;
}
inline constexpr CoeffTokenTableOfNc kCoeffTokenTableOfNc = make_coeff_token_table_of_nc();

// Returns true on a baseline level overflow (code_levels).
template <class Sink>
CAVLC_BLOCK_INLINE bool code_block(Sink& out, const RunLevels& rl, int n, int nC) {
  const int tc = rl.total_coeff, t1 = rl.trailing_ones;
  const Vlc token = tables::kCoeffToken[kCoeffTokenTableOfNc.table[nC + 1]][tc][t1];
  if (tc == 0) {
    out.put(token);
    return false;
  }
  uint32_t signs = 0;  // coeff_token, then the trailing-one signs, highest frequency first (1 = negative)
  for (int j = tc - 1; j >= tc - t1; --j) signs = (signs << 1) | (rl.level[j] < 0 ? 1u : 0u);
  const uint32_t prefix = (static_cast<uint32_t>(token.val) << t1) | signs;
  bool overflow = false;
  if (t1 < tc)
    overflow = code_levels(out, rl, prefix, token.len + t1);
  else
    out.put(prefix, token.len + t1);

  if (tc < n) {  // total_zeros, then every run_before in one code (at most 9 + 25 bits)
    const Vlc tz = n == 4 ? tables::kTotalZerosChromaDC[tc - 1][rl.total_zeros]
                          : tables::kTotalZeros4x4[tc - 1][rl.total_zeros];
    const uint32_t runs = kRunBeforeOfMask.entry[rl.mask];
    const int runs_len = static_cast<int>(runs & 31);
    out.put_long((static_cast<uint64_t>(tz.val) << runs_len) | (runs >> 5), tz.len + runs_len);
  }
  return overflow;
}

// Codes one block into out; returns its TotalCoeff and raises *overflow (when given) on a level overflow.
template <class Sink>
CAVLC_BLOCK_INLINE int code(Sink& out, const int16_t* coeffs, int n, int nC, bool* overflow) {
  RunLevels rl;
  scan(coeffs, n, rl);
  const bool o = code_block(out, rl, n, nC);
  if (overflow) *overflow |= o;
  return rl.total_coeff;
}

}  // namespace block_code
}  // namespace cavlc
