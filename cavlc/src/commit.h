// cavlc/src/commit.h (private): the frame coder's CPU path one macroblock at a time, for the cpu backend's
// streamed commit (cavlc/frame_coder.h, FrameCoder::commit_streamed): each macroblock's residual coded
// when it is committed, straight into the slice's output after its skeleton piece. The bits equal
// encode_frame_ref's (its definition).
#pragma once

#include <cstdint>

#include "block_code.h"
#include "cavlc/frame_coder.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"
#include "vle/bitwriter.h"

namespace cavlc {

// The room one macroblock may need in a word writer's output after its skeleton piece: its residual or
// its I_PCM alignment and samples, whichever is longer, and the 8 bytes the writer's stores reach past
// its last byte.
constexpr uint64_t kMaxMbWordBytes =
    (static_cast<uint64_t>(kMaxMbResidualBits / 8) + 1 > sizeof(gpuec_mb{}.u.pcm) + 1
         ? static_cast<uint64_t>(kMaxMbResidualBits / 8) + 1
         : sizeof(gpuec_mb{}.u.pcm) + 1) +
    2 + 8;

// Appends bits [from, to) of src (MSB first; src readable 8 bytes past the byte of bit to - 1) to w.
inline void copy_into(block_code::WordWriter& w, const uint8_t* src, uint64_t from, uint64_t to) {
  while (to - from >= 48) {
    w.put_long(vle::load_be64(src + (from >> 3)) << (from & 7) >> 16, 48);
    from += 48;
  }
  if (to > from) {
    const int len = static_cast<int>(to - from);
    w.put_long(vle::load_be64(src + (from >> 3)) << (from & 7) >> (64 - len), len);
  }
}

// Codes coded macroblock i of a frame part mb_width macroblocks wide, whose record is m (slice_index[0..i]
// set; its left and top neighbours with the same slice index are committed or skipped: their kind in
// kinds, one byte a macroblock, as encode_frame_ref sees them in the records), appending its residual to
// out (I_PCM: its alignment and samples; room for kMaxMbWordBytes). Sets totals[i] (as a neighbour sees it) and tc (mb_totals's record). Returns
// 0, 1 on a level overflow (out then holds a truncated code: drop it), -1 for a malformed record (as
// mb_totals, or a skipped one).
int commit_mb_ref(const gpuec_mb& m, const uint8_t* kinds, const int32_t* slice_index, int mb_width, int32_t i,
                  MbTotals* totals, uint8_t tc[GPUEC_TC_COUNT], block_code::WordWriter& out);

// encode_frame_ref's bits and results through the block coder's word writer (the cpu backend's submit:
// the batches of the re-entropy and the CUDA fallback). in.arena must be readable 8 bytes past its last
// bit. out_bytes: what out holds (the writer's 8-byte stores included: a macroblock needs kMaxMbWordBytes
// free after its skeleton piece; a part of assemble_frame_bound_bits fits in that bound's bytes and 16
// more). The same refusals as encode_frame_ref (UINT64_MAX), out too small included.
uint64_t encode_frame_words(const FrameAssembly& in, int mb_width, const int32_t* slice_index, uint8_t* out,
                            uint64_t out_bytes, SliceResult* results, MbTotals* totals);

}  // namespace cavlc
