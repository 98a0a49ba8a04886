#include "cavlc/slice.h"

#include "cavlc/cavlc.h"
#include "neighbours.h"

namespace cavlc {
namespace {

bool luma_coded(const gpuec_mb& m, int blk) {
  if (m.kind == GPUEC_MB_I16x16) return (m.cbp & 15) != 0;
  return (m.cbp >> (blk >> 2)) & 1;
}

}  // namespace

int mb_totals(const gpuec_mb& m, uint8_t t[GPUEC_TC_COUNT]) {
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
    if (!luma_coded(m, b)) continue;
    const int16_t* l = i16 ? c.luma[b] + 1 : c.luma[b];
    const int n = i16 ? 15 : 16;
    t[GPUEC_TC_LUMA + b] = static_cast<uint8_t>(total_coeff(l, n));
    overflow |= level_overflow(l, n);
  }
  t[GPUEC_TC_LUMA_DC] = 0;
  if (i16) {
    t[GPUEC_TC_LUMA_DC] = static_cast<uint8_t>(total_coeff(c.luma_dc, 16));
    overflow |= level_overflow(c.luma_dc, 16);
  }
  for (int ch = 0; ch < 2; ++ch) {
    t[GPUEC_TC_CHROMA_DC + ch] = 0;
    if (cbp_chroma) {
      t[GPUEC_TC_CHROMA_DC + ch] = static_cast<uint8_t>(total_coeff(c.chroma_dc[ch], 4));
      overflow |= level_overflow(c.chroma_dc[ch], 4);
    }
  }
  for (int b = 0; b < 8; ++b) {
    t[GPUEC_TC_CHROMA_AC + b] = 0;
    if (cbp_chroma == 2) {
      t[GPUEC_TC_CHROMA_AC + b] = static_cast<uint8_t>(total_coeff(c.chroma_ac[b] + 1, 15));
      overflow |= level_overflow(c.chroma_ac[b] + 1, 15);
    }
  }
  return overflow ? 1 : 0;
}

namespace {

// In one slice a macroblock before first_mb belongs to another slice (x264 slices are raster runs).
struct SameSlice {
  int first_mb;
  bool operator()(int, int nb) const { return nb >= first_mb; }
};
using Neighbours = NcPredictor<SameSlice>;

// Writes one macroblock's residual (7.3.5.3) and fills its totals as neighbours will see them.
void encode_mb(const gpuec_mb& m, const Neighbours& nb, MbTotals& cur, vle::BitWriter& bw) {
  cur = MbTotals{};
  if (m.kind == GPUEC_MB_SKIP) return;
  if (m.kind == GPUEC_MB_PCM) {
    for (auto& v : cur.luma) v = 16;
    for (auto& c : cur.chroma)
      for (auto& v : c) v = 16;
    bw.align_zero();  // pcm_alignment_zero_bit
    for (uint8_t s : m.u.pcm) bw.put(s, 8);
    return;
  }
  const auto& c = m.u.coef;
  const int addr = m.mb_addr;
  const int cbp_chroma = m.cbp >> 4;
  if (m.kind == GPUEC_MB_I16x16) {
    write_block(bw, c.luma_dc, 16, nb.luma(addr, cur, 0, 0));  // block 0's neighbours
    if (m.cbp & 15)
      for (int b = 0; b < 16; ++b) {
        const int r = kBlkToRaster[b];
        cur.luma[r] = static_cast<uint8_t>(
            write_block(bw, c.luma[b] + 1, 15, nb.luma(addr, cur, r & 3, r >> 2)));
      }
  } else {
    for (int b = 0; b < 16; ++b) {
      if (!((m.cbp >> (b >> 2)) & 1)) continue;
      const int r = kBlkToRaster[b];
      cur.luma[r] =
          static_cast<uint8_t>(write_block(bw, c.luma[b], 16, nb.luma(addr, cur, r & 3, r >> 2)));
    }
  }
  if (cbp_chroma) {
    write_block(bw, c.chroma_dc[0], 4, -1);
    write_block(bw, c.chroma_dc[1], 4, -1);
  }
  if (cbp_chroma == 2)
    for (int ch = 0; ch < 2; ++ch)
      for (int b = 0; b < 4; ++b)
        cur.chroma[ch][b] = static_cast<uint8_t>(
            write_block(bw, c.chroma_ac[ch * 4 + b] + 1, 15, nb.chroma(addr, cur, ch, b & 1, b >> 1)));
}

}  // namespace

int encode_slice_ref(const gpuec_mb* recs, size_t n, const SliceLayout& layout, const uint8_t* skel,
                     MbTotals* totals, vle::BitWriter& bw) {
  const Neighbours nb{totals, layout.mb_width, SameSlice{layout.first_mb}};
  int64_t pos = layout.skel_start;
  for (size_t i = 0; i < n; ++i) {
    const gpuec_mb& m = recs[i];
    if (m.mb_addr != layout.first_mb + static_cast<int>(i) || m.kind > GPUEC_MB_PCM) return -1;
    if (m.kind != GPUEC_MB_SKIP) {
      if (m.skel_bit < pos || m.skel_bit > layout.skel_end) return -1;
      bw.copy_bits(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(m.skel_bit - pos));
      pos = m.skel_bit;
    }
    encode_mb(m, nb, totals[m.mb_addr], bw);
  }
  bw.copy_bits(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(layout.skel_end - pos));
  return 0;
}

}  // namespace cavlc
