#include "avc/residual.h"

#include <cstring>

#include "cavlc/tables.h"

namespace avc {
namespace residual_detail {
// Deliberately not constexpr and never defined: reaching them during constant evaluation fails the build.
void overlapping_codes();
void code_does_not_fit_table();
}  // namespace residual_detail

namespace {

using cavlc::tables::Vlc;
namespace detail = residual_detail;

inline int leading_zeros(uint32_t w) {  // 32 for w == 0
#if defined(__GNUC__) || defined(__clang__)
  return w ? __builtin_clz(w) : 32;
#else
  int z = 0;
  while (z < 32 && !(w & (0x80000000u >> z))) ++z;
  return z;
#endif
}

// ---- Decode tables, built at compile time from cavlc/tables.h -----------------------------------------
//
// Every code of these tables is a run of z leading zeros, a one, then at most K more bits (K = 3 for
// coeff_token, 2 for total_zeros and run_before), or all zeros. So a code is found from 32 peeked bits in
// one lookup at row z (clamped to R - 1, R - 1 = the longest code of the table) and column = the K bits
// after the first one; shorter codes fill every column their free bits allow. An all-zero code of length
// L fills rows L..R-1 (by prefix-freeness no other code has L leading zeros). An empty entry (len 0) is
// an invalid pattern. The builder stops the build on overlapping codes or a code that does not fit K / R.
struct Entry {
  uint8_t len;  // code length, 0 = no code
  uint8_t sym;  // coeff_token: TotalCoeff << 2 | TrailingOnes; total_zeros; run_before
};

template <int K, int R>
struct ClzTable {
  Entry e[R << K];
};

constexpr int bit_length(unsigned v) {
  int n = 0;
  for (; v; v >>= 1) ++n;
  return n;
}

template <int K, int R, class Code>
constexpr ClzTable<K, R> build_clz_table(Code code, int count) {
  ClzTable<K, R> t{};
  auto set = [&t](int row, int col, Vlc c, int sym) {
    Entry& e = t.e[(row << K) | col];
    if (e.len) detail::overlapping_codes();
    e = Entry{c.len, static_cast<uint8_t>(sym)};
  };
  for (int s = 0; s < count; ++s) {
    const Vlc c = code(s);
    if (!c.len) continue;
    if (c.len > R - 1) detail::code_does_not_fit_table();
    if (c.val == 0) {
      for (int row = c.len; row < R; ++row)
        for (int col = 0; col < (1 << K); ++col) set(row, col, c, s);
      continue;
    }
    const int tail = bit_length(c.val) - 1;  // bits after the first one
    const int zeros = c.len - 1 - tail;
    if (tail > K) detail::code_does_not_fit_table();
    const int first = static_cast<int>(c.val & ((1u << tail) - 1)) << (K - tail);
    for (int col = first; col < first + (1 << (K - tail)); ++col) set(zeros, col, c, s);
  }
  return t;
}

template <int K, int R>
inline Entry lookup(const ClzTable<K, R>& t, uint32_t w) {
  int z = leading_zeros(w);
  z = z < R - 1 ? z : R - 1;
  const uint32_t col = ((w << z) << 1) >> (32 - K);  // K > 0 for every table here
  return t.e[(z << K) | col];
}

// coeff_token, Table 9-5: the VLC columns (tables 0, 1, 2 and 4 of cavlc::tables, here 0..3), 16 bits at
// most. The FLC column (8 <= nC) is a plain 6-bit table.
using CoeffTokenTable = ClzTable<3, 17>;
struct CoeffTokenTables {
  CoeffTokenTable vlc[4];
  Entry flc[64];
};
constexpr CoeffTokenTables make_coeff_token_tables() {
  using cavlc::tables::kCoeffToken;
  CoeffTokenTables t{};
  const int source[4] = {0, 1, 2, 4};
  for (int i = 0; i < 4; ++i) {
    const int src = source[i];
    t.vlc[i] = build_clz_table<3, 17>([src](int s) { return kCoeffToken[src][s >> 2][s & 3]; }, 17 * 4);
  }
  for (int s = 0; s < 17 * 4; ++s) {
    const Vlc c = kCoeffToken[3][s >> 2][s & 3];
    if (!c.len) continue;
    if (c.len != 6 || t.flc[c.val].len) detail::overlapping_codes();
    t.flc[c.val] = Entry{c.len, static_cast<uint8_t>(s)};
  }
  return t;
}
constexpr CoeffTokenTables kCoeffTokenDec = make_coeff_token_tables();
constexpr int kCoeffTokenMaxBits = 16;

// total_zeros: [tzVlcIndex - 1] Tables 9-7 / 9-8 (4x4 blocks), [15 + tzVlcIndex - 1] Table 9-9(a)
// (chroma DC). 9 bits at most.
using TotalZerosTable = ClzTable<2, 10>;
struct TotalZerosTables {
  TotalZerosTable t[18];
};
constexpr TotalZerosTables make_total_zeros_tables() {
  using cavlc::tables::kTotalZeros4x4;
  using cavlc::tables::kTotalZerosChromaDC;
  TotalZerosTables t{};
  for (int i = 0; i < 15; ++i)
    t.t[i] = build_clz_table<2, 10>([i](int s) { return kTotalZeros4x4[i][s]; }, 16);
  for (int i = 0; i < 3; ++i)
    t.t[15 + i] = build_clz_table<2, 10>([i](int s) { return kTotalZerosChromaDC[i][s]; }, 4);
  return t;
}
constexpr TotalZerosTables kTotalZerosDec = make_total_zeros_tables();
constexpr int kTotalZerosMaxBits = 9;

// run_before, Table 9-10, zerosLeft > 6 (11 bits at most); zerosLeft 1..6: kRunPairDec below.
constexpr ClzTable<2, 12> kRunBeforeDec =
    build_clz_table<2, 12>([](int s) { return cavlc::tables::kRunBefore[6][s]; }, 15);
constexpr int kRunBeforeMaxBits = 11;

// run_before at zerosLeft 1..6, two runs a lookup: [zerosLeft - 1][the next 6 bits]. Those tables' codes
// are at most 3 bits and complete (every pattern is a code), so 6 bits always hold two runs and none is
// invalid or longer than zerosLeft. A first run that leaves no zeros makes the second 0 without bits, as
// 7.3.5.3.2 reads none then.
struct RunPair {
  uint8_t run1, run2;  // the two runs
  uint8_t len1, len2;  // bits of the first run; of both
};
struct RunPairTables {
  RunPair e[6][64];
};
constexpr RunPair short_run(int zeros_left, unsigned bits, int avail) {  // bits: avail bits, MSB first
  const auto& codes = cavlc::tables::kRunBefore[zeros_left - 1];
  for (int run = 0; run <= zeros_left; ++run) {
    const Vlc c = codes[run];
    if (c.len > 3) detail::code_does_not_fit_table();
    if (c.len <= avail && (bits >> (avail - c.len)) == c.val)
      return RunPair{static_cast<uint8_t>(run), 0, c.len, 0};
  }
  detail::code_does_not_fit_table();  // incomplete table
  return RunPair{};
}
constexpr RunPairTables make_run_pair_tables() {
  RunPairTables t{};
  for (int zl = 1; zl <= 6; ++zl)
    for (unsigned bits = 0; bits < 64; ++bits) {
      const RunPair first = short_run(zl, bits, 6);
      const int left = zl - first.run1;
      const RunPair second = left ? short_run(left, bits & ((1u << (6 - first.len1)) - 1), 6 - first.len1) : RunPair{};
      t.e[zl - 1][bits] = RunPair{first.run1, second.run1, first.len1, static_cast<uint8_t>(first.len1 + second.len1)};
    }
  return t;
}
constexpr RunPairTables kRunPairDec = make_run_pair_tables();

// Spot checks of the builder against the standard's strings (the tests cover every code and pattern).
static_assert(kCoeffTokenDec.vlc[0].e[16 << 3].len == 0, "16 zeros are no coeff_token of 0 <= nC < 2");
static_assert(kCoeffTokenDec.flc[3].len == 6 && kCoeffTokenDec.flc[3].sym == 0, "FLC 0000 11: TotalCoeff 0");
static_assert(kCoeffTokenDec.flc[2].len == 0, "FLC 0000 10 (TotalCoeff 1, TrailingOnes 2) is invalid");
static_assert(kTotalZerosDec.t[1].e[9 << 2].sym == 14, "tzVlcIndex 2: 0000 00 is total_zeros 14");
static_assert(kRunBeforeDec.e[11 << 2].len == 0, "run_before, zerosLeft > 6: 11 zeros are no code");

// Largest baseline level: level_prefix 15 at suffixLength 6 with a 12-bit suffix, plus 2 for a reduced
// first level; int16 holds it, so no range check is needed after decoding.
static_assert(((15 << 6) + 4095 + 2 + 2) / 2 <= 32767, "baseline levels fit int16");

// ---- Bit cursor ---------------------------------------------------------------------------------------
// The reader's state in registers: a 64-bit cache holding the bits from pos on (MSB first, at least 56 of
// them valid between calls), refilled after every skip without a data-dependent branch: one unaligned
// 8-byte load at the next byte not yet in the cache, shifted under the valid bits, and the byte pointer
// moved by the whole bytes that fit (F. Giesen's "variant 4"). The load's address is known a symbol ahead,
// so its latency stays off the symbols' path. Bits the cache holds below the valid ones are the data's
// (or zeros), so OR-ing the same bits in again changes nothing. Near the end (the load would pass the
// reader's whole bytes) bytes come one by one, with the end masked. Bits at or past the end read as
// zeros; pos may pass the end (the caller checks), nothing is read there.
class Cursor {
 public:
  explicit Cursor(const BitReader& br)
      : data_(br.data()), next_byte_(br.pos() >> 3), end_(br.end()),
        fast_last_byte_(static_cast<int64_t>(br.end() >> 3) - 8) {
    refill();
    skip(static_cast<int>(br.pos() & 7));
  }

