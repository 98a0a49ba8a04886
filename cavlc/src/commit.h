// cavlc/src/commit.h (private): the frame coder's CPU path one macroblock at a time, for the cpu backend's
// streamed commit (cavlc/frame_coder.h, FrameCoder::commit_streamed): each macroblock's residual coded
// when it is committed, straight into the slice's output after its skeleton piece. The bits equal
// encode_frame_ref's (its definition).
#pragma once

#include <cstdint>

#include "block_code.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"

namespace cavlc {

// Codes coded macroblock i of a frame part mb_width macroblocks wide, whose record is m (slice_index[0..i]
// set; its left and top neighbours with the same slice index are committed or skipped: their kind in
// records, as encode_frame_ref sees them), appending its residual to out (room for kMaxMbResidualBits bits
// and 8 bytes more), nothing for I_PCM (the caller writes the alignment and the samples). Sets totals[i]
// (as a neighbour sees it) and tc (mb_totals's record). Returns 0, 1 on a level overflow (out then holds
// a truncated code: drop it), -1 for a malformed record (as mb_totals, or a skipped one).
int commit_mb_ref(const gpuec_mb& m, const gpuec_mb* records, const int32_t* slice_index, int mb_width, int32_t i,
                  MbTotals* totals, uint8_t tc[GPUEC_TC_COUNT], block_code::WordWriter& out);

}  // namespace cavlc
