// cavlc/slice.h: CAVLC residual coding of a whole slice from macroblock records, spliced into the
// encoder's skeleton (the CPU reference of the entropy stage).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/mb.h"
#include "vle/bitwriter.h"

namespace cavlc {

// Upper bound of the residual bits of one macroblock: 27 blocks, each at most 16 (coeff_token) + 3
// (signs) + 16 * 28 (escaped levels) + 9 (total_zeros) + 15 * 11 (run_before) bits; I_PCM is 7 + 3072.
constexpr int64_t kMaxMbResidualBits = 27 * 641;

// TotalCoeff of every block of a macroblock as its neighbours see it (9.2.1): blocks not coded under
// the cbp are 0, a skipped macroblock is all 0, an I_PCM macroblock all 16. Luma in raster order of the
// 4x4 blocks (index y * 4 + x), chroma raster 2x2 per component.
struct MbTotals {
  uint8_t luma[16];
  uint8_t chroma[2][4];
};

// Fills totals[GPUEC_TC_COUNT] (luma4x4BlkIdx order, see cavlc/mb.h) for record m and returns whether a
// coded level overflows baseline CAVLC (cavlc::level_overflow on any coded block, its levels in scan
// order whatever m.coef_order). Returns -1, totals untouched, for a malformed record (unknown kind, cbp
// luma > 15 or chroma > 2, Intra16x16 cbp luma not 0 or 15, a coded record's coef_order not 0 or 1).
int mb_totals(const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]);

// The record with its levels in scan order: m itself, unless m is a GPUEC_MB_NORMAL or GPUEC_MB_I16x16
// record with coef_order GPUEC_COEF_RASTER; then scratch (not m) becomes m with every 4x4 block permuted
// to scan order (kRasterOfScan) and coef_order GPUEC_COEF_SCAN, and is returned. Other coef_order values
// are returned unchanged (mb_totals rejects them).
const gpuec_mb& scan_order_record(const gpuec_mb& m, gpuec_mb& scratch);

struct SliceLayout {
  int mb_width;     // frame width in macroblocks
  int first_mb;     // first macroblock of the slice; neighbours before it are unavailable
  int64_t skel_start;  // first skeleton bit of the slice (byte-aligned)
  int64_t skel_end;    // bit after the skeleton's last bit
  // Slices that are not raster runs (slice groups, FMO): when slice_of_mb is set, it gives the slice of
  // every macroblock of the picture (n_mbs entries), the slice's macroblocks are those with slice_id in
  // increasing address order (the first one first_mb), and a neighbour is available iff it is in the
  // same slice. nullptr: the slice is the raster run first_mb, first_mb + 1, ... (x264's slices).
  const int32_t* slice_of_mb = nullptr;
  int32_t slice_id = 0;
  int n_mbs = 0;
};

// Writes the slice: skeleton bits [skel_start, skel_end) of `skel`, with the residual of record i
// inserted at recs[i].skel_bit. `recs` holds every macroblock of the slice in order (mb_addr
// first_mb, first_mb + 1, ...; with slice_of_mb: first_mb, then increasing addresses of the slice), each
// in scan or raster order (coef_order). `totals` is scratch indexed by mb_addr, with room up to the
// slice's last address. Returns 0, or -1 when the records are inconsistent (order, positions, a
// macroblock of another slice, malformed: unknown kind or coef_order).
int encode_slice_ref(const gpuec_mb* recs, size_t n, const SliceLayout& layout, const uint8_t* skel,
                     MbTotals* totals, vle::BitWriter& bw);

}  // namespace cavlc