  uint64_t pos() const { return next_byte_ * 8 - static_cast<uint64_t>(valid_); }
  bool overrun() const { return pos() > end_; }
  // n <= 32.
  void skip(int n) {
    cache_ <<= n;
    valid_ -= n;
    refill();
  }

  // The 32 bits from pos, MSB first.
  uint32_t peek32() const { return static_cast<uint32_t>(cache_ >> 32); }

  // err, unless the bits that may have decided it (span bits from pos) reach past the end: then the
  // data more likely stopped early than held a bad code.
  int fail(int err, int span) const { return pos() + static_cast<uint64_t>(span) > end_ ? kResidualTruncated : err; }

 private:
  static uint64_t big_endian(const uint8_t* b) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | b[i];
    return v;
  }
  void refill() {
    if (static_cast<int64_t>(next_byte_) <= fast_last_byte_) {
      uint64_t w;
      std::memcpy(&w, data_ + next_byte_, 8);
#if defined(__GNUC__) || defined(__clang__)
      w = __builtin_bswap64(w);
#else
      w = big_endian(reinterpret_cast<const uint8_t*>(&w));
#endif
      cache_ |= w >> valid_;
      next_byte_ += static_cast<uint64_t>((63 - valid_) >> 3);
      valid_ |= 56;
      return;
    }
    refill_near_end();
  }
  void refill_near_end() {
    for (; valid_ <= 56; valid_ += 8, ++next_byte_) {
      const uint64_t bit = next_byte_ * 8;
      uint64_t byte = bit < end_ ? data_[next_byte_] : 0u;
      if (bit < end_ && end_ - bit < 8) byte &= 0xffu << (8 - (end_ - bit));
      cache_ |= byte << (56 - valid_);
    }
  }

