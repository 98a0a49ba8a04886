#include "cavlc/slice.h"

#include "cavlc/cavlc.h"
#include "cavlc/frame_coder.h"
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "block_code.h"
#include "commit.h"
#include "neighbours.h"

#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)
#include <emmintrin.h>
#endif

namespace cavlc {
namespace {

bool luma_coded(const gpuec_mb& m, int blk) {
  if (m.kind == GPUEC_MB_I16x16) return (m.cbp & 15) != 0;
  return (m.cbp >> (blk >> 2)) & 1;
}

// A 4x4 block's 16 levels from raster to scan order.
inline void raster_to_scan(const int16_t* raster, int16_t* scan) {
  for (int i = 0; i < 16; ++i) scan[i] = raster[kRasterOfScan[i]];
}

// The exact verdict: level_overflow on every coded block, in scan order. Taken only when some coded
// level is larger than kMaxSafeAbsLevel in magnitude: none in the captures at QP >= 12, up to a quarter
// of the macroblocks of synthetic content at QP 0. Kept out of line: inlined, its scratch block gave
// mb_totals a stack frame and more saved registers on the fast path.
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
bool any_level_overflow(const gpuec_mb& m) {
  const bool i16 = m.kind == GPUEC_MB_I16x16, raster = m.coef_order == GPUEC_COEF_RASTER;
  const int cbp_chroma = m.cbp >> 4;
  const auto& c = m.u.coef;
  int16_t tmp[16];
  auto scan = [&](const int16_t* blk) -> const int16_t* {  // valid until the next call
    if (!raster) return blk;
    raster_to_scan(blk, tmp);
    return tmp;
  };
  bool overflow = false;
  for (int b = 0; b < 16; ++b)
    if (luma_coded(m, b))
      overflow |= i16 ? level_overflow(scan(c.luma[b]) + 1, 15) : level_overflow(scan(c.luma[b]), 16);
  if (i16) overflow |= level_overflow(scan(c.luma_dc), 16);
  if (cbp_chroma)
    for (const auto& dc : c.chroma_dc) overflow |= level_overflow(dc, 4);
  if (cbp_chroma == 2)
    for (const auto& ac : c.chroma_ac) overflow |= level_overflow(scan(ac) + 1, 15);
  return overflow;
}

#if defined(__SSE2__) && !defined(GPUEC_NO_SIMD)  // GPUEC_NO_SIMD: the portable code, for its test

// Running lane-wise maximum and minimum of the levels seen (both start at 0, a level that is always safe).
struct Range {
  __m128i max = _mm_setzero_si128(), min = _mm_setzero_si128();
  void add(__m128i v) {
    max = _mm_max_epi16(max, v);
    min = _mm_min_epi16(min, v);
  }
  bool beyond(int bound) const {
    const __m128i out = _mm_or_si128(_mm_cmpgt_epi16(max, _mm_set1_epi16(static_cast<int16_t>(bound))),
                                     _mm_cmplt_epi16(min, _mm_set1_epi16(static_cast<int16_t>(-bound))));
    return _mm_movemask_epi8(out) != 0;
  }
};

// One step of a transposing horizontal sum: with a holding the byte counts of blocks [A] and b those
// of blocks [B] in groups of K bytes, the result holds [A][B] in groups of 2K, each byte the sum of two.
// Four steps turn 16 vectors of 16 per-level flags into one vector of 16 block sums.
inline __m128i sum_step8(__m128i a, __m128i b) {
  return _mm_add_epi8(_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b));
}
inline __m128i sum_step16(__m128i a, __m128i b) {
  return _mm_add_epi8(_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b));
}
inline __m128i sum_step32(__m128i a, __m128i b) {
  return _mm_add_epi8(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
}
inline __m128i sum_step64(__m128i a, __m128i b) {
  return _mm_add_epi8(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
}

// A block's 16 levels: byte i is 0xFF (-1) when level i is 0. kAc: level [0] is not part of the block
// (Intra16x16 AC, chroma AC) and reads as 0. Adds the levels to r.
template <bool kAc>
inline __m128i zero_flags(const int16_t* c, Range& r) {
  const __m128i zero = _mm_setzero_si128();
  __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 8));
  if (kAc) lo = _mm_and_si128(lo, _mm_setr_epi16(0, -1, -1, -1, -1, -1, -1, -1));
  r.add(lo);
  r.add(hi);
  return _mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero));
}

