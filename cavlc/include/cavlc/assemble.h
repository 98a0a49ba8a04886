// cavlc/assemble.h: slice assembly from the frame coder's slots (cavlc/frame.h) — the CPU twin of the
// GPU slice assembly (scan + pack). Gives exactly the slice encode_slice_ref writes.
//
// A slice is the sequence of segments: skeleton bits [skel_start, rec.skel_bit) before each coded
// macroblock, then that macroblock's residual (its 27 slots in order; for I_PCM zero bits up to the
// next byte boundary of the OUTPUT position, then the 384 samples), and the skeleton bits after the
// last macroblock up to skel_end. Skipped macroblocks add nothing. Because an I_PCM segment ends
// byte-aligned, the segment offsets are a scan under x -> ceil8(x + a) + b steps, not a plain sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cavlc/mb.h"

namespace cavlc {

struct SliceSpan {
  int first_mb;
  int last_mb;         // inclusive
  int64_t skel_start;  // bit of the skeleton buffer where the slice starts (byte-aligned)
  int64_t skel_end;    // bit after the skeleton's last bit
};

// One piece of a slice: len bits from src starting at stream bit src_bit (MSB-first bytes); src ==
// nullptr means zero bits (I_PCM alignment).
struct SliceSegment {
  const uint8_t* src;
  uint64_t src_bit;
  uint32_t len;
};

// The segments of a slice, in order, with I_PCM alignment lengths resolved from the output
// positions. Returns false for inconsistent records (insertion points out of order or outside the
// skeleton). `slot_bits`/`slot_len` are code_frame_ref's outputs for the whole frame.
bool slice_segments(const gpuec_mb* records, const uint8_t* slot_bits, const uint16_t* slot_len,
                    const SliceSpan& span, const uint8_t* skel, std::vector<SliceSegment>* out);

// Writes the slice (segments concatenated) into out; returns its length in bits, or -1 (bad
// records or out_bytes too small).
int64_t assemble_slice_ref(const gpuec_mb* records, const uint8_t* slot_bits, const uint16_t* slot_len,
                           const SliceSpan& span, const uint8_t* skel, uint8_t* out, size_t out_bytes);

}  // namespace cavlc