  const uint8_t* data_;
  uint64_t next_byte_;      // the first byte not yet in the cache
  uint64_t end_;
  int64_t fast_last_byte_;  // last byte index from which an 8-byte load stays before the end
  uint64_t cache_ = 0;      // bits from pos on, MSB first
  int valid_ = 0;           // how many of them are loaded (>= 56 between calls)
};

// One residual_block_cavlc(). dst[k] receives the level at scan position k of the block (the caller
// offsets dst by one for AC blocks); dst[0..max) must be zero on entry. Does not check the end (caller).
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
inline int decode_block_in(Cursor& c, int nC, int max, int16_t* dst) {
  uint32_t w = c.peek32();
  const Entry token = nC >= 8 ? kCoeffTokenDec.flc[w >> 26]
                              : lookup(kCoeffTokenDec.vlc[nC < 0 ? 3 : nC < 2 ? 0 : nC < 4 ? 1 : 2], w);
  if (!token.len) return c.fail(kResidualInvalidCode, kCoeffTokenMaxBits);
  c.skip(token.len);
  const int tc = token.sym >> 2, t1 = token.sym & 3;
  if (tc > max) return c.fail(kResidualTooManyCoeffs, 0);
  if (tc == 0) return 0;

  int level[16];  // highest frequency first
  if (t1) {
    w = c.peek32();
    for (int i = 0; i < t1; ++i) level[i] = 1 - 2 * static_cast<int>((w >> (31 - i)) & 1);
    c.skip(t1);
  }
  // Levels (9.2.2.1), written without data-dependent branches but the error: the suffix read as a shift
  // that gives 0 for a 0-bit suffix. The first level holds every special case (the escapes at
  // suffixLength 0, the reduction after fewer than 3 trailing ones) and leaves suffixLength 1 or 2.
  if (tc > t1) {
    w = c.peek32();
    int prefix = leading_zeros(w);
    if (prefix > 15) return c.fail(kResidualLevelPrefix, 16);
    const int suffix_length = (tc > 10 && t1 < 3) ? 1 : 0;
    const bool escape15 = prefix == 15, escape14 = prefix == 14 && suffix_length == 0;
    const int first_size = escape15 ? 12 : escape14 ? 4 : suffix_length;
    const int first_suffix = static_cast<int>(((w << (prefix + 1)) >> 1) >> (31 - first_size));
    const int first_code = (prefix << suffix_length) + first_suffix + (escape15 && suffix_length == 0 ? 15 : 0) +
                           (t1 < 3 ? 2 : 0);
    c.skip(prefix + 1 + first_size);
    const int first_magnitude = (first_code + 2) >> 1;
    level[t1] = (first_code & 1) ? -first_magnitude : first_magnitude;
    // From here suffixLength >= 1 and no level is reduced, so levelCode = (prefix << sl) + suffix with
    // suffix < 1 << sl (or prefix 15), and |level| > 3 << (sl - 1) (Table 9-3's step) iff prefix >= 3:
    // the step depends on the prefix alone, not on the decoded level.
    int sl = first_magnitude > 3 ? 2 : 1;
    for (int i = t1 + 1; i < tc; ++i) {
      w = c.peek32();
      prefix = leading_zeros(w);
      if (prefix > 15) return c.fail(kResidualLevelPrefix, 16);
      const int suffix_size = prefix == 15 ? 12 : sl;
      const int suffix = static_cast<int>(((w << (prefix + 1)) >> 1) >> (31 - suffix_size));
      const int code = (prefix << sl) + suffix;
      c.skip(prefix + 1 + suffix_size);
      const int magnitude = (code + 2) >> 1;
      level[i] = (code & 1) ? -magnitude : magnitude;
      sl += (prefix >= 3) & (sl < 6);
    }
  }

  int zeros_left = 0;
  if (tc < max) {
    const Entry tz = lookup(kTotalZerosDec.t[(max == 4 ? 15 : 0) + tc - 1], c.peek32());
    if (!tz.len) return c.fail(kResidualInvalidCode, kTotalZerosMaxBits);
    c.skip(tz.len);
    zeros_left = tz.sym;
    if (tc + zeros_left > max) return c.fail(kResidualPastBlockEnd, 0);
  }
  int pos = tc + zeros_left - 1;  // scan position of level[0]
  int i = 0;
  for (; i < tc - 1 && zeros_left > 6; ++i) {
    dst[pos] = static_cast<int16_t>(level[i]);
    const Entry rb = lookup(kRunBeforeDec, c.peek32());
    if (!rb.len) return c.fail(kResidualInvalidCode, kRunBeforeMaxBits);
    c.skip(rb.len);
    const int run = rb.sym;
    if (run > zeros_left) return c.fail(kResidualPastBlockEnd, 0);
    zeros_left -= run;
    pos -= run + 1;
  }
  for (; i < tc - 2 && zeros_left > 0; i += 2) {
    const RunPair rp = kRunPairDec.e[zeros_left - 1][c.peek32() >> 26];
    c.skip(rp.len2);
    zeros_left -= rp.run1 + rp.run2;
    dst[pos] = static_cast<int16_t>(level[i]);
    pos -= rp.run1 + 1;
    dst[pos] = static_cast<int16_t>(level[i + 1]);
    pos -= rp.run2 + 1;
  }
  if (i < tc - 1 && zeros_left > 0) {  // one run left to read
    const RunPair rp = kRunPairDec.e[zeros_left - 1][c.peek32() >> 26];
    c.skip(rp.len1);
    dst[pos] = static_cast<int16_t>(level[i]);
    pos -= rp.run1 + 1;
    ++i;
  }
  for (; i < tc - 1; ++i) dst[pos--] = static_cast<int16_t>(level[i]);  // no zeros left
  dst[pos] = static_cast<int16_t>(level[tc - 1]);  // pos == zeros_left: the lowest level's run is implied
  return tc;
}

// decode_block_in on a local copy of the cursor: its state stays in registers (through the reference it
// went to memory and back on every symbol).
inline int decode_block(Cursor& cursor, int nC, int max, int16_t* dst) {
  Cursor c = cursor;
  const int r = decode_block_in(c, nC, max, dst);
  cursor = c;
  return r;
}

bool valid_block_args(int nC, int max) {
  return max == 4 ? nC == -1 : (max == 15 || max == 16) && nC >= 0 && nC <= 16;
}

// luma4x4BlkIdx -> raster index y * 4 + x of the 4x4 block (6.4.3), as cavlc's encoder walks them.
constexpr uint8_t kBlkToRaster[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};

}  // namespace