// Four consecutive blocks: minus their zero counts (mod 256) as bytes [b0 b1 b2 b3] repeated four
// times, each byte a partial sum over four levels; their levels go into r.
template <bool kAc>
inline __m128i quad_zeros(const int16_t (*blk)[16], Range& r) {
  return sum_step16(sum_step8(zero_flags<kAc>(blk[0], r), zero_flags<kAc>(blk[1], r)),
                    sum_step8(zero_flags<kAc>(blk[2], r), zero_flags<kAc>(blk[3], r)));
}

// The 16 luma totals in luma4x4BlkIdx order, 16 - zeros per block. A quadrant outside the cbp is not
// read: it counts as 16 zeros per block (partial sums of -4), total 0 (an Intra16x16 cbp luma is 0 or
// 15: none or all). With kAc, level [0] reads as a zero, so the total is 15 - zeros of [1..15].
template <bool kAc>
inline __m128i luma_totals(const gpuec_mb& m, Range& r) {
  const auto& l = m.u.coef.luma;
  auto quad = [&](int q) {
    return (m.cbp >> q) & 1 ? quad_zeros<kAc>(l + 4 * q, r) : _mm_set1_epi8(-4);
  };
  const __m128i z = sum_step64(sum_step32(quad(0), quad(1)), sum_step32(quad(2), quad(3)));
  return _mm_add_epi8(z, _mm_set1_epi8(16));
}

// Totals of the blocks of a coded macroblock (kind NORMAL or I16x16, cbp valid) into t; returns
// whether some coded level is beyond kMaxSafeAbsLevel in magnitude. Either coefficient order: counts and
// magnitudes do not depend on it, and the excluded level [0] of AC blocks is the DC in both.
bool coded_totals(const gpuec_mb& m, uint8_t t[GPUEC_TC_COUNT]) {
  const auto& c = m.u.coef;
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  const int cbp_luma = m.cbp & 15, cbp_chroma = m.cbp >> 4;
  Range r;

  __m128i luma = _mm_setzero_si128();
  if (cbp_luma) luma = i16 ? luma_totals<true>(m, r) : luma_totals<false>(m, r);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(t + GPUEC_TC_LUMA), luma);

  __m128i chroma_ac = _mm_setzero_si128();
  if (cbp_chroma == 2) {
    const __m128i w = sum_step32(quad_zeros<true>(c.chroma_ac + 0, r), quad_zeros<true>(c.chroma_ac + 4, r));
    chroma_ac = _mm_add_epi8(_mm_add_epi8(w, _mm_srli_si128(w, 8)), _mm_set1_epi8(16));
  }
  _mm_storel_epi64(reinterpret_cast<__m128i*>(t + GPUEC_TC_CHROMA_AC), chroma_ac);

  t[GPUEC_TC_LUMA_DC] = 0;
  if (i16) {
    const __m128i nz = _mm_andnot_si128(zero_flags<false>(c.luma_dc, r), _mm_set1_epi8(1));
    const __m128i s = _mm_sad_epu8(nz, _mm_setzero_si128());
    t[GPUEC_TC_LUMA_DC] = static_cast<uint8_t>(_mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4));
  }

  t[GPUEC_TC_CHROMA_DC] = t[GPUEC_TC_CHROMA_DC + 1] = 0;
  if (cbp_chroma) {  // Cb in lanes 0..3, Cr in 4..7: one 16-bit flag per level, one 64-bit sum per component
    const __m128i dc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.chroma_dc));
    const __m128i nz = _mm_andnot_si128(_mm_cmpeq_epi16(dc, _mm_setzero_si128()), _mm_set1_epi16(1));
    const __m128i s = _mm_sad_epu8(nz, _mm_setzero_si128());
    t[GPUEC_TC_CHROMA_DC] = static_cast<uint8_t>(_mm_cvtsi128_si32(s));
    t[GPUEC_TC_CHROMA_DC + 1] = static_cast<uint8_t>(_mm_extract_epi16(s, 4));
    r.add(dc);
  }
  return r.beyond(kMaxSafeAbsLevel);
}

#else  // portable: block by block, over the coded levels only

