// tests/common/slice_assembly.h: one slice assembled from code_frame_ref's slots (cavlc/frame.h), slice by
// slice: the tests' intermediate oracle between the slot coder and the frame assembly (assemble_frame_ref).
// Gives exactly the slice encode_slice_ref writes. Test code (it was cavlc/assemble.h; no production code
// calls it).
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

#include "cavlc/frame.h"
#include "cavlc/mb.h"
#include "vle/bitwriter.h"

namespace cavlc_test {

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

// The segments of a slice, in order, with I_PCM alignment lengths resolved from the output positions. Returns
// false for inconsistent records (insertion points out of order or outside the skeleton). `slot_bits`/`slot_len`
// are code_frame_ref's outputs for the whole frame.
// assemble_slice_ref writes the slice (segments concatenated) into out; returns its length in bits, or -1 (bad
// records or out_bytes too small).
inline bool slice_segments(const gpuec_mb* recs, const uint8_t* slot_bits, const uint16_t* slot_len, const SliceSpan& span,
                    const uint8_t* skel, std::vector<SliceSegment>* out) {
  out->clear();
  int64_t pos = span.skel_start;  // next skeleton bit
  uint64_t at = 0;                // output bits so far
  auto add = [&](const uint8_t* src, uint64_t src_bit, uint64_t len) {
    if (len) out->push_back({src, src_bit, static_cast<uint32_t>(len)});
    at += len;
  };
  for (int a = span.first_mb; a <= span.last_mb; ++a) {
    const gpuec_mb& m = recs[a];
    if (m.mb_addr != a) return false;
    if (m.kind == GPUEC_MB_SKIP) continue;
    if (m.skel_bit < pos || m.skel_bit > span.skel_end) return false;
    add(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(m.skel_bit - pos));
    pos = m.skel_bit;
    if (m.kind == GPUEC_MB_PCM) {
      add(nullptr, 0, (8 - (at & 7)) & 7);  // pcm_alignment_zero_bit
      add(m.u.pcm, 0, 384 * 8);
      continue;
    }
    for (int s = 0; s < cavlc::kMbSlots; ++s) {
      const size_t slot = static_cast<size_t>(a) * cavlc::kMbSlots + s;
      add(slot_bits + slot * cavlc::kSlotBytes, 0, slot_len[slot]);
    }
  }
  if (span.skel_end < pos) return false;
  add(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(span.skel_end - pos));
  return true;
}

inline int64_t assemble_slice_ref(const gpuec_mb* recs, const uint8_t* slot_bits, const uint16_t* slot_len,
                           const SliceSpan& span, const uint8_t* skel, uint8_t* out, size_t out_bytes) {
  std::vector<SliceSegment> segs;
  if (!slice_segments(recs, slot_bits, slot_len, span, skel, &segs)) return -1;
  vle::BitWriter bw(out, out_bytes);
  for (const SliceSegment& s : segs) {
    if (s.src) bw.copy_bits(s.src, s.src_bit, s.len);
    else bw.put(0, static_cast<int>(s.len));
  }
  const int64_t bits = static_cast<int64_t>(bw.bits());
  bw.flush();
  return bw.overflowed() ? -1 : bits;
}

}  // namespace cavlc_test