const char* residual_error_name(int err) {
  switch (err) {
    case kResidualInvalidCode: return "invalid code";
    case kResidualTooManyCoeffs: return "TotalCoeff above maxNumCoeff";
    case kResidualLevelPrefix: return "level_prefix > 15 (not baseline)";
    case kResidualPastBlockEnd: return "coefficients past the end of the block";
    case kResidualTruncated: return "data end inside the block";
    case kResidualBadArgument: return "bad argument";
  }
  return "?";
}

const char* residual_block_name(cavlc::BlockCat cat) {
  switch (cat) {
    case cavlc::kLumaDC: return "Intra16x16 DC";
    case cavlc::kLumaAC: return "Intra16x16 AC";
    case cavlc::kLuma4x4: return "luma 4x4";
    case cavlc::kChromaDC: return "chroma DC";
    case cavlc::kChromaAC: return "chroma AC";
  }
  return "?";
}

int decode_residual_block(BitReader& br, int nC, int max_num_coeff, int16_t* coeffs) {
  if (!valid_block_args(nC, max_num_coeff)) {
    br.fail();
    return kResidualBadArgument;
  }
  if (!br.ok()) return kResidualTruncated;
  std::memset(coeffs, 0, (max_num_coeff == 4 ? 4 : 16) * sizeof(int16_t));
  Cursor c(br);
  int r = decode_block(c, nC, max_num_coeff, max_num_coeff == 15 ? coeffs + 1 : coeffs);
  if (r >= 0 && c.overrun()) r = kResidualTruncated;
  if (r < 0) {
    br.fail();
    return r;
  }
  br.skip(c.pos() - br.pos());
  return r;
}