// Sets *tc to the TotalCoeff of levels [first, first + n) of c and raises *max_abs to their largest
// |level|.
inline void scan_block(const int16_t* c, int first, int n, uint8_t* tc, int* max_abs) {
  int count = 0, big = *max_abs;
  for (int i = first; i < first + n; ++i) {
    count += c[i] != 0;
    const int a = c[i] < 0 ? -c[i] : c[i];
    big = a > big ? a : big;
  }
  *tc = static_cast<uint8_t>(count);
  *max_abs = big;
}

// As the SSE2 coded_totals: either coefficient order.
bool coded_totals(const gpuec_mb& m, uint8_t t[GPUEC_TC_COUNT]) {
  const auto& c = m.u.coef;
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  const int cbp_chroma = m.cbp >> 4;
  int max_abs = 0;
  for (int b = 0; b < 16; ++b) {
    t[GPUEC_TC_LUMA + b] = 0;
    if (luma_coded(m, b)) scan_block(c.luma[b], i16 ? 1 : 0, i16 ? 15 : 16, &t[GPUEC_TC_LUMA + b], &max_abs);
  }
  t[GPUEC_TC_LUMA_DC] = 0;
  if (i16) scan_block(c.luma_dc, 0, 16, &t[GPUEC_TC_LUMA_DC], &max_abs);
  for (int ch = 0; ch < 2; ++ch) {
    t[GPUEC_TC_CHROMA_DC + ch] = 0;
    if (cbp_chroma) scan_block(c.chroma_dc[ch], 0, 4, &t[GPUEC_TC_CHROMA_DC + ch], &max_abs);
  }
  for (int b = 0; b < 8; ++b) {
    t[GPUEC_TC_CHROMA_AC + b] = 0;
    if (cbp_chroma == 2) scan_block(c.chroma_ac[b], 1, 15, &t[GPUEC_TC_CHROMA_AC + b], &max_abs);
  }
  return max_abs > kMaxSafeAbsLevel;
}

#endif

}  // namespace

int mb_totals(const gpuec_mb& m, uint8_t t[GPUEC_TC_COUNT]) {
  const int cbp_luma = m.cbp & 15, cbp_chroma = m.cbp >> 4;
  if (m.kind > GPUEC_MB_PCM || cbp_chroma > 2 ||
      (m.kind == GPUEC_MB_I16x16 && cbp_luma != 0 && cbp_luma != 15))
    return -1;
  if (m.kind == GPUEC_MB_SKIP || m.kind == GPUEC_MB_PCM) {  // coef_order ignored
    const uint8_t v = m.kind == GPUEC_MB_PCM ? 16 : 0;
    for (int i = 0; i < GPUEC_TC_COUNT; ++i) t[i] = v;
    return 0;
  }
  if (m.coef_order > GPUEC_COEF_RASTER) return -1;
  // No level within kMaxSafeAbsLevel can overflow (cavlc.h), so the exact (slow) check runs only past it.
  return coded_totals(m, t) && any_level_overflow(m) ? 1 : 0;
}

const gpuec_mb& scan_order_record(const gpuec_mb& m, gpuec_mb& scratch) {
  if (m.coef_order != GPUEC_COEF_RASTER || (m.kind != GPUEC_MB_NORMAL && m.kind != GPUEC_MB_I16x16)) return m;
  scratch = m;
  const auto& c = m.u.coef;
  auto& d = scratch.u.coef;
  for (int b = 0; b < 16; ++b) raster_to_scan(c.luma[b], d.luma[b]);
  for (int b = 0; b < 8; ++b) raster_to_scan(c.chroma_ac[b], d.chroma_ac[b]);
  raster_to_scan(c.luma_dc, d.luma_dc);
  scratch.coef_order = GPUEC_COEF_SCAN;
  return scratch;
}

