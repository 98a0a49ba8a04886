#include "cavlc/cavlc.h"

#include "block_code.h"
#include "cavlc/tables.h"

#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)
#include <emmintrin.h>
#endif

namespace cavlc {
namespace {

using tables::Vlc;
using namespace block_code;

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
  void put_long(uint64_t val, int len) {  // up to 56 bits
    if (len > 32) {
      put(static_cast<uint32_t>(val >> 32), len - 32);
      len = 32;
    }
    put(static_cast<uint32_t>(val), len);
  }
  void finish() {
    if (pending > 32) {
      pending -= 32;
      bw.put(static_cast<uint32_t>((acc >> 32) & ((uint64_t{1} << pending) - 1)), pending);  // pending <= 32
      pending = 32;
    }
    if (pending) bw.put(static_cast<uint32_t>(acc & ((uint64_t{1} << pending) - 1)), pending);
  }
};

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

int write_block(vle::BitWriter& bw, const int16_t* coeffs, int n, int nC, bool* overflow) {
  RunLevels rl;
  scan(coeffs, n, rl);
  Writer out{bw};
  *overflow |= code_block(out, rl, n, nC);
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
  return rl.trailing_ones < rl.total_coeff && code_levels(out, rl, 0, 0);
}

}  // namespace cavlc