int decode_mb_residual(BitReader& br, gpuec_mb_kind kind, unsigned cbp, const ResidualNeighbours& nb,
                       gpuec_mb& rec, cavlc::MbTotals& totals, ResidualBlockRef* failed, uint8_t* dc_totals) {
  const unsigned cbp_luma = cbp & 15, cbp_chroma = cbp >> 4;
  const bool i16 = kind == GPUEC_MB_I16x16;
  if ((kind != GPUEC_MB_NORMAL && !i16) || cbp_chroma > 2 || (i16 && cbp_luma != 0 && cbp_luma != 15)) {
    br.fail();
    return kResidualBadArgument;
  }
  if (!br.ok()) return kResidualTruncated;

  auto& cf = rec.u.coef;
  std::memset(&cf, 0, sizeof cf);
  rec.kind = static_cast<uint8_t>(kind);
  rec.cbp = static_cast<uint8_t>(cbp);
  rec.coef_order = GPUEC_COEF_SCAN;
  totals = cavlc::MbTotals{};
  uint8_t dc_unused[3];
  uint8_t* const dc = dc_totals ? dc_totals : dc_unused;
  dc[0] = dc[1] = dc[2] = 0;

  // nC of the luma block at raster (x, y) and of chroma AC block (x, y) of component ch (9.2.1): blocks
  // of this macroblock decoded so far (totals), or of the neighbouring macroblocks.
  const cavlc::MbTotals* left = nb.left;
  const cavlc::MbTotals* top = nb.top;
  auto luma_nc = [&](int x, int y) {
    const bool aa = x > 0 || left, ab = y > 0 || top;
    const int na = x > 0 ? totals.luma[y * 4 + x - 1] : aa ? left->luma[y * 4 + 3] : 0;
    const int nbv = y > 0 ? totals.luma[(y - 1) * 4 + x] : ab ? top->luma[12 + x] : 0;
    return cavlc::predict_nc(aa, na, ab, nbv);
  };
  auto chroma_nc = [&](int ch, int x, int y) {
    const bool aa = x > 0 || left, ab = y > 0 || top;
    const int na = x > 0 ? totals.chroma[ch][y * 2] : aa ? left->chroma[ch][y * 2 + 1] : 0;
    const int nbv = y > 0 ? totals.chroma[ch][x] : ab ? top->chroma[ch][2 + x] : 0;
    return cavlc::predict_nc(aa, na, ab, nbv);
  };

  Cursor c(br);
  int result = 0;
  ResidualBlockRef at;
  // Decodes one block; on failure records where and returns false.
  auto block = [&](cavlc::BlockCat cat, int index, int nC, int max, int16_t* dst) {
    int r = decode_block(c, nC, max, dst);
    if (r >= 0 && c.overrun()) r = kResidualTruncated;
    if (r < 0) {
      result = r;
      at = ResidualBlockRef{cat, index};
    }
    return r;
  };

  if (i16) {
    const int n_dc = block(cavlc::kLumaDC, 0, luma_nc(0, 0), 16, cf.luma_dc);
    if (n_dc < 0) goto fail;
    dc[0] = static_cast<uint8_t>(n_dc);
    if (cbp_luma)
      for (int b = 0; b < 16; ++b) {
        const int r = kBlkToRaster[b];
        const int n = block(cavlc::kLumaAC, b, luma_nc(r & 3, r >> 2), 15, cf.luma[b] + 1);
        if (n < 0) goto fail;
        totals.luma[r] = static_cast<uint8_t>(n);
      }
  } else if (cbp_luma) {
    for (int b = 0; b < 16; ++b) {
      if (!((cbp_luma >> (b >> 2)) & 1)) {
        b |= 3;  // next quadrant
        continue;
      }
      const int r = kBlkToRaster[b];
      const int n = block(cavlc::kLuma4x4, b, luma_nc(r & 3, r >> 2), 16, cf.luma[b]);
      if (n < 0) goto fail;
      totals.luma[r] = static_cast<uint8_t>(n);
    }
  }
  if (cbp_chroma) {
    for (int ch = 0; ch < 2; ++ch) {
      const int n = block(cavlc::kChromaDC, ch, -1, 4, cf.chroma_dc[ch]);
      if (n < 0) goto fail;
      dc[1 + ch] = static_cast<uint8_t>(n);
    }
  }
  if (cbp_chroma == 2)
    for (int ch = 0; ch < 2; ++ch)
      for (int b = 0; b < 4; ++b) {
        const int n = block(cavlc::kChromaAC, ch * 4 + b, chroma_nc(ch, b & 1, b >> 1), 15,
                            cf.chroma_ac[ch * 4 + b] + 1);
        if (n < 0) goto fail;
        totals.chroma[ch][b] = static_cast<uint8_t>(n);
      }
  br.skip(c.pos() - br.pos());
  return 0;

fail:
  br.fail();
  if (failed) *failed = at;
  return result;
}

}  // namespace avc