namespace {

// Raster-run slices (x264): a macroblock before first_mb belongs to another slice. With a slice map
// (slice groups): the neighbour's slice decides.
struct SameSlice {
  int first_mb;
  const int32_t* slice_of_mb;
  int32_t slice_id;
  bool operator()(int, int nb) const { return slice_of_mb ? slice_of_mb[nb] == slice_id : nb >= first_mb; }
};
using Neighbours = NcPredictor<SameSlice>;

// Writes one macroblock's residual (7.3.5.3) and fills its totals as neighbours will see them. addr: its
// index in nb's totals (the address in the frame, or in the frame part). With kReport, also tc: the
// record of mb_totals (GPUEC_TC_COUNT entries), and *overflow set on a level overflow (else untouched).
// Out: vle::BitWriter (through write_block), or block_code::WordWriter (the block coder inlined). I_PCM's
// alignment is the writer's position in the slice's output.
template <bool kReport, class Nb, class Out>
CAVLC_BLOCK_INLINE void encode_mb(const gpuec_mb& m, int addr, const Nb& nb, MbTotals& cur, Out& bw, uint8_t* tc = nullptr,
               bool* overflow = nullptr) {
  constexpr bool kBitWriter = std::is_same_v<Out, vle::BitWriter>;
  cur = MbTotals{};
  auto block = [&](const int16_t* coeffs, int n, int nc) CAVLC_BLOCK_INLINE_LAMBDA {
    if constexpr (kBitWriter)
      return kReport ? write_block(bw, coeffs, n, nc, overflow) : write_block(bw, coeffs, n, nc);
    else
      return block_code::code(bw, coeffs, n, nc, kReport ? overflow : nullptr);
  };
  if (m.kind == GPUEC_MB_SKIP) return;
  if (m.kind == GPUEC_MB_PCM) {
    for (auto& v : cur.luma) v = 16;
    for (auto& c : cur.chroma)
      for (auto& v : c) v = 16;
    if (kReport)
      for (int b = 0; b < GPUEC_TC_COUNT; ++b) tc[b] = 16;
    if constexpr (kBitWriter) {
      bw.align_zero();  // pcm_alignment_zero_bit
      for (uint8_t s : m.u.pcm) bw.put(s, 8);
    } else {
      bw.put_aligned_bytes(m.u.pcm, sizeof m.u.pcm);
    }
    return;
  }
  const auto& c = m.u.coef;
  const int cbp_chroma = m.cbp >> 4;
  if (m.kind == GPUEC_MB_I16x16) {
    const int dc = block(c.luma_dc, 16, nb.luma(addr, cur, 0, 0));  // block 0's neighbours
    if (kReport) tc[GPUEC_TC_LUMA_DC] = static_cast<uint8_t>(dc);
    if (m.cbp & 15)
      for (int b = 0; b < 16; ++b) {
        const int r = kBlkToRaster[b];
        cur.luma[r] = static_cast<uint8_t>(block(c.luma[b] + 1, 15, nb.luma(addr, cur, r & 3, r >> 2)));
      }
  } else {
    for (int b = 0; b < 16; ++b) {
      if (!((m.cbp >> (b >> 2)) & 1)) continue;
      const int r = kBlkToRaster[b];
      cur.luma[r] = static_cast<uint8_t>(block(c.luma[b], 16, nb.luma(addr, cur, r & 3, r >> 2)));
    }
  }
  if (cbp_chroma) {
    const int cb = block(c.chroma_dc[0], 4, -1), cr = block(c.chroma_dc[1], 4, -1);
    if (kReport) {
      tc[GPUEC_TC_CHROMA_DC] = static_cast<uint8_t>(cb);
      tc[GPUEC_TC_CHROMA_DC + 1] = static_cast<uint8_t>(cr);
    }
  }
  if (cbp_chroma == 2)
    for (int ch = 0; ch < 2; ++ch)
      for (int b = 0; b < 4; ++b)
        cur.chroma[ch][b] = static_cast<uint8_t>(
            block(c.chroma_ac[ch * 4 + b] + 1, 15, nb.chroma(addr, cur, ch, b & 1, b >> 1)));
  if (kReport) {
    for (int b = 0; b < 16; ++b) tc[GPUEC_TC_LUMA + b] = cur.luma[kBlkToRaster[b]];
    for (int ch = 0; ch < 2; ++ch)
      for (int b = 0; b < 4; ++b) tc[GPUEC_TC_CHROMA_AC + ch * 4 + b] = cur.chroma[ch][b];
  }
}

}  // namespace

