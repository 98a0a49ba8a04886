// cavlc/frame.h: CAVLC codes of every residual block of a frame, one code slot per block — the CPU
// twin of the CAVLCU kernel (cavlc/frame_cuda.h). Slice assembly (skeleton + residual + I_PCM) is a
// separate step on top of these slots.
//
// Input: one gpuec_mb record per macroblock of the frame in raster order (records[a].mb_addr == a),
// and a slice id per macroblock. A neighbour (left, top) is available when it is inside the frame
// and has the same slice id (any layout: several slices, slices starting mid-row, FMO-like ids).
// Neighbour TotalCoeff as in cavlc/slice.h (MbTotals): skipped 0, I_PCM 16, uncoded blocks 0.
// Each record's levels may be in scan or raster order (cavlc/mb.h coef_order; any mix in a frame):
// a raster record codes to the same slots as its scan-order twin.
//
// Output: kMbSlots slots per macroblock, in coding order, so that a macroblock's residual is the
// concatenation of its slots 0..26 (slots that are not coded have length 0):
//   slot 0        Intra16x16 luma DC
//   slots 1..16   luma blocks in luma4x4BlkIdx order (4x4, or Intra16x16 AC)
//   slots 17, 18  chroma DC Cb, Cr
//   slots 19..26  chroma AC Cb 0..3, Cr 0..3
// I_PCM and skipped macroblocks have every slot empty (I_PCM samples are placed by the assembly).
// Slot (mb, s) holds len[mb * kMbSlots + s] bits at bits + (mb * kMbSlots + s) * kSlotBytes, most
// significant bit first (the vle/bitwriter.h stream format), written as whole 32-bit words: bytes
// [0, 4 * ceil(len / 32)) of the slot are written (zero bits after the code), the rest of the slot is
// not touched.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/mb.h"

namespace cavlc {

constexpr int kMbSlots = 27;
constexpr int kSlotBytes = 96;  // a block code is at most 641 bits (cavlc/slice.h)

constexpr int kSlotLumaDC = 0;
constexpr int kSlotLuma = 1;
constexpr int kSlotChromaDC = 17;
constexpr int kSlotChromaAC = 19;

// The 32-byte TotalCoeff record of a macroblock as the CAVLCU kernel's neighbour lookups read it
// (cavlc/frame_cuda.h; encode_frame_cuda takes these instead of counting on the GPU), from the totals
// cavlc::mb_totals gives for its record (all zero for a skipped macroblock): bytes 0..15 luma blocks in
// raster order of the 4x4 grid (x + 4 * y), 16..23 chroma AC Cb 0..3, Cr 0..3, 24 luma DC, 25..26 chroma
// DC Cb, Cr, 27..31 zero.
constexpr int kTcRecordBytes = 32;
void tc_record(const uint8_t totals[GPUEC_TC_COUNT], uint8_t record[kTcRecordBytes]);

// Codes every block of the frame. Returns 0, or -1 for inconsistent input (a record whose mb_addr
// is not its index, or a malformed record: see cavlc::mb_totals).
int code_frame_ref(const gpuec_mb* records, int mb_width, int mb_height, const int32_t* slice_id,
                   uint8_t* bits, uint16_t* len);

}  // namespace cavlc
