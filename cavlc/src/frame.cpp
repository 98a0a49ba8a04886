#include "cavlc/frame.h"

#include <vector>

#include "cavlc/cavlc.h"
#include "cavlc/slice.h"
#include "neighbours.h"

namespace cavlc {
namespace {

// TotalCoeff of every block as neighbours see it (slice.h MbTotals), from the record alone.
int neighbour_totals(const gpuec_mb& m, MbTotals* t) {
  uint8_t tc[GPUEC_TC_COUNT];
  if (mb_totals(m, tc) < 0) return -1;  // an overflow verdict does not matter here
  for (int b = 0; b < 16; ++b) t->luma[kBlkToRaster[b]] = tc[GPUEC_TC_LUMA + b];
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 4; ++b) t->chroma[c][b] = tc[GPUEC_TC_CHROMA_AC + c * 4 + b];
  return 0;
}

// Any layout: neighbours are available when they carry the same slice id.
struct SameSliceId {
  const int32_t* slice_id;
  bool operator()(int addr, int nb) const { return slice_id[nb] == slice_id[addr]; }
};

// Writes one block into its slot as whole 32-bit words; returns its length in bits.
uint16_t code_slot(uint8_t* slot, const int16_t* coeffs, int n, int nc) {
  vle::BitWriter bw(slot, kSlotBytes);
  write_block(bw, coeffs, n, nc);
  const uint64_t bits = bw.bits();
  bw.put(0, static_cast<int>((32 - (bits & 31)) & 31));
  bw.flush();
  return static_cast<uint16_t>(bits);
}

}  // namespace

void tc_record(const uint8_t totals[GPUEC_TC_COUNT], uint8_t record[kTcRecordBytes]) {
  for (int b = 0; b < 16; ++b) record[kBlkToRaster[b]] = totals[GPUEC_TC_LUMA + b];
  for (int i = 0; i < 8; ++i) record[16 + i] = totals[GPUEC_TC_CHROMA_AC + i];
  record[24] = totals[GPUEC_TC_LUMA_DC];
  record[25] = totals[GPUEC_TC_CHROMA_DC];
  record[26] = totals[GPUEC_TC_CHROMA_DC + 1];
  for (int i = 27; i < kTcRecordBytes; ++i) record[i] = 0;
}

int code_frame_ref(const gpuec_mb* recs, int mb_width, int mb_height, const int32_t* slice_id, uint8_t* bits,
                   uint16_t* len) {
  const int nmb = mb_width * mb_height;
  std::vector<MbTotals> totals(static_cast<size_t>(nmb));
  for (int a = 0; a < nmb; ++a)
    if (recs[a].mb_addr != a || neighbour_totals(recs[a], &totals[a]) < 0) return -1;
  const NcPredictor<SameSliceId> f{totals.data(), mb_width, SameSliceId{slice_id}};
  gpuec_mb scratch;
  for (int a = 0; a < nmb; ++a) {
    const gpuec_mb& m = scan_order_record(recs[a], scratch);
    uint16_t* l = len + static_cast<size_t>(a) * kMbSlots;
    uint8_t* slots = bits + static_cast<size_t>(a) * kMbSlots * kSlotBytes;
    for (int s = 0; s < kMbSlots; ++s) l[s] = 0;
    if (m.kind == GPUEC_MB_SKIP || m.kind == GPUEC_MB_PCM) continue;
    auto slot = [&](int s) { return slots + s * kSlotBytes; };
    const auto& c = m.u.coef;
    const int cbp_chroma = m.cbp >> 4;
    const bool i16 = m.kind == GPUEC_MB_I16x16;
    if (i16) l[kSlotLumaDC] = code_slot(slot(kSlotLumaDC), c.luma_dc, 16, f.luma(a, totals[a], 0, 0));
    for (int b = 0; b < 16; ++b) {
      const bool coded = i16 ? (m.cbp & 15) != 0 : ((m.cbp >> (b >> 2)) & 1) != 0;
      if (!coded) continue;
      const int r = kBlkToRaster[b];
      l[kSlotLuma + b] = code_slot(slot(kSlotLuma + b), i16 ? c.luma[b] + 1 : c.luma[b], i16 ? 15 : 16,
                                   f.luma(a, totals[a], r & 3, r >> 2));
    }
    if (cbp_chroma)
      for (int ch = 0; ch < 2; ++ch) l[kSlotChromaDC + ch] = code_slot(slot(kSlotChromaDC + ch), c.chroma_dc[ch], 4, -1);
    if (cbp_chroma == 2)
      for (int ch = 0; ch < 2; ++ch)
        for (int b = 0; b < 4; ++b)
          l[kSlotChromaAC + ch * 4 + b] = code_slot(slot(kSlotChromaAC + ch * 4 + b), c.chroma_ac[ch * 4 + b] + 1,
                                                    15, f.chroma(a, totals[a], ch, b & 1, b >> 1));
  }
  return 0;
}

}  // namespace cavlc