int encode_slice_ref(const gpuec_mb* recs, size_t n, const SliceLayout& layout, const uint8_t* skel,
                     MbTotals* totals, vle::BitWriter& bw) {
  const Neighbours nb{totals, layout.mb_width, SameSlice{layout.first_mb, layout.slice_of_mb, layout.slice_id}};
  int64_t pos = layout.skel_start;
  gpuec_mb scratch;
  for (size_t i = 0; i < n; ++i) {
    const gpuec_mb& m = recs[i];
    if (m.kind > GPUEC_MB_PCM) return -1;
    if (!layout.slice_of_mb) {
      if (m.mb_addr != layout.first_mb + static_cast<int>(i)) return -1;
    } else if (i == 0 ? m.mb_addr != layout.first_mb : m.mb_addr <= recs[i - 1].mb_addr) {
      return -1;
    } else if (m.mb_addr < 0 || m.mb_addr >= layout.n_mbs || layout.slice_of_mb[m.mb_addr] != layout.slice_id) {
      return -1;
    }
    const bool coded = m.kind == GPUEC_MB_NORMAL || m.kind == GPUEC_MB_I16x16;
    if (coded && m.coef_order > GPUEC_COEF_RASTER) return -1;
    if (m.kind != GPUEC_MB_SKIP) {
      if (m.skel_bit < pos || m.skel_bit > layout.skel_end) return -1;
      bw.copy_bits(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(m.skel_bit - pos));
      pos = m.skel_bit;
    }
    encode_mb<false>(scan_order_record(m, scratch), m.mb_addr, nb, totals[m.mb_addr], bw);
  }
  bw.copy_bits(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(layout.skel_end - pos));
  return 0;
}

namespace {

// The walk of a frame part that encode_frame_ref and encode_frame_words share: the slices checked, the
// totals outside every slice zeroed; then per slice begin_slice(k), for each coded macroblock i (record
// checked) mb(i, record, neighbours), and end_slice(k). False when the part is malformed or a call says so.
// A neighbour is available when it has the same slice index.
template <class BeginSlice, class Mb, class EndSlice>
bool walk_frame(const FrameAssembly& in, int mb_width, const int32_t* slice_index, MbTotals* totals,
                BeginSlice begin_slice, Mb mb, EndSlice end_slice) {
  if (in.n_mbs < 1 || in.n_slices < 1 || mb_width < 1) return false;
  // Macroblocks outside every slice add nothing and count as skipped for any neighbour that shares their
  // index (as on the GPU, which reads their TotalCoeff as 0 only if they are skipped: contract).
  int32_t next = 0;
  for (int k = 0; k < in.n_slices; ++k) {
    const FrameSlice& s = in.slices[k];
    if (s.first_mb < next || s.mb_count < 1 || int64_t{s.first_mb} + s.mb_count > in.n_mbs) return false;
    for (int32_t i = next; i < s.first_mb; ++i) totals[i] = MbTotals{};
    next = s.first_mb + s.mb_count;
  }
  for (int32_t i = next; i < in.n_mbs; ++i) totals[i] = MbTotals{};
  for (int k = 0; k < in.n_slices; ++k) {
    const FrameSlice& s = in.slices[k];
    begin_slice(k);
    for (int i = s.first_mb; i < s.first_mb + s.mb_count; ++i) {
      const gpuec_mb& m = in.records[i];
      if (m.kind == GPUEC_MB_SKIP) {
        totals[i] = MbTotals{};
        continue;
      }
      if (slice_index[i] != k || m.kind > GPUEC_MB_PCM || (m.kind != GPUEC_MB_PCM && m.coef_order > GPUEC_COEF_RASTER))
        return false;
      const MbNeighbours nb{i % mb_width > 0 && slice_index[i - 1] == k ? &totals[i - 1] : nullptr,
                            i >= mb_width && slice_index[i - mb_width] == k ? &totals[i - mb_width] : nullptr};
      if (!mb(i, m, nb)) return false;
    }
    if (!end_slice(k)) return false;
  }
  return true;
}

}  // namespace

