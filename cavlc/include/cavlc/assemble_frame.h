// cavlc/assemble_frame.h: assembly of every slice of a frame part at once from the frame coder's slots
// (cavlc/frame.h), in the form the GPU does it (one submission per frame). CPU twin assemble_frame_ref
// here; the CUDA twin assemble_frame_cuda (same contract, device pointers) in cavlc/assemble_frame_cuda.h.
//
// All sources live in one byte stream, the ARENA (MSB-first bytes, the vle/bitwriter.h format); every
// source position below is an arena bit. The arena holds the slot bits of code_frame_ref/_cuda, the
// records (I_PCM samples are read from there), the skeleton bits of the slices and some zero bits.
//
// Frame part: n_mbs macroblocks 0..n_mbs-1 (records[i], slots i * kMbSlots ..); slice k covers
// macroblocks [slices[k].first_mb, first_mb + mb_count) in that order. Slice k's bits are, as in
// tests/common/slice_assembly.h (slice_segments), for each of its macroblocks that is not skipped:
//   lead[i]: lead[i].len skeleton bits from arena bit lead[i].src_bit (the skeleton between the
//            previous coded macroblock's insertion point, or the slice start, and this one's),
//   then the residual: slots 0..26 of macroblock i (GPUEC_MB_NORMAL / I16x16), or, for GPUEC_MB_PCM,
//            zero bits up to the next byte boundary of the slice's OUTPUT position (pcm_alignment_zero_bit)
//            and the 3072 bits of records[i].u.pcm;
// and finally tail_len skeleton bits from tail_src_bit (the last mb_skip_run and anything after the last
// insertion point). Skipped macroblocks (kind GPUEC_MB_SKIP) add nothing; their lead is ignored.
//
// Output: the slices in order, slice k starting at bit results[k].out_bit, a multiple of 32 (so byte
// offset out_bit / 8 is 4-byte aligned), with results[k].bits bits, followed by zero bits up to the next
// multiple of 32 where slice k + 1 starts. The frame total is the bit after the last slice's padding
// (sum of ceil32(bits)); packed_bytes(total) bytes of `out` are written (whole 32-bit words), nothing else.
// Slice positions: bit j of slice k is stream bit out_bit + j of out (vle/bitwriter.h format), so slice k's
// RBSP is bytes [out_bit / 8, out_bit / 8 + ceil8(bits) / 8) of out with the last byte zero-padded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/mb.h"

namespace cavlc {

// The skeleton piece in front of a coded macroblock's residual.
struct MbLead {
  uint64_t src_bit;  // arena bit
  uint32_t len;      // bits
  uint32_t reserved;
};

struct FrameSlice {
  int32_t first_mb;       // first macroblock of the slice in the frame part
  int32_t mb_count;       // >= 1
  uint64_t tail_src_bit;  // arena bit of the skeleton after the last insertion point
  uint32_t tail_len;      // bits
  uint32_t reserved;
};

struct SliceResult {
  uint64_t out_bit;  // where the slice starts in the frame output (multiple of 32)
  uint64_t bits;     // slice length in bits (without the padding)
};

// Input of one frame part. Host pointers for assemble_frame_ref, device pointers for assemble_frame_cuda.
struct FrameAssembly {
  const uint8_t* arena;      // 4-byte aligned; readable up to the next 4-byte boundary after every source
  uint64_t records_bit;      // arena bit of records[0] (n_mbs gpuec_mb records, 832 bytes each)
  uint64_t slots_bit;        // arena bit of slot 0 (n_mbs * kMbSlots slots of kSlotBytes, cavlc/frame.h)
  uint64_t zero_bit;         // arena bit of at least 8 zero bits (not read by either twin: they make the
                             // I_PCM alignment and slice padding zeros themselves)
  const gpuec_mb* records;   // == arena + records_bit / 8 (kind is read here)
  const uint16_t* slot_len;  // [n_mbs * kMbSlots] slot lengths from the frame coder
  const MbLead* lead;        // [n_mbs]
  const FrameSlice* slices;  // [n_slices]
  int32_t n_mbs;             // >= 1
  int32_t n_slices;          // >= 1
};

// Upper bound of the frame output in bits for `skeleton_bits` skeleton bits in all and `coded_mbs`
// macroblocks that are not skipped (every slice padded to 32 bits).
constexpr uint64_t assemble_frame_bound_bits(uint64_t skeleton_bits, uint64_t coded_mbs, uint64_t n_slices) {
  return skeleton_bits + coded_mbs * (27 * 641) + n_slices * 32;
}

// CPU twin. Writes results[0, n_slices) and out[0, packed_bytes(total)) and returns total bits; returns
// UINT64_MAX (nothing written to out) when a slice range is outside [0, n_mbs) or slices overlap or are
// out of order, or out_bytes < packed_bytes(total) (then the results are written all the same).
uint64_t assemble_frame_ref(const FrameAssembly& in, uint8_t* out, uint64_t out_bytes, SliceResult* results);

}  // namespace cavlc