// The frame coder's CPU path (cavlc/frame_coder.h), through vle::BitWriter and the reference block coder.
uint64_t encode_frame_ref(const FrameAssembly& in, int mb_width, const int32_t* slice_index, uint8_t* out,
                          uint64_t out_bytes, SliceResult* results, MbTotals* totals) {
  vle::BitWriter bw(out, static_cast<size_t>(out_bytes));
  gpuec_mb scratch;
  uint64_t start = 0;
  const bool ok = walk_frame(
      in, mb_width, slice_index, totals, [&](int) { start = bw.bits(); },
      [&](int i, const gpuec_mb& m, const MbNeighbours& nb) {
        bw.copy_bits(in.arena, in.lead[i].src_bit, in.lead[i].len);
        encode_mb<false>(scan_order_record(m, scratch), i, nb, totals[i], bw);
        return true;
      },
      [&](int k) {
        const FrameSlice& s = in.slices[k];
        bw.copy_bits(in.arena, s.tail_src_bit, s.tail_len);
        results[k] = SliceResult{start, bw.bits() - start};
        bw.put(0, static_cast<int>((32 - (bw.bits() & 31)) & 31));
        return true;
      });
  if (!ok) return UINT64_MAX;
  bw.flush();
  return bw.overflowed() ? UINT64_MAX : bw.bits();
}

}  // namespace cavlc

namespace cavlc {

int commit_mb_ref(const gpuec_mb& m, const uint8_t* kinds, const int32_t* slice_index, int mb_width, int32_t i,
                  MbTotals* totals, uint8_t tc[GPUEC_TC_COUNT], block_code::WordWriter& out) {
  const int cbp_luma = m.cbp & 15, cbp_chroma = m.cbp >> 4;
  if (m.kind == GPUEC_MB_SKIP || m.kind > GPUEC_MB_PCM || cbp_chroma > 2 ||
      (m.kind == GPUEC_MB_I16x16 && cbp_luma != 0 && cbp_luma != 15) ||
      (m.kind != GPUEC_MB_PCM && m.coef_order > GPUEC_COEF_RASTER))
    return -1;
  // A skipped neighbour's totals are 0 whatever totals[] holds (the commit of a skip writes nothing).
  static constexpr MbTotals kNone{};
  const int32_t id = slice_index[i];
  auto neighbour = [&](int32_t a) { return kinds[a] == GPUEC_MB_SKIP ? &kNone : &totals[a]; };
  const MbNeighbours nb{i % mb_width > 0 && slice_index[i - 1] == id ? neighbour(i - 1) : nullptr,
                        i >= mb_width && slice_index[i - mb_width] == id ? neighbour(i - mb_width) : nullptr};
  for (int b = 0; b < GPUEC_TC_COUNT; ++b) tc[b] = 0;
  bool overflow = false;
  gpuec_mb scratch;
  block_code::WordWriter w = out;  // a local: the writer's stores would alias a referenced one
  encode_mb<true>(scan_order_record(m, scratch), i, nb, totals[i], w, tc, &overflow);
  out = w;
  return overflow ? 1 : 0;
}

uint64_t encode_frame_words(const FrameAssembly& in, int mb_width, const int32_t* slice_index, uint8_t* out,
                            uint64_t out_bytes, SliceResult* results, MbTotals* totals) {
  block_code::WordWriter w{out};  // room checked before every piece
  auto room = [&](uint64_t piece_bits, uint64_t more) {
    return static_cast<uint64_t>(w.p - out) + piece_bits / 8 + more <= out_bytes;
  };
  gpuec_mb scratch;
  uint64_t start = 0;
  const bool ok = walk_frame(
      in, mb_width, slice_index, totals, [&](int) { start = w.finish(out); },
      [&](int i, const gpuec_mb& m, const MbNeighbours& nb) {
        if (!room(in.lead[i].len, kMaxMbWordBytes)) return false;
        copy_into(w, in.arena, in.lead[i].src_bit, in.lead[i].src_bit + in.lead[i].len);
        encode_mb<false>(scan_order_record(m, scratch), i, nb, totals[i], w);
        return true;
      },
      [&](int k) {
        const FrameSlice& s = in.slices[k];
        if (!room(s.tail_len, 2 + 4 + 8)) return false;  // the tail, the pad to 32 bits, the stores
        copy_into(w, in.arena, s.tail_src_bit, s.tail_src_bit + s.tail_len);
        const uint64_t end = w.finish(out);
        results[k] = SliceResult{start, end - start};
        const int pad = static_cast<int>((32 - (end & 31)) & 31);  // zero bits to the next 32-bit word
        if (pad) w.put(0, pad);
        return true;
      });
  return ok ? w.finish(out) : UINT64_MAX;
}

}  // namespace cavlc
